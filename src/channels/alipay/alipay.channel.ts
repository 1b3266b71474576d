import { DomainError } from '../../domain/domain-error';
import {
  ChannelRefundResult,
  CreatePaymentRequest,
  CreatePaymentResult,
  PaymentMethod,
  RefundRequest,
  TradeCloseResult,
  TradeQueryResult,
  TradeRef,
} from '../../domain/channel-api';
import { formatYuan, parseDecimalAmount } from '../../domain/money';
import { Channel, RawDelivery, VerifiedNotification } from '../../domain/notification';
import { BillDate, BillDownload } from '../../domain/bill';
import { entriesThenRemove } from '../bill-file';
import { PaymentChannel, plainTextFailure, PlatformReply } from '../payment-channel';
import { parseAlipayBill } from './alipay.bill';
import { AlipayClient, isFailure, METHODS } from './alipay.client';
import { ALIPAY_PAYMENT_METHODS, alipayPaymentRefusal, createAlipayPayment } from './alipay.payments';
import { AlipayVerifier, parseAlipayTime } from './alipay.verifier';
import { maskIdentifier } from '../payer-masking';

/** Answers that decide nothing: the same out_request_no is sent again later. */
const RETRYABLE_SUB_CODES = new Set([
  'ACQ.SYSTEM_ERROR',
  'aop.ACQ.SYSTEM_ERROR',
  'ACQ.SELLER_BALANCE_NOT_ENOUGH',
  'ACQ.REFUND_FEE_ERROR_FREQUENCY',
]);
const PAID_TRADE_STATUSES = new Set(['TRADE_SUCCESS', 'TRADE_FINISHED']);
const TRADE_NOT_EXIST = 'ACQ.TRADE_NOT_EXIST';
/** alipay.trade.close's word for a trade that is no longer open: paid, finished, or closed already. */
const TRADE_STATUS_ERROR = 'ACQ.TRADE_STATUS_ERROR';
/** The bill query's "no bill (yet)": a day's bill comes after 9:00 the next day. */
const BILL_NOT_EXIST = 'isp.bill_not_exist';

/** out_trade_no in Alipay's trade APIs: at most 64 letters, digits or underscores. */
export const ALIPAY_OUT_TRADE_NO = /^[0-9A-Za-z_]{1,64}$/;

/** The parameters of a notification that identify the buyer. */
const PAYER_PARAMETERS = ['buyer_id', 'buyer_open_id', 'buyer_logon_id', 'buyer_user_id'];
const PAYER_PARAMETER = new RegExp(`(^|&)(${PAYER_PARAMETERS.join('|')})=([^&]*)`, 'g');
/** Of a payer identifier, this many characters stay at each end: enough to tell two apart. */

/** Alipay openapi behind the PaymentChannel port. */
export class AlipayChannel implements PaymentChannel {
  readonly channel = Channel.Alipay;
  readonly notifyPath = 'alipay';
  readonly paymentMethods: readonly PaymentMethod[] = ALIPAY_PAYMENT_METHODS;
  readonly disabledHint =
    'set ALIPAY_APP_ID and ALIPAY_PUBLIC_KEY_PATH, or ALIPAY_PUBLIC_CERT_PATHS and ALIPAY_ROOT_CERT_PATH (or PAYMENT_ACCOUNTS_FILE) to enable';

  constructor(
    private readonly verifier: AlipayVerifier,
    private readonly client: AlipayClient,
    private readonly sellerCheckWaived = false,
  ) {}

  get enabled(): boolean {
    return this.verifier.enabled;
  }

  verify(delivery: RawDelivery): VerifiedNotification {
    return this.verifier.verify(delivery);
  }

  successReply(): PlatformReply {
    return { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'success' };
  }

  failureReply(status: number, message: string): PlatformReply {
    return plainTextFailure(status, message);
  }

  maskPayer(rawBody: Buffer): Buffer {
    const masked = rawBody
      .toString('latin1')
      .replace(
        PAYER_PARAMETER,
        (_match, start: string, name: string, value: string) => `${start}${name}=${maskIdentifier(value)}`,
      );
    return Buffer.from(masked, 'latin1');
  }

  orderNoRefusal(orderNo: string): string | undefined {
    if (ALIPAY_OUT_TRADE_NO.test(orderNo)) return undefined;
    return 'Alipay takes an orderNo (out_trade_no) of at most 64 letters, digits or underscores';
  }

  accountIds(): string[] {
    return this.verifier.appIds();
  }

  /** Alipay accounts have no sub-merchants here. */
  subMerchantIds(): string[] {
    return [];
  }

  apiAccounts(): string[] {
    return this.client.appIds();
  }

  /** Public keys carry no id (the app id names each); certificate mode shows its SNs. */
  keyIds(): string[] {
    return this.verifier.certSns();
  }

  waivedChecks(): string[] {
    return this.sellerCheckWaived
      ? ['the seller_id check of apps without a seller id (ALIPAY_SELLER_CHECK_WAIVED)']
      : [];
  }

  apiUnavailableReason(merchantId: string | undefined): string | undefined {
    return this.client.unavailableReason(merchantId);
  }

