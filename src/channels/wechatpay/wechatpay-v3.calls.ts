import { DomainError } from '../../domain/domain-error';
import {
  ChannelRefundResult,
  CreatePaymentRequest,
  CreatePaymentResult,
  RefundRequest,
  TradeCloseResult,
  TradeQueryResult,
  TradeRef,
} from '../../domain/channel-api';
import { Channel, PaymentNotification } from '../../domain/notification';
import { BillDate, BillDownload } from '../../domain/bill';
import { entriesThenRemove, openMaybeGzipped, removeFile, sha1Hex } from '../bill-file';
import { parseWechatpayBill } from './wechatpay.bill';
import { WechatpayAccount } from './wechatpay.config';
import { CallFailure, isFailure, VerifiedAnswer, WechatpayClient } from './wechatpay.client';
import { readTransaction } from './wechatpay.verifier';
import { asDirectResource, isPartner, partnerPaths, subMerchantRefusal, subMerchantsToAsk } from './wechatpay.partner';
import {
  appsOf,
  beijingRfc3339,
  H5_URL_VALIDITY_MS,
  PREPAY_VALIDITY_MS,
  prepayBuyer,
  wechatpayMethod,
} from './wechatpay.payments';

const REFUND_PATH = '/v3/refund/domestic/refunds';
const TRADE_PATH = '/v3/pay/transactions/out-trade-no';
const REFUND_STATUSES: Record<string, ChannelRefundResult['outcome'] | undefined> = {
  SUCCESS: 'SUCCEEDED',
  PROCESSING: 'PROCESSING',
  CLOSED: 'CLOSED',
  ABNORMAL: 'ABNORMAL',
};
/** Error codes that say nothing was decided: the same request (same out_refund_no) is sent again later. */
const RETRYABLE_CODES = new Set(['SYSTEM_ERROR', 'FREQUENCY_LIMITED', 'NOT_ENOUGH', 'SIGN_ERROR', 'NO_AUTH']);
/** trade_state values of a trade whose money was taken (REFUND: taken, then refunded in part or whole). */
const PAID_TRADE_STATES = new Set(['SUCCESS', 'REFUND']);
const REFUND_NOT_EXIST = 'RESOURCE_NOT_EXISTS';
const NOT_EXIST_CODES = new Set(['ORDER_NOT_EXIST', REFUND_NOT_EXIST]);
/** The tradebill API's "not generated yet" (bills of a day come after 9:00 the next day). */
const BILL_NOT_READY_CODES = new Set(['NO_STATEMENT_EXIST', 'STATEMENT_CREATING']);

/** What an account's API calls answer, whichever WeChat Pay API (APIv3's JSON, APIv2's XML) makes them. */
export interface WechatpayApiCalls {
  unavailableReason(merchantId: string | undefined): string | undefined;
  refund(request: RefundRequest): Promise<ChannelRefundResult>;
  queryRefund(request: RefundRequest): Promise<ChannelRefundResult>;
  queryTrade(trade: TradeRef): Promise<TradeQueryResult>;
  closeTrade(trade: TradeRef): Promise<TradeCloseResult>;
  downloadBill(merchantId: string, date: BillDate, subMerchantId?: string): Promise<BillDownload>;
  /** The account's notification path (notify_url's last segment): APIv3's or APIv2's endpoint. */
  readonly notifyPath: string;
  createPayment(request: CreatePaymentRequest): Promise<CreatePaymentResult>;
}

export interface WechatpayV3CallOptions {
  refundNotifyUrl?: string;
}

/**
 * Refunds, queries, closes and bills through APIv3 (JSON, signed WECHATPAY2-SHA256-RSA2048): every
 * account with APIv3 credentials, a service provider's sub-merchants included. Never throws.
 */
export class WechatpayV3Calls implements WechatpayApiCalls {
  private readonly channel = Channel.Wechatpay;
  readonly notifyPath = 'wechatpay';

  constructor(
    private readonly accounts: WechatpayAccount[],
    private readonly client: WechatpayClient,
    private readonly options: WechatpayV3CallOptions = {},
  ) {}

  mchids(): string[] {
    return this.client.mchids();
  }

  unavailableReason(merchantId: string | undefined): string | undefined {
    return this.client.unavailableReason(merchantId);
  }

