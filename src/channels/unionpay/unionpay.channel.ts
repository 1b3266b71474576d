import { BillDate, BillDownload } from '../../domain/bill';
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
import { DomainError } from '../../domain/domain-error';
import { Channel, RawDelivery, VerifiedNotification } from '../../domain/notification';
import { entriesThenRemove } from '../bill-file';
import { PaymentChannel, plainTextFailure, PlatformReply } from '../payment-channel';
import { parseUnionpayBill, saveFileContent } from './unionpay.bill';
import { isFailure, UnionpayClient } from './unionpay.client';
import { formatTxnTime, parseTxnTime } from './unionpay.message';
import { createUnionpayPayment, UNIONPAY_PAYMENT_METHODS, unionpayPaymentRefusal } from './unionpay.payments';
import {
  readAmount,
  readCurrency,
  requireField,
  SUCCESS_RESP_CODES,
  TxnType,
  UnionpayVerifier,
} from './unionpay.verifier';

/** orderId in acp 5.1.0: 8 to 40 letters or digits. */
export const UNIONPAY_ORDER_ID = /^[0-9A-Za-z]{8,40}$/;

/** "Unknown, ask again": the gateway's word for a request whose outcome it cannot tell yet. */
const PENDING_RESP_CODES = new Set(['03', '04', '05']);
/** queryTrans's "no such transaction". */
const NOT_FOUND_RESP_CODE = '34';
/**
 * backTrans's "duplicate transaction": a request under this orderId was taken already (an orderId
 * may not repeat within a day). Says nothing of how the first one ended: never a refusal.
 */
const DUPLICATE_RESP_CODE = '12';
/** fileTransfer's "no file for this date (yet)". */
const NO_FILE_RESP_CODES = new Set(['98', '34']);

/** The fields of a notification that identify the card holder. */
const PAYER_FIELDS = ['accNo', 'payCardNo', 'customerInfo', 'phoneNo', 'tokenPayData', 'payerInfo'];
const PAYER_FIELD = new RegExp(`(^|&)(${PAYER_FIELDS.join('|')})=([^&]*)`, 'g');
const KEPT_AT_EACH_END = 2;

/**
 * How the answers about a refund's several sends add up, strongest first: money that left wins; then a
 * request still in hand; then no trustworthy word; a failure only when no send is in doubt; NOT_REFUNDED
 * only when UnionPay has none of them.
 */
const REFUND_QUERY_VERDICTS: ReadonlyArray<ChannelRefundResult['outcome']> = [
  'SUCCEEDED',
  'PROCESSING',
  'RETRY',
  'CLOSED',
  'NOT_REFUNDED',
];

export interface UnionpayChannelSettings {
  /** Where UnionPay posts refund results: our POST /notify/unionpay. */
  backUrl?: string;
}

/** UnionPay online payments (acp 5.1.0) behind the PaymentChannel port. */
export class UnionpayChannel implements PaymentChannel {
  readonly channel = Channel.Unionpay;
  readonly notifyPath = 'unionpay';
  readonly paymentMethods: readonly PaymentMethod[] = UNIONPAY_PAYMENT_METHODS;
  readonly disabledHint =
    'set UNIONPAY_MER_ID, UNIONPAY_ROOT_CERT_PATH and UNIONPAY_MIDDLE_CERT_PATH (or PAYMENT_ACCOUNTS_FILE) to enable';

  constructor(
    private readonly verifier: UnionpayVerifier,
    private readonly client: UnionpayClient,
    private readonly settings: UnionpayChannelSettings,
  ) {}

  get enabled(): boolean {
    return this.verifier.enabled;
  }

  verify(delivery: RawDelivery): VerifiedNotification {
    return this.verifier.verify(delivery);
  }

  /** Any HTTP 200 acks a UnionPay notification. */
  successReply(): PlatformReply {
    return { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'ok' };
  }

