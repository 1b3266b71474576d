import { Agent as HttpAgent, IncomingMessage, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, isForbiddenAddress } from './address-guard';

export interface SendOptions {
  timeoutMs: number;
  maxResponseBytes: number;
  allowPrivate: boolean;
}

export interface SendResult {
  succeeded: boolean;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  /** The first 1 KB of the answer. */
  responseBody: string | null;
}

const KEPT_RESPONSE_BYTES = 1024;

/**
 * POSTs one signed message. A 2xx answer within the timeout is a success; anything else (another
 * status, a redirect, which is never followed, a refused address, a timeout) is a failed attempt.
 * The whole exchange, connect to last byte read, is bounded by the timeout; the answer is read up
 * to maxResponseBytes.
 */
export class WebhookSender {
  private readonly httpAgent: HttpAgent;
  private readonly httpsAgent: HttpsAgent;

  constructor(private readonly options: SendOptions) {
    // The lookup is the agents': every connection, a reused name included, is checked on its address.
    const lookup = options.allowPrivate ? undefined : guardedLookup;
    this.httpAgent = new HttpAgent({ keepAlive: true, lookup });
    this.httpsAgent = new HttpsAgent({ keepAlive: true, lookup });
  }

  async send(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    const started = Date.now();
    const finish = (partial: Omit<SendResult, 'latencyMs'>): SendResult => ({
      ...partial,
      latencyMs: Date.now() - started,
    });
    const refusal = this.literalAddressRefusal(url);
    if (refusal) return finish({ succeeded: false, statusCode: null, error: refusal, responseBody: null });
    try {
      const { statusCode, responseBody } = await this.post(url, headers, body);
      const succeeded = statusCode >= 200 && statusCode < 300;
      return finish({ succeeded, statusCode, error: succeeded ? null : `HTTP ${statusCode}`, responseBody });
    } catch (error) {
      return finish({ succeeded: false, statusCode: null, error: (error as Error).message, responseBody: null });
    }
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  /** An address in the URL itself is connected to without a lookup: it is checked here. */
  private literalAddressRefusal(url: string): string | undefined {
    if (this.options.allowPrivate) return undefined;
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    return isIP(host) !== 0 && isForbiddenAddress(host) ? `${host} is a forbidden address` : undefined;
  }

  private post(
    url: string,
    headers: Record<string, string>,
    body: string,
  ): Promise<{ statusCode: number; responseBody: string }> {
    // The parsed protocol, as the address guard judged it: a scheme is case-insensitive (HTTPS:// is https:).
    const target = new URL(url);
    const https = target.protocol === 'https:';
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (error: Error | null, answer?: { statusCode: number; responseBody: string }) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) reject(error);
        else resolve(answer!);
      };
      const request = (https ? httpsRequest : httpRequest)(target, {
        method: 'POST',
        agent: https ? this.httpsAgent : this.httpAgent,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      });
      const timer = setTimeout(
        () => request.destroy(new Error(`no answer within ${this.options.timeoutMs} ms`)),
        this.options.timeoutMs,
      );
      request.on('error', (error) => settle(error));
      request.on('response', (response) => {
        readBounded(response, this.options.maxResponseBytes, (error, bytes) =>
          settle(error, { statusCode: response.statusCode ?? 0, responseBody: firstKilobyte(bytes) }),
        );
      });
      request.end(body);
    });
  }
}

/** The answer's bytes, up to `limit`; a longer answer is cut there (settled first) and its connection closed. */
function readBounded(response: IncomingMessage, limit: number, done: (error: Error | null, bytes: Buffer) => void) {
  const chunks: Buffer[] = [];
  let size = 0;
  response.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    size += chunk.length;
    if (size < limit) return;
    done(null, Buffer.concat(chunks).subarray(0, limit));
    response.destroy();
  });
  response.on('end', () => done(null, Buffer.concat(chunks)));
  response.on('error', (error) => done(error, Buffer.alloc(0)));
  response.on('aborted', () => done(new Error('the answer was cut off'), Buffer.alloc(0)));
}

function firstKilobyte(bytes: Buffer): string {
  return bytes
    .subarray(0, KEPT_RESPONSE_BYTES)
    .toString('utf8')
    .replace(/\uFFFD+$/, '');
}
