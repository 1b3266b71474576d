import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the receiver got, verified (or not) with the standardwebhooks library. */
export interface ReceivedWebhook {
  webhookId: string;
  attempt: number;
  signatures: number;
  verified: boolean;
  body: { type: string; timestamp: string; data: Record<string, unknown> } | null;
  status: number;
  receivedAt: number;
}

/** What to answer: a status, after a delay (a delay past the service's timeout is a timeout). */
export interface Answer {
  status: number;
  delayMs?: number;
  body?: string;
}

export type Behaviour = (webhookId: string, attempt: number) => Answer;

/**
 * A receiver on a loopback port that verifies every request with `Webhook.verify`, answers as its
 * behaviour says, and can be down (refusing connections) for a while. It counts the sends of each
 * (webhook-id, attempt) and the most sends of one message it ever had in flight at once.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  secrets: string[] = [];
  behaviour: Behaviour = () => ({ status: 200 });
  maxConcurrentPerMessage = 0;
  private readonly inFlight = new Map<string, number>();
  private readonly sockets = new Set<Socket>();
  private server?: Server;
  private port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Down: the port refuses connections until start() again (on the same port). */
  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }

  accepted(): ReceivedWebhook[] {
    return this.received.filter((r) => r.verified && r.status >= 200 && r.status < 300);
  }

  acceptedIds(): Set<string> {
    return new Set(this.accepted().map((r) => r.webhookId));
  }

  /** The (webhook-id, attempt) pairs that arrived more than once. */
  repeatedAttempts(): string[] {
    const seen = new Map<string, number>();
    for (const r of this.received)
      seen.set(`${r.webhookId}#${r.attempt}`, (seen.get(`${r.webhookId}#${r.attempt}`) ?? 0) + 1);
    return [...seen].filter(([, n]) => n > 1).map(([key]) => key);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const headers = req.headers as Record<string, string>;
    const webhookId = headers['webhook-id'] ?? '';
    const attempt = Number(headers['webhook-attempt']);
    const now = (this.inFlight.get(webhookId) ?? 0) + 1;
    this.inFlight.set(webhookId, now);
    this.maxConcurrentPerMessage = Math.max(this.maxConcurrentPerMessage, now);
    try {
      const body = this.verify(raw, headers);
      const answer = body ? this.behaviour(webhookId, attempt) : { status: 400, body: 'bad signature' };
      this.received.push({
        webhookId,
        attempt,
        signatures: (headers['webhook-signature'] ?? '').split(' ').length,
        verified: body !== null,
        body,
        status: answer.status,
        receivedAt: Date.now(),
      });
      if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
      res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body ?? `answer ${answer.status}`);
    } finally {
      this.inFlight.set(webhookId, (this.inFlight.get(webhookId) ?? 1) - 1);
    }
  }

  /** Verified with any of the secrets the receiver knows, as a receiver does during a rotation. */
  private verify(raw: string, headers: Record<string, string>): ReceivedWebhook['body'] {
    for (const secret of this.secrets) {
      try {
        return new Webhook(secret).verify(raw, headers) as ReceivedWebhook['body'];
      } catch {
        // the next secret
      }
    }
    return null;
  }
}
