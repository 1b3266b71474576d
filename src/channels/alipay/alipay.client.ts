import { KeyObject, sign } from 'node:crypto';
import { saveToTempFile } from '../bill-file';
import { loadPrivateKey } from '../key-loading';
import { describeFailure } from '../payment-channel';
import { AlipayAccount } from './alipay.config';
import { AlipayVerifier, signedContent } from './alipay.verifier';

const BEIJING_OFFSET_MS = 8 * 3600 * 1000;

/** An openapi method and the key its answer object comes under. */
export interface AlipayMethod {
  name: string;
  responseKey: string;
}

/** The openapi methods this service calls. */
export const METHODS = {
  refund: { name: 'alipay.trade.refund', responseKey: 'alipay_trade_refund_response' },
  refundQuery: { name: 'alipay.trade.fastpay.refund.query', responseKey: 'alipay_trade_fastpay_refund_query_response' },
  tradeQuery: { name: 'alipay.trade.query', responseKey: 'alipay_trade_query_response' },
  tradeClose: { name: 'alipay.trade.close', responseKey: 'alipay_trade_close_response' },
  precreate: { name: 'alipay.trade.precreate', responseKey: 'alipay_trade_precreate_response' },
  create: { name: 'alipay.trade.create', responseKey: 'alipay_trade_create_response' },
  billDownloadUrl: {
    name: 'alipay.data.dataservice.bill.downloadurl.query',
    responseKey: 'alipay_data_dataservice_bill_downloadurl_query_response',
  },
} satisfies Record<string, AlipayMethod>;

/** A response object whose sign verified with the Alipay public key of the app that called. */
export interface VerifiedResponse {
  verified: Record<string, string | undefined>;
  /** The response object exactly as signed. */
  text: string;
}

/** No answer that can be trusted: timeout, network error, non-200, or a missing or wrong sign. */
export interface CallFailure {
  failure: string;
}

export interface AlipayApiSettings {
  gatewayUrl: string;
  timeoutMs: number;
  downloadTimeoutMs: number;
}

/** Larger than any real daily bill; a bigger download is cut off rather than filling the disk. */
const MAX_BILL_BYTES = 4 * 1024 ** 3;

/** RSA2-signed calls to the Alipay openapi gateway on behalf of one of our apps. */
export class AlipayClient {
  private readonly keys = new Map<string, KeyObject>();

  constructor(
    private readonly accounts: AlipayAccount[],
    private readonly api: AlipayApiSettings,
    private readonly verifier: AlipayVerifier,
  ) {
    for (const account of accounts) {
      if (!account.appPrivateKeyPath) continue;
      this.keys.set(account.appId, loadPrivateKey(account.appPrivateKeyPath, 'ALIPAY_APP_PRIVATE_KEY_PATH'));
    }
  }

  /** The app ids whose API we can call. */
  appIds(): string[] {
    return [...this.keys.keys()].filter((appId) => this.unavailableReason(appId) === undefined);
  }

  /** A payment recorded before accounts were remembered belongs to the only app there is. */
  resolve(appId: string | undefined): string | undefined {
    return appId ?? (this.accounts.length === 1 ? this.accounts[0].appId : undefined);
  }

  unavailableReason(appId: string | undefined): string | undefined {
    if (this.accounts.length === 0) return 'Alipay is not configured';
    const resolved = this.resolve(appId);
    if (resolved === undefined) return 'the payment names no Alipay app and several are configured';
    if (!this.accounts.some((a) => a.appId === resolved)) return `app_id ${resolved} is not one of our apps`;
    if (!this.keys.has(resolved)) {
      return `Alipay API calls for app_id ${resolved} need its app private key (ALIPAY_APP_PRIVATE_KEY_PATH, or the accounts file)`;
    }
    const certSns = this.verifier.requestCertSns(resolved);
    if (certSns && !certSns.app_cert_sn) {
      return `Alipay API calls for app_id ${resolved} in certificate mode need its app certificate (ALIPAY_APP_CERT_PATH, or appCertPath in the accounts file)`;
    }
    return undefined;
  }

  /** The gateway's address: where API calls go, and where a buyer's browser or the Alipay SDK takes a signed request. */
  get gatewayUrl(): string {
    return this.api.gatewayUrl;
  }

  /**
   * A request signed for `appId` without sending it: what a buyer's browser (page and wap pay) or the
   * Alipay SDK (app pay) takes to the gateway. `publicParams` (notify_url, return_url) are signed with the rest.
   */
  sign(
    appId: string | undefined,
    method: string,
    bizContent: object,
    publicParams: Record<string, string> = {},
  ): { params: Record<string, string> } | CallFailure {
    const resolved = this.resolve(appId);
    const key = this.keys.get(resolved ?? '');
    const unavailable = this.unavailableReason(appId);
    if (!resolved || !key || unavailable) return { failure: unavailable ?? 'no app key' };
    const certSns = this.verifier.requestCertSns(resolved);
    return { params: signedRequest(resolved, key, method, bizContent, certSns, publicParams) };
  }