  /** Anything but 200 makes UnionPay deliver again later. */
  failureReply(status: number, message: string): PlatformReply {
    return plainTextFailure(status === 200 ? 500 : status, message);
  }

  orderNoRefusal(orderNo: string): string | undefined {
    if (UNIONPAY_ORDER_ID.test(orderNo)) return undefined;
    return 'UnionPay takes an orderNo (orderId) of 8 to 40 letters or digits';
  }

  /** queryTrans finds a consumption by orderId AND its txnTime: an order for UnionPay must say when it is sent. */
  orderRegistrationRefusal(order: { orderNo: string; channelOrderTime?: string }): string | undefined {
    if (order.channelOrderTime !== undefined) return undefined;
    return 'UnionPay finds an order by its orderId and txnTime: channelOrderTime (the txnTime its consumption is sent with, yyyyMMddHHmmss Beijing time) is required with channel UNIONPAY';
  }

  maskPayer(rawBody: Buffer): Buffer {
    const masked = rawBody
      .toString('latin1')
      .replace(PAYER_FIELD, (_match, start: string, name: string, value: string) => `${start}${name}=${mask(value)}`);
    return Buffer.from(masked, 'latin1');
  }

  accountIds(): string[] {
    return this.verifier.merchantIds();
  }

  /** The serials of UnionPay's root and middle certificates that every signing certificate must chain to. */
  keyIds(): string[] {
    return this.verifier.keyIds();
  }

  apiAccounts(): string[] {
    return this.verifier.enabled ? this.client.merIds() : [];
  }

  /** UnionPay merchants have no sub-merchants here. */
  subMerchantIds(): string[] {
    return [];
  }

  apiUnavailableReason(merchantId: string | undefined): string | undefined {
    return this.client.unavailableReason(merchantId);
  }

  /**
   * A refund (txnType 04) of the payment's queryId, under our refund number as its orderId and the
   * time of this send as its txnTime (kept on the refund: queryTrans finds it by both). An accepted
   * request (00) is PROCESSING: UnionPay tells the result by a notification to backUrl.
   */
  async refund(request: RefundRequest): Promise<ChannelRefundResult> {
    const refusal = this.refundRefusal(request);
    if (refusal) return refusal;
    const sentAt = request.sendTimes?.at(-1);
    if (!sentAt)
      return { outcome: 'RETRY', detail: `UnionPay refund ${request.refundNo} has no send time to send it with` };
    const answer = await this.client.call(request.merchantId, 'backTrans', {
      txnType: TxnType.Refund,
      txnSubType: '00',
      bizType: '000201',
      channelType: '07',
      orderId: request.refundNo,
      origQryId: request.transactionId,
      txnAmt: String(request.amount),
      currencyCode: '156',
      backUrl: this.settings.backUrl!,
      txnTime: formatTxnTime(sentAt),
    });
    if (isFailure(answer)) return { outcome: 'RETRY', detail: answer.failure };
    const respCode = answer.fields.get('respCode') ?? '';
    const channelRefundId = answer.fields.get('queryId') || undefined;
    if (SUCCESS_RESP_CODES.has(respCode) || PENDING_RESP_CODES.has(respCode)) {
      return { outcome: 'PROCESSING', channelRefundId };
    }
    const detail = describe('UnionPay refused the refund', answer.fields);
    return { outcome: respCode === DUPLICATE_RESP_CODE ? 'RETRY' : 'CLOSED', detail };
  }

  private refundRefusal(request: RefundRequest): ChannelRefundResult | undefined {
    if (!this.settings.backUrl) {
      return { outcome: 'RETRY', detail: 'UnionPay refunds need UNIONPAY_BACK_URL, where their results are posted' };
    }
    if (request.currency !== 'CNY') {
      return { outcome: 'CLOSED', detail: `UnionPay refunds CNY only, not ${request.currency}` };
    }
    if (!UNIONPAY_ORDER_ID.test(request.refundNo)) {
      return { outcome: 'CLOSED', detail: 'UnionPay takes a refund number (orderId) of 8 to 40 letters or digits' };
    }
    return undefined;
  }

