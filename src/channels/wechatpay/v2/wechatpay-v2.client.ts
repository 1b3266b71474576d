import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createSecureContext, rootCertificates } from 'node:tls';
import { Agent, fetch } from 'undici';
import { DomainError } from '../../../domain/domain-error';
import { ConfigurationError } from '../../../platform/config/env-validation';
import { removeFile, saveToTempFile } from '../../bill-file';
import { describeFailure } from '../../payment-channel';
import { WechatpayAccount } from '../wechatpay.config';
import { readSignType, signV2, v2SignatureHolds } from './wechatpay-v2.sign';
import { readV2Xml, writeV2Xml } from './wechatpay-v2.xml';

export interface WechatpayV2ApiSettings {
  baseUrl: string;
  timeoutMs: number;
  downloadTimeoutMs: number;
  /** Extra CA certificates (PEM) for the API server: a test platform's. */
  caPath?: string;
}

/** An answer with return_code SUCCESS whose sign verified with the account's APIv2 key. */
export interface V2Answer {
  fields: Record<string, string>;
  /** The XML exactly as received. */
  text: string;
}

/** No answer that can be trusted: timeout, network error, an HTTP error, return_code FAIL, a wrong sign. */
export interface V2CallFailure {
  failure: string;
}

export function isV2Failure<T extends object>(answer: T | V2CallFailure): answer is V2CallFailure {
  return 'failure' in answer;
}

/** An account whose API calls go to APIv2: it has an APIv2 key and no APIv3 merchant key. */
interface V2ApiAccount {
  account: WechatpayAccount & { apiV2Key: string };
  appid?: string;
  /** Carries the merchant's apiclient_cert.p12, for secapi/ (refunds); undefined without one. */
  certAgent?: Agent;
}

const MAX_BILL_BYTES = 4 * 1024 ** 3;
/** Larger than any XML answer of downloadbill; a bigger file is a bill. */
const MAX_XML_ANSWER_BYTES = 64 * 1024;

/** Signed XML calls to WeChat Pay APIv2 (MD5 sign), for the accounts that have nothing but an APIv2 key. */
export class WechatpayV2Client {
  private readonly accounts = new Map<string, V2ApiAccount>();
  private readonly agent: Agent;

  constructor(
    private readonly all: WechatpayAccount[],
    private readonly api: WechatpayV2ApiSettings,
  ) {
    const ca = api.caPath ? [...rootCertificates, readCa(api.caPath)] : undefined;
    this.agent = new Agent({ connect: { ca, timeout: api.timeoutMs } });
    for (const account of all) {
      if (account.apiV2Key === undefined || account.merchantPrivateKeyPath !== undefined) continue;
      const v2 = account as V2ApiAccount['account'];
      const certAgent = account.apiV2CertPath
        ? new Agent({ connect: { ca, timeout: api.timeoutMs, ...loadP12(v2) } })
        : undefined;
      this.accounts.set(account.mchid, { account: v2, appid: account.appids[0], certAgent });
    }
  }

  /** The mchids whose API calls go to APIv2. */
  mchids(): string[] {
    return [...this.accounts.keys()];
  }

  /** Whether `mchid` (undefined: the only account) is an APIv2-only account. */
  handles(mchid: string | undefined): boolean {
    return this.accountOf(mchid) !== undefined;
  }

  /** Why an APIv2 account's calls cannot be made, or undefined when they can. */
  unavailableReason(mchid: string | undefined): string | undefined {
    const v2 = this.accountOf(mchid);
    if (v2 && !v2.appid) {
      return `WeChat Pay APIv2 calls for mch_id ${v2.account.mchid} need its app id (WECHATPAY_APPIDS, or appids in the accounts file)`;
    }
    return undefined;
  }

  /** MD5-signs fields with the account's APIv2 key: the buyer's parameters of a prepay (paySign, sign). */
  signForBuyer(mchid: string, fields: Record<string, string>): string {
    return signV2(fields, this.accountOf(mchid)!.account.apiV2Key, 'MD5');
  }

  /** One signed call; secapi/ paths go with the merchant certificate. */
  async call(
    mchid: string | undefined,
    path: string,
    request: Record<string, string>,
  ): Promise<V2Answer | V2CallFailure> {
    const answer = await this.send(mchid, path, request, this.api.timeoutMs);
    if (isV2Failure(answer)) return answer;
    const text = await answer.response.text();
    if (answer.response.status !== 200)
      return { failure: `WeChat Pay ${path} answered HTTP ${answer.response.status}` };
    return this.verified(answer.v2, path, text);
  }