  async refund(request: RefundRequest): Promise<ChannelRefundResult> {
    const refusal = this.subMerchantRefusal(request);
    if (refusal) return { outcome: 'RETRY', detail: refusal };
    const body = JSON.stringify({
      // A service provider refunds for the sub-merchant that took the payment.
      ...(request.subMerchantId === undefined ? {} : { sub_mchid: request.subMerchantId }),
      transaction_id: request.transactionId,
      out_refund_no: request.refundNo,
      reason: request.reason.slice(0, 80),
      ...(this.options.refundNotifyUrl ? { notify_url: this.options.refundNotifyUrl } : {}),
      amount: { refund: request.amount, total: request.transactionAmount, currency: request.currency },
    });
    const answer = await this.client.call(request.merchantId, 'POST', REFUND_PATH, body);
    if (isFailure(answer)) return retry(answer);
    if (!answer.ok) {
      const detail = `WeChat Pay refused the refund: ${answer.code} ${answer.message}`.trim();
      return RETRYABLE_CODES.has(answer.code) || answer.status === 429
        ? { outcome: 'RETRY', detail }
        : { outcome: 'CLOSED', detail };
    }
    return readRefund(answer.body);
  }

  async queryRefund(request: RefundRequest): Promise<ChannelRefundResult> {
    const refusal = this.subMerchantRefusal(request);
    if (refusal) return { outcome: 'RETRY', detail: refusal };
    const refundPath = `${REFUND_PATH}/${encodeURIComponent(request.refundNo)}`;
    const path =
      request.subMerchantId === undefined ? refundPath : partnerPaths.refundQuery(refundPath, request.subMerchantId);
    const answer = await this.client.call(request.merchantId, 'GET', path, '');
    if (isFailure(answer)) return retry(answer);
    // WeChat Pay has no refund under this number: it did not happen (sent again after REFUND_PROCESSING_MAX_AGE_SECONDS).
    if (answer.code === REFUND_NOT_EXIST) return { outcome: 'NOT_REFUNDED', detail: REFUND_NOT_EXIST };
    if (!answer.ok) return { outcome: 'RETRY', detail: `WeChat Pay refund query: ${answer.code} ${answer.message}` };
    return readRefund(answer.body);
  }

  async queryTrade(trade: TradeRef): Promise<TradeQueryResult> {
    const account = this.account(trade.merchantId);
    if (!account || !isPartner(account)) {
      const path = `${TRADE_PATH}/${encodeURIComponent(trade.orderNo)}?mchid=${encodeURIComponent(trade.merchantId)}`;
      return this.queryTradeAt(trade, path);
    }
    // A service provider's trade lives at one sub-merchant: the order's, or each configured one in turn.
    let result: TradeQueryResult = { outcome: 'NOT_FOUND', detail: 'no sub-merchant has the trade' };
    for (const subMchid of subMerchantsToAsk(account, trade.subMerchantId)) {
      const refusal = subMerchantRefusal(account, subMchid);
      if (refusal) return { outcome: 'FAILED', detail: refusal };
      const path = partnerPaths.trade(trade.orderNo, account.mchid, subMchid);
      result = await this.queryTradeAt({ ...trade, subMerchantId: subMchid }, path);
      if (result.outcome !== 'NOT_FOUND') return result;
    }
    return result;
  }

  private async queryTradeAt(trade: TradeRef, path: string): Promise<TradeQueryResult> {
    const answer = await this.client.call(trade.merchantId, 'GET', path, '');
    if (isFailure(answer)) return { outcome: 'FAILED', detail: answer.failure };
    if (!answer.ok) {
      return NOT_EXIST_CODES.has(answer.code)
        ? { outcome: 'NOT_FOUND', detail: answer.code }
        : { outcome: 'FAILED', detail: `WeChat Pay trade query: ${answer.code} ${answer.message}`.trim() };
    }
    return this.readTrade(answer.body, trade, Buffer.from(answer.text, 'utf8'));
  }

  async closeTrade(trade: TradeRef): Promise<TradeCloseResult> {
    const account = this.account(trade.merchantId);
    if (!account || !isPartner(account)) {
      const path = `${TRADE_PATH}/${encodeURIComponent(trade.orderNo)}/close`;
      return this.closeTradeAt(trade, path, JSON.stringify({ mchid: trade.merchantId }));
    }
    // Closed at every sub-merchant it may live at: paid at one is PAID, no answer from one is FAILED.
    const results: TradeCloseResult[] = [];
    for (const subMchid of subMerchantsToAsk(account, trade.subMerchantId)) {
      const refusal = subMerchantRefusal(account, subMchid);
      if (refusal) return { outcome: 'FAILED', detail: refusal };
      const body = partnerPaths.closeBody(account.mchid, subMchid);
      const result = await this.closeTradeAt(trade, partnerPaths.close(trade.orderNo), body);
      if (result.outcome === 'PAID') return result;
      results.push(result);
    }
    return (
      results.find((r) => r.outcome === 'FAILED') ??
      results.find((r) => r.outcome === 'CLOSED') ?? { outcome: 'NOT_FOUND', detail: 'no sub-merchant has the trade' }
    );
  }