  /**
   * queryTrans of the refund under each txnTime it was sent with: UnionPay knows a request by its
   * orderId and txnTime. A refund made under any of them is the refund; one still in hand is
   * PROCESSING; NOT_REFUNDED only when none of them exists at UnionPay.
   */
  async queryRefund(request: RefundRequest): Promise<ChannelRefundResult> {
    const sendTimes = request.sendTimes ?? [];
    if (sendTimes.length === 0) {
      return {
        outcome: 'PROCESSING',
        detail: `UnionPay refund ${request.refundNo}: no send time is known to ask with`,
      };
    }
    const answers: ChannelRefundResult[] = [];
    for (const sentAt of sendTimes) answers.push(await this.querySentRefund(request, formatTxnTime(sentAt)));
    return REFUND_QUERY_VERDICTS.map((outcome) => answers.find((a) => a.outcome === outcome)).find(Boolean)!;
  }

  private async querySentRefund(request: RefundRequest, txnTime: string): Promise<ChannelRefundResult> {
    const answer = await this.client.call(request.merchantId, 'queryTrans', {
      txnType: TxnType.Query,
      txnSubType: '00',
      bizType: '000000',
      orderId: request.refundNo,
      txnTime,
    });
    if (isFailure(answer)) return { outcome: 'RETRY', detail: answer.failure };
    const { fields } = answer;
    const respCode = fields.get('respCode') ?? '';
    if (respCode === NOT_FOUND_RESP_CODE) return { outcome: 'NOT_REFUNDED', detail: `no refund sent at ${txnTime}` };
    if (respCode !== '00') return { outcome: 'RETRY', detail: describe('UnionPay queryTrans', fields) };
    if (fields.get('orderId') !== request.refundNo || fields.get('txnAmt') !== String(request.amount)) {
      return { outcome: 'RETRY', detail: `UnionPay queryTrans answered about another refund than ${request.refundNo}` };
    }
    const origRespCode = fields.get('origRespCode') ?? '';
    const channelRefundId = fields.get('queryId') || undefined;
    if (SUCCESS_RESP_CODES.has(origRespCode)) return { outcome: 'SUCCEEDED', channelRefundId };
    if (PENDING_RESP_CODES.has(origRespCode)) return { outcome: 'PROCESSING', channelRefundId };
    return { outcome: 'CLOSED', channelRefundId, detail: `UnionPay refund failed: origRespCode ${origRespCode}` };
  }

  /**
   * queryTrans (txnType 00) of the order; origRespCode tells how the consumption ended. UnionPay
   * finds a consumption by its orderId and the txnTime it was sent with: the order's
   * channelOrderTime. Without it the query is not sent (a guessed time finds nothing, or another order).
   */
  async queryTrade(trade: TradeRef): Promise<TradeQueryResult> {
    if (!trade.channelOrderTime) {
      return {
        outcome: 'FAILED',
        detail: `order ${trade.orderNo} was registered without channelOrderTime (UnionPay's txnTime), so it cannot be queried`,
      };
    }
    const answer = await this.client.call(trade.merchantId, 'queryTrans', {
      txnType: TxnType.Query,
      txnSubType: '00',
      bizType: '000000',
      orderId: trade.orderNo,
      txnTime: trade.channelOrderTime,
    });
    if (isFailure(answer)) return { outcome: 'FAILED', detail: answer.failure };
    const { fields, text } = answer;
    const respCode = fields.get('respCode') ?? '';
    if (respCode === NOT_FOUND_RESP_CODE) return { outcome: 'NOT_FOUND', detail: 'respCode 34: no such transaction' };
    if (respCode !== '00') return { outcome: 'FAILED', detail: describe('UnionPay queryTrans', fields) };
    if (fields.get('orderId') !== trade.orderNo) {
      return { outcome: 'FOREIGN', detail: `answer is about orderId ${fields.get('orderId')?.slice(0, 64)}` };
    }
    const origRespCode = fields.get('origRespCode') ?? '';
    if (!SUCCESS_RESP_CODES.has(origRespCode)) return { outcome: 'NOT_PAID', detail: `origRespCode ${origRespCode}` };
    try {
      return {
        outcome: 'PAID',
        payment: {
          channel: this.channel,
          merchantId: fields.get('merId')!,
          eventType: `QUERY/${origRespCode}`,
          paid: true,
          outTradeNo: trade.orderNo,
          transactionId: requireField(fields, 'queryId'),
          amount: readAmount(fields),
          currency: readCurrency(fields),
          paidAt: parseTxnTime(fields.get('txnTime') ?? ''),
          rawBody: Buffer.from(text, 'utf8'),
          headers: {},
        },
      };
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return { outcome: 'FAILED', detail: error.message };
    }
  }