  /**
   * downloadbill: the bill's text to a temporary file, or the XML answer it gave instead (no bill
   * yet, an error). The bill is not signed, and APIv2 gives no hash of it: only the TLS of the call vouches for it.
   */
  async downloadBill(
    mchid: string,
    request: Record<string, string>,
  ): Promise<{ path: string } | V2Answer | V2CallFailure> {
    const answer = await this.send(mchid, '/pay/downloadbill', request, this.api.downloadTimeoutMs);
    if (isV2Failure(answer)) return answer;
    const { response } = answer;
    if (response.status !== 200 || !response.body) {
      await response.body?.cancel();
      return { failure: `WeChat Pay /pay/downloadbill answered HTTP ${response.status}` };
    }
    let path: string;
    try {
      path = await saveToTempFile(response.body as ReadableStream<Uint8Array>, MAX_BILL_BYTES);
    } catch (error) {
      return { failure: `WeChat Pay bill download: ${describeFailure(error)}` };
    }
    // No bill (not generated yet, or an error) comes as a small XML answer instead of the bill's text.
    const size = (await stat(path)).size;
    const head = size <= MAX_XML_ANSWER_BYTES ? await readFile(path, 'utf8') : '';
    if (!head.trimStart().startsWith('<xml>')) return { path };
    await removeFile(path);
    return { fields: this.readFail(head), text: head };
  }

  private accountOf(mchid: string | undefined): V2ApiAccount | undefined {
    const resolved = mchid ?? (this.all.length === 1 ? this.all[0].mchid : undefined);
    return resolved === undefined ? undefined : this.accounts.get(resolved);
  }

  private async send(mchid: string | undefined, path: string, request: Record<string, string>, timeoutMs: number) {
    const v2 = this.accountOf(mchid);
    if (!v2?.appid) return { failure: this.unavailableReason(mchid) ?? `mch_id ${mchid} has no APIv2 calls` };
    const secure = path.startsWith('/secapi/');
    if (secure && !v2.certAgent) {
      return {
        failure: `WeChat Pay APIv2 refunds for mch_id ${v2.account.mchid} need its apiclient_cert.p12 (WECHATPAY_APIV2_CERT_PATH, or apiV2CertPath in the accounts file)`,
      };
    }
    const fields = {
      appid: v2.appid,
      mch_id: v2.account.mchid,
      nonce_str: randomBytes(16).toString('hex'),
      ...request,
    };
    const body = writeV2Xml({ ...fields, sign: signV2(fields, v2.account.apiV2Key, 'MD5') });
    try {
      const response = await fetch(this.api.baseUrl + path, {
        method: 'POST',
        headers: { 'content-type': 'text/xml; charset=utf-8' },
        body,
        dispatcher: secure ? v2.certAgent : this.agent,
        signal: AbortSignal.timeout(timeoutMs),
      });
      return { v2, response };
    } catch (error) {
      return { failure: `WeChat Pay ${path}: ${describeFailure(error)}` };
    }
  }

  private verified(v2: V2ApiAccount, path: string, text: string): V2Answer | V2CallFailure {
    let fields: Record<string, string>;
    try {
      fields = readV2Xml(text, 'xml', `WeChat Pay ${path} answer`);
    } catch (error) {
      if (error instanceof DomainError) return { failure: error.message };
      throw error;
    }
    if (fields.return_code !== 'SUCCESS') {
      return {
        failure: `WeChat Pay ${path}: return_code ${fields.return_code ?? '(none)'} ${fields.return_msg ?? ''}`.trim(),
      };
    }
    const signType = readSignType(fields.sign_type);
    if (!signType || !v2SignatureHolds(fields, v2.account.apiV2Key, signType)) {
      return { failure: `WeChat Pay ${path} answer has no valid sign` };
    }
    return { fields, text };
  }

  private readFail(text: string): Record<string, string> {
    try {
      return readV2Xml(text, 'xml', 'downloadbill answer');
    } catch {
      return { return_code: 'FAIL', return_msg: 'an unreadable answer' };
    }
  }
}

function readCa(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    throw new ConfigurationError(`Invalid configuration: WECHATPAY_APIV2_CA_PATH: cannot read ${path}`);
  }
}

/** The merchant's apiclient_cert.p12, opened at start with its password (the mchid, as WeChat issues it, unless set). */
function loadP12(account: WechatpayAccount): { pfx: Buffer; passphrase: string } {
  let pfx: Buffer;
  try {
    pfx = readFileSync(account.apiV2CertPath!);
  } catch {
    throw new ConfigurationError(
      `Invalid configuration: WECHATPAY_APIV2_CERT_PATH of mch_id ${account.mchid}: cannot read ${account.apiV2CertPath}`,
    );
  }
  const passphrase = account.apiV2CertPassword ?? account.mchid;
  try {
    createSecureContext({ pfx, passphrase });
  } catch {
    throw new ConfigurationError(
      `Invalid configuration: WECHATPAY_APIV2_CERT_PATH of mch_id ${account.mchid}: ${account.apiV2CertPath} is no PKCS#12 that opens with its password (WECHATPAY_APIV2_CERT_PASSWORD, the mchid by default)`,
    );
  }
  return { pfx, passphrase };
}
