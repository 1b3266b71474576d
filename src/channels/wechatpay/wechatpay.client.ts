import { KeyObject, randomBytes, sign } from 'node:crypto';
import { DomainError } from '../../domain/domain-error';
import { saveToTempFile } from '../bill-file';
import { loadPrivateKey } from '../key-loading';
import { describeFailure } from '../payment-channel';
import { WechatpayAccount } from './wechatpay.config';
import { WechatpayVerifier } from './wechatpay.verifier';

/** An answer whose Wechatpay-Signature verified with the platform key of the account that was called. */
export interface VerifiedAnswer {
  ok: boolean;
  status: number;
  body: Record<string, unknown>;
  /** The body exactly as received. */
  text: string;
  code: string;
  message: string;
}

/** No answer that can be trusted: timeout, network error, 5xx, or a missing or wrong signature. */
export interface CallFailure {
  failure: string;
}

interface MerchantKey {
  account: WechatpayAccount;
  privateKey: KeyObject;
  serialNo: string;
}

export interface WechatpayApiSettings {
  baseUrl: string;
  timeoutMs: number;
  downloadTimeoutMs: number;
}

/** Larger than any real daily bill; a bigger download is cut off rather than filling the disk. */
const MAX_BILL_BYTES = 4 * 1024 ** 3;

/** Signed calls to the WeChat Pay APIv3 on behalf of one of our merchant accounts. */
export class WechatpayClient {
  private readonly keys = new Map<string, MerchantKey>();
  private readonly accounts: WechatpayAccount[];

  constructor(
    accounts: WechatpayAccount[],
    private readonly api: WechatpayApiSettings,
    private readonly verifier: WechatpayVerifier,
  ) {
    this.accounts = accounts;
    for (const account of accounts) {
      if (!account.merchantPrivateKeyPath || !account.merchantSerialNo) continue;
      const privateKey = loadPrivateKey(account.merchantPrivateKeyPath, 'WECHATPAY_MERCHANT_PRIVATE_KEY_PATH');
      this.keys.set(account.mchid, { account, privateKey, serialNo: account.merchantSerialNo });
    }
  }

  /** The mchids whose API we can call. */
  mchids(): string[] {
    return [...this.keys.keys()];
  }

  /** A payment recorded before accounts were remembered belongs to the only account there is. */
  resolve(mchid: string | undefined): string | undefined {
    return mchid ?? (this.accounts.length === 1 ? this.accounts[0].mchid : undefined);
  }

  unavailableReason(mchid: string | undefined): string | undefined {
    if (this.accounts.length === 0) return 'WeChat Pay is not configured';
    const resolved = this.resolve(mchid);
    if (resolved === undefined) return 'the payment names no WeChat Pay merchant and several are configured';
    if (!this.accounts.some((a) => a.mchid === resolved)) return `mchid ${resolved} is not one of our accounts`;
    if (!this.keys.has(resolved)) {
      return `WeChat Pay API calls for mchid ${resolved} need its merchant private key and serial number (WECHATPAY_MERCHANT_PRIVATE_KEY_PATH and WECHATPAY_MERCHANT_SERIAL_NO, or the accounts file)`;
    }
    return undefined;
  }

  /**
   * SHA256withRSA with the account's merchant key, base64: what the buyer's client hands WeChat
   * with a prepay (wx.requestPayment's paySign, the app's sign). Undefined without a key.
   */
  signForBuyer(mchid: string, message: string): string | undefined {
    const key = this.keys.get(mchid);
    return key && sign('sha256', Buffer.from(message, 'utf8'), key.privateKey).toString('base64');
  }

  /** One signed call; the answer only once its signature verifies, or why not. */
  async call(
    mchid: string | undefined,
    method: 'GET' | 'POST',
    path: string,
    body: string,
  ): Promise<VerifiedAnswer | CallFailure> {
    const key = this.keys.get(this.resolve(mchid) ?? '');
    if (!key) return { failure: this.unavailableReason(mchid) ?? 'no merchant key' };
    let response: Response;
    let text: string;
    try {
      response = await fetch(this.api.baseUrl + path, {
        method,
        headers: {
          ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
          accept: 'application/json',
          authorization: authorization(key, method, path, body),
        },
        body: method === 'POST' ? body : undefined,
        signal: AbortSignal.timeout(this.api.timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      return { failure: `WeChat Pay ${method} ${path}: ${describeFailure(error)}` };
    }
    if (response.status >= 500) return { failure: `WeChat Pay answered HTTP ${response.status}` };
    if (!this.verifies(key.account.mchid, response, text)) {
      return { failure: `WeChat Pay answer (HTTP ${response.status}) has no valid signature` };
    }
    const answer = parseObject(text);
    return {
      ok: response.ok,
      status: response.status,
      body: answer,
      text,
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the platform's error code, as it came, for the log and the caller
      code: String(answer.code ?? `HTTP_${response.status}`),
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the platform's error message, as it came, for the log and the caller
      message: String(answer.message ?? ''),
    };
  }

  /**
   * Downloads a bill file to a temporary file with a signed GET. WeChat does not sign the file: its
   * integrity is the SHA1 the signed tradebill answer gave. Only URLs of the API itself are
   * followed, so the merchant's signature never goes to another host.
   */
  async download(mchid: string, url: string): Promise<{ path: string } | CallFailure> {
    const key = this.keys.get(mchid);
    if (!key) return { failure: this.unavailableReason(mchid) ?? 'no merchant key' };
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return { failure: 'the download_url is not a URL' };
    }
    if (target.origin !== new URL(this.api.baseUrl).origin) {
      return { failure: `the download_url is not on ${new URL(this.api.baseUrl).origin}` };
    }
    const path = target.pathname + target.search;
    try {
      const response = await fetch(target, {
        headers: { authorization: authorization(key, 'GET', path, '') },
        signal: AbortSignal.timeout(this.api.downloadTimeoutMs),
      });
      if (response.status !== 200 || !response.body) {
        await response.body?.cancel();
        return { failure: `WeChat Pay bill download answered HTTP ${response.status}` };
      }
      return { path: await saveToTempFile(response.body, MAX_BILL_BYTES) };
    } catch (error) {
      return { failure: `WeChat Pay bill download: ${describeFailure(error)}` };
    }
  }

  /** Signed by the platform key of the very account we called, not merely by some key we know. */
  private verifies(mchid: string, response: Response, text: string): boolean {
    try {
      const signer = this.verifier.verifySignature({
        body: Buffer.from(text, 'utf8'),
        headers: Object.fromEntries(response.headers),
      });
      return signer.account.mchid === mchid;
    } catch (error) {
      if (error instanceof DomainError) return false;
      throw error;
    }
  }
}

export function isFailure(answer: VerifiedAnswer | CallFailure): answer is CallFailure {
  return 'failure' in answer;
}

/** `WECHATPAY2-SHA256-RSA2048`: SHA256withRSA over `method\nurl\ntimestamp\nnonce\nbody\n`. */
function authorization(key: MerchantKey, method: string, path: string, body: string): string {
  const timestamp = Math.floor(Date.now() / 1000);
  const nonce = randomBytes(16).toString('hex');
  const message = `${method}\n${path}\n${timestamp}\n${nonce}\n${body}\n`;
  const signature = sign('sha256', Buffer.from(message, 'utf8'), key.privateKey).toString('base64');
  return (
    `WECHATPAY2-SHA256-RSA2048 mchid="${key.account.mchid}",nonce_str="${nonce}",signature="${signature}",` +
    `timestamp="${timestamp}",serial_no="${key.serialNo}"`
  );
}

function parseObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
