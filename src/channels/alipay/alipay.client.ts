import { KeyObject, sign } from 'node:crypto';
import { AlipayConfig } from './alipay.config';
import { RefundConfig } from '../../config/refund.config';
import { AlipayVerifier, signedContent } from './alipay.verifier';
import { Channel } from '../../domain/notification';
import { Refund } from '../../refund/refund.entity';
import { ChannelRefundResult, describeFailure, formatYuan, RefundChannel } from '../payment-channel';

const REFUND = { name: 'alipay.trade.refund', responseKey: 'alipay_trade_refund_response' };
const REFUND_QUERY = {
  name: 'alipay.trade.fastpay.refund.query',
  responseKey: 'alipay_trade_fastpay_refund_query_response',
};
/** Answers that decide nothing: the same out_request_no is sent again later. */
const RETRYABLE_SUB_CODES = new Set([
  'ACQ.SYSTEM_ERROR',
  'aop.ACQ.SYSTEM_ERROR',
  'ACQ.SELLER_BALANCE_NOT_ENOUGH',
  'ACQ.REFUND_FEE_ERROR_FREQUENCY',
]);
const BEIJING_OFFSET_MS = 8 * 3600 * 1000;

/** Alipay openapi `alipay.trade.refund`: RSA2-signed request over the gateway, answer verified with Alipay's key. */
export class AlipayRefundClient implements RefundChannel {
  readonly channel = Channel.Alipay;
  readonly unavailableReason: string | undefined;

  constructor(
    private readonly app: AlipayConfig | undefined,
    private readonly config: RefundConfig,
    private readonly appKey: KeyObject | undefined,
    private readonly verifier: AlipayVerifier,
  ) {
    if (!app) this.unavailableReason = 'Alipay is not configured';
    else if (!appKey) this.unavailableReason = 'Alipay refunds need ALIPAY_APP_PRIVATE_KEY_PATH';
  }

  async refund(refund: Refund): Promise<ChannelRefundResult> {
    const result = await this.call(REFUND, {
      trade_no: refund.transactionId,
      out_request_no: refund.refundNo,
      refund_amount: formatYuan(refund.amount),
      refund_reason: refund.reason,
    });
    if (!('verified' in result)) return result;
    const answer = result.verified;
    if (answer.code === '10000') {
      // fund_change N: this out_request_no was refunded before, or is not final yet; the query tells.
      return { outcome: answer.fund_change === 'Y' ? 'SUCCEEDED' : 'PROCESSING' };
    }
    const detail = `Alipay refused the refund: ${answer.code} ${answer.sub_code ?? ''} ${answer.sub_msg ?? answer.msg ?? ''}`;
    // 40004 is a business decision; everything else (20000 unavailable, 4000x request problems) decides nothing.
    return answer.code === '40004' && !RETRYABLE_SUB_CODES.has(answer.sub_code ?? '')
      ? { outcome: 'CLOSED', detail: detail.trim() }
      : { outcome: 'RETRY', detail: detail.trim() };
  }

  /** Only REFUND_SUCCESS is final here: Alipay's query has no word for "refused", so the rest keeps waiting. */
  async query(refund: Refund): Promise<ChannelRefundResult> {
    const result = await this.call(REFUND_QUERY, { trade_no: refund.transactionId, out_request_no: refund.refundNo });
    if (!('verified' in result)) return result;
    const answer = result.verified;
    if (answer.code !== '10000') {
      return { outcome: 'RETRY', detail: `Alipay refund query: ${answer.code} ${answer.sub_code ?? ''}`.trim() };
    }
    return { outcome: answer.refund_status === 'REFUND_SUCCESS' ? 'SUCCEEDED' : 'PROCESSING' };
  }

  /** One signed gateway call; the response object once its signature verifies, or a RETRY saying why not. */
  private async call(
    method: { name: string; responseKey: string },
    bizContent: object,
  ): Promise<{ verified: Record<string, string | undefined> } | ChannelRefundResult> {
    let text: string;
    try {
      const response = await fetch(this.config.alipay.gatewayUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded;charset=utf-8' },
        body: new URLSearchParams(this.signedRequest(method.name, bizContent)).toString(),
        signal: AbortSignal.timeout(this.config.requestTimeoutMs),
      });
      text = await response.text();
      if (response.status !== 200)
        return { outcome: 'RETRY', detail: `Alipay gateway answered HTTP ${response.status}` };
    } catch (error) {
      return { outcome: 'RETRY', detail: `Alipay ${method.name}: ${describeFailure(error)}` };
    }
    const signed = signedResponse(text, method.responseKey);
    if (!signed || !this.verifier.verifyResponse(signed.content, signed.sign)) {
      return { outcome: 'RETRY', detail: `Alipay ${method.name} answer has no valid signature` };
    }
    return { verified: JSON.parse(signed.content) as Record<string, string | undefined> };
  }

  /** The public parameters plus biz_content, signed RSA2 over everything but `sign` (sign_type included). */
  private signedRequest(method: string, bizContent: object): Record<string, string> {
    const params = new Map<string, string>([
      ['app_id', this.app!.appId],
      ['method', method],
      ['format', 'JSON'],
      ['charset', 'utf-8'],
      ['sign_type', 'RSA2'],
      ['timestamp', beijingDateTime(new Date())],
      ['version', '1.0'],
      ['biz_content', JSON.stringify(bizContent)],
    ]);
    const content = signedContent(params, ['sign']);
    params.set('sign', sign('sha256', Buffer.from(content, 'utf8'), this.appKey!).toString('base64'));
    return Object.fromEntries(params);
  }
}

/**
 * Alipay signs the exact text of the response object, so it is cut out of the body as written:
 * re-serializing parsed JSON could change it.
 */
export function signedResponse(
  text: string,
  responseKey = REFUND.responseKey,
): { content: string; sign: string } | undefined {
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
  return end === undefined ? undefined : { content: text.slice(open, end + 1), sign: body.sign };
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

function beijingDateTime(at: Date): string {
  return new Date(at.getTime() + BEIJING_OFFSET_MS).toISOString().slice(0, 19).replace('T', ' ');
}