  /** One signed gateway call; the response object once its signature verifies, or why not. */
  async call(
    appId: string | undefined,
    method: AlipayMethod,
    bizContent: object,
    publicParams: Record<string, string> = {},
  ): Promise<VerifiedResponse | CallFailure> {
    const resolved = this.resolve(appId);
    const request = this.sign(appId, method.name, bizContent, publicParams);
    if (!resolved || isFailure(request)) return { failure: isFailure(request) ? request.failure : 'no app key' };
    let text: string;
    try {
      const response = await fetch(this.api.gatewayUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded;charset=utf-8' },
        body: new URLSearchParams(request.params).toString(),
        signal: AbortSignal.timeout(this.api.timeoutMs),
      });
      text = await response.text();
      if (response.status !== 200) return { failure: `Alipay gateway answered HTTP ${response.status}` };
    } catch (error) {
      return { failure: `Alipay ${method.name}: ${describeFailure(error)}` };
    }
    const signed = signedResponse(text, method.responseKey);
    if (!signed || !this.verifier.verifyResponse(resolved, signed.content, signed.sign, signed.certSn)) {
      return { failure: `Alipay ${method.name} answer has no valid signature` };
    }
    return { verified: JSON.parse(signed.content) as Record<string, string | undefined>, text: signed.content };
  }

  /**
   * Downloads a bill ZIP to a temporary file. The URL came in a verified answer and carries its
   * own short-lived token: nothing of ours is sent with it.
   */
  async download(url: string): Promise<{ path: string } | CallFailure> {
    if (!/^https?:\/\//.test(url)) return { failure: 'the bill_download_url is not an http(s) URL' };
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(this.api.downloadTimeoutMs) });
      if (response.status !== 200 || !response.body) {
        await response.body?.cancel();
        return { failure: `Alipay bill download answered HTTP ${response.status}` };
      }
      return { path: await saveToTempFile(response.body, MAX_BILL_BYTES) };
    } catch (error) {
      return { failure: `Alipay bill download: ${describeFailure(error)}` };
    }
  }
}

export function isFailure<T extends object>(answer: T | CallFailure): answer is CallFailure {
  return 'failure' in answer;
}

/**
 * The public parameters plus biz_content, signed RSA2 over everything but `sign` (sign_type included);
 * in certificate mode app_cert_sn and alipay_root_cert_sn are public parameters too, and signed. So are
 * the optional public parameters a method takes (notify_url, return_url).
 */
function signedRequest(
  appId: string,
  key: KeyObject,
  method: string,
  bizContent: object,
  certSns: { app_cert_sn?: string; alipay_root_cert_sn: string } | undefined,
  publicParams: Record<string, string>,
): Record<string, string> {
  const params = new Map<string, string>([
    ['app_id', appId],
    ['method', method],
    ['format', 'JSON'],
    ['charset', 'utf-8'],
    ['sign_type', 'RSA2'],
    ['timestamp', beijingDateTime(new Date())],
    ['version', '1.0'],
    ['biz_content', JSON.stringify(bizContent)],
    ...Object.entries(publicParams),
  ]);
  if (certSns?.app_cert_sn) {
    params.set('app_cert_sn', certSns.app_cert_sn);
    params.set('alipay_root_cert_sn', certSns.alipay_root_cert_sn);
  }
  const content = signedContent(params, ['sign']);
  params.set('sign', sign('sha256', Buffer.from(content, 'utf8'), key).toString('base64'));
  return Object.fromEntries(params);
}

/** yyyy-MM-dd HH:mm:ss in Beijing time, as Alipay writes timestamp and time_expire. */
export function beijingDateTime(at: Date): string {
  return new Date(at.getTime() + BEIJING_OFFSET_MS).toISOString().slice(0, 19).replace('T', ' ');
}

export function signedResponse(
  text: string,
  responseKey = METHODS.refund.responseKey,
): { content: string; sign: string; certSn?: string } | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isPlainObject(body) || typeof body.sign !== 'string') return undefined;
  const key = [responseKey, 'error_response'].find((k) => isPlainObject(body[k]));
  if (!key) return undefined;
  const start = text.indexOf(`"${key}"`);
  const open = text.indexOf('{', start);
  const end = matchingBrace(text, open);
  if (end === undefined) return undefined;
  const certSn = typeof body.alipay_cert_sn === 'string' ? body.alipay_cert_sn : undefined;
  return { content: text.slice(open, end + 1), sign: body.sign, certSn };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The index of the `}` closing the object opened at `open`, skipping braces inside strings. */
function matchingBrace(text: string, open: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = open; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{') depth++;
    else if (char === '}' && --depth === 0) return i;
  }
  return undefined;
}