  private async closeTradeAt(trade: TradeRef, path: string, body: string): Promise<TradeCloseResult> {
    const answer = await this.client.call(trade.merchantId, 'POST', path, body);
    if (isFailure(answer)) return { outcome: 'FAILED', detail: answer.failure };
    if (answer.ok || answer.code === 'ORDER_CLOSED') return { outcome: 'CLOSED' };
    if (answer.code === 'ORDERPAID') return { outcome: 'PAID', detail: answer.code };
    if (NOT_EXIST_CODES.has(answer.code)) return { outcome: 'NOT_FOUND', detail: answer.code };
    return { outcome: 'FAILED', detail: `WeChat Pay close: ${answer.code} ${answer.message}`.trim() };
  }

  async downloadBill(merchantId: string, date: BillDate, subMerchantId?: string): Promise<BillDownload> {
    // A service provider downloads the bill of one sub-merchant at a time (sub_mchid).
    const sub = subMerchantId === undefined ? '' : `&sub_mchid=${encodeURIComponent(subMerchantId)}`;
    const query = `bill_date=${date}&bill_type=ALL&tar_type=GZIP${sub}`;
    const answer = await this.client.call(merchantId, 'GET', `/v3/bill/tradebill?${query}`, '');
    if (isFailure(answer)) return { outcome: 'FAILED', detail: answer.failure };
    if (!answer.ok) {
      const detail = `WeChat Pay tradebill: ${answer.code} ${answer.message}`.trim();
      return { outcome: BILL_NOT_READY_CODES.has(answer.code) ? 'NOT_READY' : 'FAILED', detail };
    }
    const { download_url: url, hash_type: hashType, hash_value: hashValue } = answer.body;
    if (typeof url !== 'string' || hashType !== 'SHA1' || typeof hashValue !== 'string') {
      return { outcome: 'FAILED', detail: `WeChat Pay tradebill answered no download_url with a SHA1 hash` };
    }
    const file = await this.client.download(merchantId, url);
    if ('failure' in file) return { outcome: 'FAILED', detail: file.failure };
    // hash_value is the SHA1 of the bill itself, gunzipped when it came as GZIP.
    const actual = await sha1Hex(await openMaybeGzipped(file.path));
    if (actual !== hashValue.toLowerCase()) {
      await removeFile(file.path);
      return {
        outcome: 'FAILED',
        detail: `the bill's SHA1 ${actual} is not the hash_value ${hashValue} WeChat Pay gave`,
      };
    }
    return {
      outcome: 'READY',
      entries: entriesThenRemove(file.path, async function* (path) {
        yield* parseWechatpayBill(await openMaybeGzipped(path), merchantId, subMerchantId);
      }),
    };
  }

  /**
   * POST /v3/pay/transactions/{jsapi,native,h5,app} (direct) or /v3/pay/partner/transactions/…
   * (service provider), with the order's terms; the buyer's parameters from its answer.
   */
  async createPayment(request: CreatePaymentRequest): Promise<CreatePaymentResult> {
    const account = this.account(request.merchantId)!;
    const method = wechatpayMethod(request.method);
    const apps = appsOf(account, request);
    const partner = isPartner(account);
    const terms = {
      description: request.description.slice(0, 127),
      out_trade_no: request.orderNo,
      time_expire: beijingRfc3339(request.expiresAt),
      notify_url: `${request.notifyBaseUrl}/${this.notifyPath}`,
      amount: { total: request.amount, currency: request.currency },
      ...payerOf(request, partner, apps.subAppid !== undefined),
    };
    const body = JSON.stringify(
      partner
        ? {
            sp_appid: apps.appid,
            sp_mchid: account.mchid,
            ...(apps.subAppid ? { sub_appid: apps.subAppid } : {}),
            sub_mchid: request.subMerchantId,
            ...terms,
          }
        : { appid: apps.appid, mchid: account.mchid, ...terms },
    );
    const path = `/v3/pay/${partner ? 'partner/' : ''}transactions/${method.v3Path}`;
    const answer = await this.client.call(account.mchid, 'POST', path, body);
    if (isFailure(answer)) return { outcome: 'RETRY', detail: answer.failure };
    if (!answer.ok) {
      if (RETRYABLE_CODES.has(answer.code) || answer.status === 429) {
        return { outcome: 'RETRY', detail: `WeChat Pay: ${answer.code} ${answer.message}`.trim() };
      }
      return { outcome: 'REFUSED', code: answer.code, message: answer.message };
    }
    const now = new Date();
    const field = (name: string): string | undefined =>
      typeof answer.body[name] === 'string' && answer.body[name] !== '' ? answer.body[name] : undefined;
    if (method.name === 'NATIVE' || method.name === 'H5') {
      const name = method.name === 'NATIVE' ? 'code_url' : 'h5_url';
      const url = field(name);
      if (!url) return { outcome: 'RETRY', detail: `WeChat Pay answered no ${name}` };
      const validity = method.name === 'NATIVE' ? PREPAY_VALIDITY_MS : H5_URL_VALIDITY_MS;
      return { outcome: 'CREATED', buyer: { params: { [name]: url } }, validUntil: new Date(now.getTime() + validity) };
    }
    const prepayId = field('prepay_id');
    if (!prepayId) return { outcome: 'RETRY', detail: 'WeChat Pay answered no prepay_id' };
    const partnerId = partner ? request.subMerchantId! : account.mchid;
    const sign = (message: string) => this.client.signForBuyer(account.mchid, message)!;
    return {
      outcome: 'CREATED',
      buyer: { params: prepayBuyer(method.name, apps, partnerId, prepayId, sign, now) },
      validUntil: new Date(now.getTime() + PREPAY_VALIDITY_MS),
      channelTradeId: prepayId,
    };
  }

