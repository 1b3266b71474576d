import { DomainError } from '../../domain/domain-error';
import { describeFailure } from '../payment-channel';
import { UnionpayAccount } from './unionpay.config';
import { formatTxnTime, parseAnswer, signFields } from './unionpay.message';
import { loadSigningCertificate, SigningCertificate } from './unionpay.sign-cert';
import { UnionpayVerifier } from './unionpay.verifier';

export interface UnionpayApiSettings {
  gatewayUrl: string;
  fileTransferUrl: string;
  timeoutMs: number;
  downloadTimeoutMs: number;
}

/** The gateway's answer, once its signature and certificate chain hold and it names the merchant that asked. */
export interface VerifiedAnswer {
  fields: Map<string, string>;
  text: string;
}

/** No answer that can be trusted: timeout, network error, non-200, or an answer that does not verify. */
export interface CallFailure {
  failure: string;
}

export const ENDPOINTS = {
  backTrans: '/gateway/api/backTransReq.do',
  queryTrans: '/gateway/api/queryTrans.do',
  appTrans: '/gateway/api/appTransReq.do',
  /** Where the buyer's browser posts a signed consumption form: never called by this service. */
  frontTrans: '/gateway/api/frontTransReq.do',
} as const;

type CalledEndpoint = Exclude<keyof typeof ENDPOINTS, 'frontTrans'> | 'fileTransfer';

/** The largest answer read: a month's fileTransfer of a busy merchant stays well below it. */
const MAX_ANSWER_BYTES = 256 * 1024 * 1024;

/** acp 5.1.0 requests to UnionPay's gateway, each signed with the merchant's PFX. */
export class UnionpayClient {
  private readonly signing = new Map<string, SigningCertificate>();

  constructor(
    private readonly accounts: UnionpayAccount[],
    private readonly api: UnionpayApiSettings,
    private readonly verifier: UnionpayVerifier,
  ) {
    for (const account of accounts) {
      if (account.signCert) this.signing.set(account.merId, loadSigningCertificate(account.signCert));
    }
  }

  merIds(): string[] {
    return [...this.signing.keys()];
  }

  /** A payment recorded before accounts were remembered belongs to the only merchant there is. */
  resolve(merId: string | undefined): string | undefined {
    return merId ?? (this.accounts.length === 1 ? this.accounts[0].merId : undefined);
  }

  unavailableReason(merId: string | undefined): string | undefined {
    if (!this.verifier.enabled) return 'UnionPay is not configured';
    const resolved = this.resolve(merId);
    if (resolved === undefined) return 'the payment names no UnionPay merchant and several are configured';
    if (!this.accounts.some((a) => a.merId === resolved)) return `merId ${resolved} is not one of our merchants`;
    if (!this.signing.has(resolved)) {
      return `UnionPay API calls for merId ${resolved} need its signing certificate (UNIONPAY_SIGN_CERT_PATH, or the accounts file)`;
    }
    return undefined;
  }

  /** The gateway's address, where a buyer's browser posts a consumption form (ENDPOINTS.frontTrans). */
  urlOf(endpoint: keyof typeof ENDPOINTS): string {
    return this.api.gatewayUrl + ENDPOINTS[endpoint];
  }

  /**
   * A request signed for `merId` without sending it: the common fields (txnTime now unless `request`
   * gives one), `request`'s, certId, and the signature over all of them.
   */
  sign(merId: string | undefined, request: Record<string, string>): { fields: Map<string, string> } | CallFailure {
    const resolved = this.resolve(merId);
    const signing = this.signing.get(resolved ?? '');
    if (!resolved || !signing) return { failure: this.unavailableReason(merId) ?? 'no signing certificate' };
    const fields = new Map<string, string>([
      ['version', '5.1.0'],
      ['encoding', 'UTF-8'],
      ['signMethod', '01'],
      ['accessType', '0'],
      ['merId', resolved],
      ['txnTime', formatTxnTime(new Date(this.verifier.clock()))],
      ['certId', signing.certId],
      ...Object.entries(request),
    ]);
    fields.set('signature', signFields(fields, signing.privateKey));
    return { fields };
  }

  /** One signed request; the verified answer, or why there is none. */
  async call(
    merId: string | undefined,
    endpoint: CalledEndpoint,
    request: Record<string, string>,
  ): Promise<VerifiedAnswer | CallFailure> {
    const signed = this.sign(merId, request);
    if (isFailure(signed)) return signed;
    const { fields } = signed;
    const resolved = fields.get('merId')!;
    const url = endpoint === 'fileTransfer' ? this.api.fileTransferUrl : this.api.gatewayUrl + ENDPOINTS[endpoint];
    const what = `UnionPay ${endpoint} (txnType ${request.txnType})`;
    let text: string;
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' },
        body: new URLSearchParams([...fields.entries()]).toString(),
        signal: AbortSignal.timeout(endpoint === 'fileTransfer' ? this.api.downloadTimeoutMs : this.api.timeoutMs),
      });
      const length = Number(response.headers.get('content-length') ?? 0);
      if (response.status !== 200 || length > MAX_ANSWER_BYTES) {
        await response.body?.cancel();
        return { failure: `${what}: the gateway answered HTTP ${response.status}` };
      }
      text = await response.text();
    } catch (error) {
      return { failure: `${what}: ${describeFailure(error)}` };
    }
    try {
      const answer = parseAnswer(text.trim());
      this.verifier.verifyFields(answer, resolved);
      return { fields: answer, text };
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return { failure: `${what}: the answer does not verify (${error.message})` };
    }
  }
}

export function isFailure<T extends object>(answer: T | CallFailure): answer is CallFailure {
  return 'failure' in answer;
}
