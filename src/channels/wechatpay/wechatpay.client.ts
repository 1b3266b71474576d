import { KeyObject, randomBytes, sign } from 'node:crypto';
import { DomainError } from '../../domain/domain-error';
import { RefundConfig } from '../../config/refund.config';
import { WechatpayConfig } from './wechatpay.config';
import { Channel } from '../../domain/notification';
import { WechatpayVerifier } from './wechatpay.verifier';
import { Refund } from '../../refund/refund.entity';
import { ChannelRefundResult, describeFailure, RefundChannel } from '../payment-channel';

const REFUND_PATH = '/v3/refund/domestic/refunds';
const STATUSES: Record<string, ChannelRefundResult['outcome'] | undefined> = {
  SUCCESS: 'SUCCEEDED',
  PROCESSING: 'PROCESSING',
  CLOSED: 'CLOSED',
  ABNORMAL: 'ABNORMAL',
};
/** Error codes that say nothing was decided: the same request (same out_refund_no) is sent again later. */
const RETRYABLE_CODES = new Set(['SYSTEM_ERROR', 'FREQUENCY_LIMITED', 'NOT_ENOUGH', 'SIGN_ERROR', 'NO_AUTH']);

/** WeChat Pay APIv3 domestic refund, signed with the merchant key; answers trusted only once their signature verifies. */
export class WechatpayRefundClient implements RefundChannel {
  readonly channel = Channel.Wechatpay;
  readonly unavailableReason: string | undefined;

  constructor(
    private readonly merchant: WechatpayConfig | undefined,
    private readonly config: RefundConfig,
    private readonly merchantKey: KeyObject | undefined,
    private readonly verifier: WechatpayVerifier,
  ) {
    if (!merchant) this.unavailableReason = 'WeChat Pay is not configured';
    else if (!merchantKey || !config.wechatpay.merchantSerialNo) {
      this.unavailableReason =
        'WeChat Pay refunds need WECHATPAY_MERCHANT_PRIVATE_KEY_PATH and WECHATPAY_MERCHANT_SERIAL_NO';
    }
  }

  async refund(refund: Refund): Promise<ChannelRefundResult> {
    const body = JSON.stringify({
      transaction_id: refund.transactionId,
      out_refund_no: refund.refundNo,
      reason: refund.reason.slice(0, 80),
      ...(this.config.wechatpay.notifyUrl ? { notify_url: this.config.wechatpay.notifyUrl } : {}),
      amount: { refund: refund.amount, total: refund.transactionAmount, currency: refund.currency },
    });
    const answer = await this.call('POST', REFUND_PATH, body);
    if ('outcome' in answer) return answer;
    if (!answer.ok) {
      const detail = `WeChat Pay refused the refund: ${answer.code} ${answer.message}`.trim();
      return RETRYABLE_CODES.has(answer.code) || answer.status === 429
        ? { outcome: 'RETRY', detail }
        : { outcome: 'CLOSED', detail };
    }
    return readRefund(answer.body);
  }

  async query(refund: Refund): Promise<ChannelRefundResult> {
    const answer = await this.call('GET', `${REFUND_PATH}/${encodeURIComponent(refund.refundNo)}`, '');
    if ('outcome' in answer) return answer;
    if (!answer.ok) return { outcome: 'RETRY', detail: `WeChat Pay refund query: ${answer.code} ${answer.message}` };
    return readRefund(answer.body);
  }

  /** One signed call; its answer only once its signature verifies, or a RETRY saying why not. */
  private async call(
    method: 'GET' | 'POST',
    path: string,
    body: string,
  ): Promise<VerifiedAnswer | ChannelRefundResult> {
    let response: Response;
    let text: string;
    try {
      response = await fetch(this.config.wechatpay.apiBaseUrl + path, {
        method,
        headers: {
          ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
          accept: 'application/json',
          authorization: this.authorization(method, path, body),
        },
        body: method === 'POST' ? body : undefined,
        signal: AbortSignal.timeout(this.config.requestTimeoutMs),
      });
      text = await response.text();
    } catch (error) {
      return { outcome: 'RETRY', detail: `WeChat Pay ${method} ${path}: ${describeFailure(error)}` };
    }
    if (response.status >= 500) return { outcome: 'RETRY', detail: `WeChat Pay answered HTTP ${response.status}` };
    if (!this.verifies(response, text)) {
      return { outcome: 'RETRY', detail: `WeChat Pay answer (HTTP ${response.status}) has no valid signature` };
    }
    const answer = parseObject(text);
    return {
      ok: response.ok,
      status: response.status,
      body: answer,
      code: String(answer.code ?? `HTTP_${response.status}`),
      message: String(answer.message ?? ''),
    };
  }

  private verifies(response: Response, text: string): boolean {
    try {
      this.verifier.verifySignature({ body: Buffer.from(text, 'utf8'), headers: Object.fromEntries(response.headers) });
      return true;
    } catch (error) {
      if (error instanceof DomainError) return false;
      throw error;
    }
  }

  /** `WECHATPAY2-SHA256-RSA2048`: SHA256withRSA over `method\nurl\ntimestamp\nnonce\nbody\n`. */
  private authorization(method: string, path: string, body: string): string {
    const timestamp = Math.floor(Date.now() / 1000);
    const nonce = randomBytes(16).toString('hex');
    const message = `${method}\n${path}\n${timestamp}\n${nonce}\n${body}\n`;
    const signature = sign('sha256', Buffer.from(message, 'utf8'), this.merchantKey!).toString('base64');
    return (
      `WECHATPAY2-SHA256-RSA2048 mchid="${this.merchant!.mchid}",nonce_str="${nonce}",signature="${signature}",` +
      `timestamp="${timestamp}",serial_no="${this.config.wechatpay.merchantSerialNo}"`
    );
  }
}

interface VerifiedAnswer {
  ok: boolean;
  status: number;
  body: Record<string, unknown>;
  code: string;
  message: string;
}

/** A refund object (the POST's and the query's answer) as a result. */
function readRefund(answer: Record<string, unknown>): ChannelRefundResult {
  const outcome = STATUSES[String(answer.status)];
  const channelRefundId = typeof answer.refund_id === 'string' ? answer.refund_id : undefined;
  if (!outcome) return { outcome: 'RETRY', detail: `WeChat Pay answered unknown status ${String(answer.status)}` };
  if (outcome === 'CLOSED' || outcome === 'ABNORMAL') {
    return { outcome, channelRefundId, detail: `WeChat Pay refund status ${String(answer.status)}` };
  }
  return { outcome, channelRefundId } as ChannelRefundResult;
}

function parseObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