  /** The account a payment or order names (the only one, when it names none). */
  private account(merchantId: string | undefined): WechatpayAccount | undefined {
    const mchid = this.client.resolve(merchantId);
    return this.accounts.find((a) => a.mchid === mchid);
  }

  private subMerchantRefusal(request: RefundRequest): string | undefined {
    const account = this.account(request.merchantId);
    return account && subMerchantRefusal(account, request.subMerchantId);
  }

  /** A verified transaction object: paid, not paid, or not about our account and order at all. */
  private readTrade(tx: Record<string, unknown>, trade: TradeRef, rawBody: Buffer): TradeQueryResult {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a field of the platform's JSON, as it came: anything but a known state is refused below
    const state = String(tx.trade_state ?? '');
    if (tx.out_trade_no !== trade.orderNo) {
      return { outcome: 'FOREIGN', detail: `answer is about out_trade_no ${String(tx.out_trade_no)}` };
    }
    if (!PAID_TRADE_STATES.has(state)) return { outcome: 'NOT_PAID', detail: `trade_state ${state}` };
    const account = this.accounts.find((a) => a.mchid === trade.merchantId)!;
    try {
      const { resource, subMerchantId } = asDirectResource(tx, account);
      if (subMerchantId !== trade.subMerchantId) {
        return { outcome: 'FOREIGN', detail: `answer is about sub_mchid ${subMerchantId ?? '(none)'}` };
      }
      const fields = readTransaction({ ...resource, trade_state: 'SUCCESS' }, account);
      const payment: PaymentNotification = {
        ...fields,
        ...(subMerchantId === undefined ? {} : { subMerchantId }),
        paid: true,
        channel: this.channel,
        eventType: `QUERY/${state}`,
        rawBody,
        headers: {},
      };
      return { outcome: 'PAID', payment };
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      const outcome = error.code === 'MerchantMismatch' ? 'FOREIGN' : 'FAILED';
      return { outcome, detail: error.message };
    }
  }
}

/** The payer and scene of a create request: payer.openid (sp_openid / sub_openid in partner mode), H5's scene_info. */
function payerOf(request: CreatePaymentRequest, partner: boolean, subApp: boolean): Record<string, unknown> {
  const { openid, clientIp, h5Type } = request.payer;
  const openidField = !partner ? 'openid' : subApp ? 'sub_openid' : 'sp_openid';
  return {
    ...(openid !== undefined && (request.method === 'JSAPI' || request.method === 'MINI_PROGRAM')
      ? { payer: { [openidField]: openid } }
      : {}),
    ...(request.method === 'H5' ? { scene_info: { payer_client_ip: clientIp, h5_info: { type: h5Type } } } : {}),
  };
}

function retry(answer: CallFailure): ChannelRefundResult {
  return { outcome: 'RETRY', detail: answer.failure };
}

/** A refund object (the POST's and the query's answer) as a result. */
function readRefund(answer: VerifiedAnswer['body']): ChannelRefundResult {
  const outcome = REFUND_STATUSES[String(answer.status)];
  const channelRefundId = typeof answer.refund_id === 'string' ? answer.refund_id : undefined;
  if (!outcome) return { outcome: 'RETRY', detail: `WeChat Pay answered unknown status ${String(answer.status)}` };
  if (outcome === 'CLOSED' || outcome === 'ABNORMAL') {
    return { outcome, channelRefundId, detail: `WeChat Pay refund status ${String(answer.status)}` };
  }
  return { outcome, channelRefundId };
}