  createPaymentRefusal(request: CreatePaymentRequest): string | undefined {
    return unionpayPaymentRefusal(request);
  }

  /** UnionPay knows a consumption by its orderId and txnTime: the txnTime an order is sent with, for `at`. */
  orderTimeOf(at: Date): string {
    return formatTxnTime(at);
  }

  /** The front consumption form (PC and mobile web) is signed here; the app's tn is an appTransReq to the gateway. */
  createPayment(request: CreatePaymentRequest): Promise<CreatePaymentResult> {
    return createUnionpayPayment(this.client, request, this.notifyPath);
  }

  /** UnionPay has no close: an unpaid consumption simply expires (payTimeout). The order closes here only. */
  async closeTrade(trade: TradeRef): Promise<TradeCloseResult> {
    await Promise.resolve();
    return { outcome: 'NOT_APPLICABLE', detail: `UnionPay has no close for orderId ${trade.orderNo}` };
  }

  /** fileTransfer (txnType 76) of the day's files; the ZM file's payments and refunds. */
  async downloadBill(merchantId: string, date: BillDate): Promise<BillDownload> {
    const answer = await this.client.call(merchantId, 'fileTransfer', {
      txnType: TxnType.FileTransfer,
      txnSubType: '01',
      bizType: '000000',
      fileType: '00',
      settleDate: date.slice(5, 7) + date.slice(8, 10),
    });
    if (isFailure(answer)) return { outcome: 'FAILED', detail: answer.failure };
    const respCode = answer.fields.get('respCode') ?? '';
    const fileContent = answer.fields.get('fileContent');
    if (respCode !== '00' || !fileContent) {
      const detail = describe('UnionPay fileTransfer', answer.fields);
      return { outcome: NO_FILE_RESP_CODES.has(respCode) ? 'NOT_READY' : 'FAILED', detail };
    }
    let path: string;
    try {
      path = await saveFileContent(fileContent);
    } catch (error) {
      return {
        outcome: 'FAILED',
        detail: `UnionPay fileTransfer: fileContent is not a ZIP (${(error as Error).message})`,
      };
    }
    return { outcome: 'READY', entries: entriesThenRemove(path, (p) => parseUnionpayBill(p, date)) };
  }
}

function describe(what: string, fields: Map<string, string>): string {
  return `${what}: respCode ${fields.get('respCode') ?? '(none)'} ${fields.get('respMsg') ?? ''}`.trim().slice(0, 300);
}

function mask(value: string): string {
  if (value.length <= 2 * KEPT_AT_EACH_END) return '*'.repeat(value.length);
  return `${value.slice(0, KEPT_AT_EACH_END)}${'*'.repeat(value.length - 2 * KEPT_AT_EACH_END)}${value.slice(-KEPT_AT_EACH_END)}`;
}