  async refund(request: RefundRequest): Promise<ChannelRefundResult> {
    const answer = await this.client.call(request.merchantId, METHODS.refund, {
      trade_no: request.transactionId,
      out_request_no: request.refundNo,
      refund_amount: formatYuan(request.amount),
      refund_reason: request.reason,
    });
    if (isFailure(answer)) return { outcome: 'RETRY', detail: answer.failure };
    const { verified } = answer;
    if (verified.code === '10000') {
      // fund_change N: this out_request_no was refunded before, or is not final yet; the query tells.
      return { outcome: verified.fund_change === 'Y' ? 'SUCCEEDED' : 'PROCESSING' };
    }
    const detail = describe('Alipay refused the refund', verified);
    // 40004 is a business decision; everything else (20000 unavailable, 4000x request problems) decides nothing.
    return verified.code === '40004' && !RETRYABLE_SUB_CODES.has(verified.sub_code ?? '')
      ? { outcome: 'CLOSED', detail }
      : { outcome: 'RETRY', detail };
  }

  /**
   * Only REFUND_SUCCESS says the refund happened. Alipay's rule: an answer without it means it did
   * not (or not yet, right after the request), and the refund may be sent again with the same
   * out_request_no; its query has no word for "refused", so it is never CLOSED here.
   */
  async queryRefund(request: RefundRequest): Promise<ChannelRefundResult> {
    const answer = await this.client.call(request.merchantId, METHODS.refundQuery, {
      trade_no: request.transactionId,
      out_request_no: request.refundNo,
    });
    if (isFailure(answer)) return { outcome: 'RETRY', detail: answer.failure };
    const { verified } = answer;
    if (verified.code !== '10000') {
      return { outcome: 'RETRY', detail: `Alipay refund query: ${verified.code} ${verified.sub_code ?? ''}`.trim() };
    }
    return { outcome: verified.refund_status === 'REFUND_SUCCESS' ? 'SUCCEEDED' : 'NOT_REFUNDED' };
  }

  async queryTrade(trade: TradeRef): Promise<TradeQueryResult> {
    const answer = await this.client.call(trade.merchantId, METHODS.tradeQuery, { out_trade_no: trade.orderNo });
    if (isFailure(answer)) return { outcome: 'FAILED', detail: answer.failure };
    const { verified, text } = answer;
    if (verified.code !== '10000') {
      return verified.sub_code === TRADE_NOT_EXIST
        ? { outcome: 'NOT_FOUND', detail: TRADE_NOT_EXIST }
        : { outcome: 'FAILED', detail: describe('Alipay trade query', verified) };
    }
    if (verified.out_trade_no !== trade.orderNo) {
      return { outcome: 'FOREIGN', detail: `answer is about out_trade_no ${verified.out_trade_no}` };
    }
    const status = verified.trade_status ?? '';
    if (!PAID_TRADE_STATUSES.has(status)) return { outcome: 'NOT_PAID', detail: `trade_status ${status}` };
    try {
      return {
        outcome: 'PAID',
        payment: {
          channel: this.channel,
          merchantId: trade.merchantId,
          eventType: `QUERY/${status}`,
          paid: true,
          outTradeNo: trade.orderNo,
          transactionId: requireField(verified, 'trade_no'),
          amount: parseDecimalAmount(verified.total_amount ?? '', 'total_amount'),
          currency: 'CNY',
          paidAt: parseAlipayTime(requireField(verified, 'send_pay_date')),
          rawBody: Buffer.from(text, 'utf8'),
          headers: {},
        },
      };
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return { outcome: 'FAILED', detail: error.message };
    }
  }

  async closeTrade(trade: TradeRef): Promise<TradeCloseResult> {
    const answer = await this.client.call(trade.merchantId, METHODS.tradeClose, { out_trade_no: trade.orderNo });
    if (isFailure(answer)) return { outcome: 'FAILED', detail: answer.failure };
    const { verified } = answer;
    if (verified.code === '10000') return { outcome: 'CLOSED' };
    if (verified.sub_code === TRADE_NOT_EXIST) return { outcome: 'NOT_FOUND', detail: TRADE_NOT_EXIST };
    // Paid, finished or already closed: the trade query that follows tells which.
    if (verified.sub_code === TRADE_STATUS_ERROR) return { outcome: 'PAID', detail: TRADE_STATUS_ERROR };
    return { outcome: 'FAILED', detail: describe('Alipay trade close', verified) };
  }

  createPaymentRefusal(request: CreatePaymentRequest): string | undefined {
    return alipayPaymentRefusal(request);
  }

  /** Page, wap and app pay are signed here; precreate (QR) and create (mini-program) are calls to the gateway. */
  createPayment(request: CreatePaymentRequest): Promise<CreatePaymentResult> {
    return createAlipayPayment(this.client, request, this.notifyPath, new Date());
  }

  async downloadBill(merchantId: string, date: BillDate): Promise<BillDownload> {
    const answer = await this.client.call(merchantId, METHODS.billDownloadUrl, { bill_type: 'trade', bill_date: date });
    if (isFailure(answer)) return { outcome: 'FAILED', detail: answer.failure };
    const { verified } = answer;
    if (verified.code !== '10000' || !verified.bill_download_url) {
      const detail = describe('Alipay bill download URL query', verified);
      return { outcome: verified.sub_code === BILL_NOT_EXIST ? 'NOT_READY' : 'FAILED', detail };
    }
    const file = await this.client.download(verified.bill_download_url);
    if ('failure' in file) return { outcome: 'FAILED', detail: file.failure };
    return { outcome: 'READY', entries: entriesThenRemove(file.path, parseAlipayBill) };
  }
}

function describe(what: string, answer: Record<string, string | undefined>): string {
  return `${what}: ${answer.code} ${answer.sub_code ?? ''} ${answer.sub_msg ?? answer.msg ?? ''}`
    .replace(/\s+/g, ' ')
    .trim();
}

function requireField(answer: Record<string, string | undefined>, field: string): string {
  const value = answer[field];
  if (!value || value.length > 64) throw new DomainError('MalformedRequest', `answer field ${field} is missing`);
  return value;
}
