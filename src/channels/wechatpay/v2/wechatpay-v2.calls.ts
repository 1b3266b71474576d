import { createReadStream } from 'node:fs';
import { BillDate, BillDownload } from '../../../domain/bill';
import {
  ChannelRefundResult,
  CreatePaymentRequest,
  CreatePaymentResult,
  RefundRequest,
  TradeCloseResult,
  TradeQueryResult,
  TradeRef,
} from '../../../domain/channel-api';
import { DomainError } from '../../../domain/domain-error';
import { Channel, PaymentNotification } from '../../../domain/notification';
import { entriesThenRemove } from '../../bill-file';
import { parseWechatpayBill } from '../wechatpay.bill';
import { isV2Failure, V2Answer, WechatpayV2Client } from './wechatpay-v2.client';
import { readPayment } from './wechatpay-v2.verifier';
import { H5_URL_VALIDITY_MS, nonce, PREPAY_VALIDITY_MS, wechatpayMethod } from '../wechatpay.payments';

/** err_code values that decide nothing: the same out_refund_no is sent again later. */
const RETRYABLE_REFUND_CODES = new Set(['SYSTEMERROR', 'BIZERR_NEED_RETRY', 'NOTENOUGH', 'FREQUENCY_LIMITED']);
const PAID_TRADE_STATES = new Set(['SUCCESS', 'REFUND']);
const REFUND_STATUSES: Record<string, ChannelRefundResult['outcome'] | undefined> = {
  SUCCESS: 'SUCCEEDED',
  PROCESSING: 'PROCESSING',
  REFUNDCLOSE: 'CLOSED',
  CHANGE: 'ABNORMAL',
};
/** downloadbill's return_msg while the day's bill does not exist yet (bills come after 9:00 the next day). */
const BILL_NOT_READY = /no bill exist|bill creating/i;

export interface WechatpayV2CallOptions {
  refundNotifyUrl?: string;
}

/**
 * Refunds, queries, closes and bills of an account that has only an APIv2 key, through v2's XML
 * APIs; an account with APIv3 credentials never comes here. Never throws.
 */
export class WechatpayV2Calls {
  /** APIv2's XML notifications arrive at their own endpoint (wechatpay-v2.endpoint.ts). */
  readonly notifyPath = 'wechatpay-v2';

  constructor(
    private readonly client: WechatpayV2Client,
    private readonly options: WechatpayV2CallOptions = {},
  ) {}

  mchids(): string[] {
    return this.client.mchids();
  }

  handles(merchantId: string | undefined): boolean {
    return this.client.handles(merchantId);
  }

  unavailableReason(merchantId: string | undefined): string | undefined {
    return this.client.unavailableReason(merchantId);
  }

  async refund(request: RefundRequest): Promise<ChannelRefundResult> {
    const answer = await this.client.call(request.merchantId, '/secapi/pay/refund', {
      transaction_id: request.transactionId,
      out_refund_no: request.refundNo,
      total_fee: String(request.transactionAmount),
      refund_fee: String(request.amount),
      refund_fee_type: request.currency,
      refund_desc: request.reason.slice(0, 80),
      ...(this.options.refundNotifyUrl ? { notify_url: this.options.refundNotifyUrl } : {}),
    });
    if (isV2Failure(answer)) return { outcome: 'RETRY', detail: answer.failure };
    const { fields } = answer;
    if (fields.result_code === 'SUCCESS') {
      // Accepted: the refund itself comes later (its notification, or refundquery).
      return { outcome: 'PROCESSING', channelRefundId: fields.refund_id || undefined };
    }
    const detail = `WeChat Pay refused the refund: ${describeError(fields)}`;
    return RETRYABLE_REFUND_CODES.has(fields.err_code) ? { outcome: 'RETRY', detail } : { outcome: 'CLOSED', detail };
  }

  async queryRefund(request: RefundRequest): Promise<ChannelRefundResult> {
    const answer = await this.client.call(request.merchantId, '/pay/refundquery', { out_refund_no: request.refundNo });
    if (isV2Failure(answer)) return { outcome: 'RETRY', detail: answer.failure };
    const { fields } = answer;
    if (fields.result_code !== 'SUCCESS') {
      return fields.err_code === 'REFUNDNOTEXIST'
        ? { outcome: 'NOT_REFUNDED', detail: 'REFUNDNOTEXIST' }
        : { outcome: 'RETRY', detail: `WeChat Pay refund query: ${describeError(fields)}` };
    }
    // The answer lists the trade's refunds as out_refund_no_0, refund_status_0, …: ours by its number.
    const index = Object.keys(fields).find((k) => /^out_refund_no_\d+$/.test(k) && fields[k] === request.refundNo);
    const n = index?.slice('out_refund_no_'.length);
    const outcome = n === undefined ? undefined : REFUND_STATUSES[fields[`refund_status_${n}`]];
    if (!outcome) return { outcome: 'RETRY', detail: `WeChat Pay refund query names no status of ${request.refundNo}` };
    const channelRefundId = fields[`refund_id_${n}`] || undefined;
    if (outcome === 'CLOSED' || outcome === 'ABNORMAL') {
      return { outcome, channelRefundId, detail: `WeChat Pay refund_status ${fields[`refund_status_${n}`]}` };
    }
    return { outcome, channelRefundId };
  }

  async queryTrade(trade: TradeRef): Promise<TradeQueryResult> {
    const answer = await this.client.call(trade.merchantId, '/pay/orderquery', { out_trade_no: trade.orderNo });
    if (isV2Failure(answer)) return { outcome: 'FAILED', detail: answer.failure };
    const { fields } = answer;
    if (fields.result_code !== 'SUCCESS') {
      return fields.err_code === 'ORDERNOTEXIST'
        ? { outcome: 'NOT_FOUND', detail: 'ORDERNOTEXIST' }
        : { outcome: 'FAILED', detail: `WeChat Pay trade query: ${describeError(fields)}` };
    }
    if (fields.mch_id !== trade.merchantId || fields.out_trade_no !== trade.orderNo) {
      return {
        outcome: 'FOREIGN',
        detail: `answer is about mch_id ${fields.mch_id} out_trade_no ${fields.out_trade_no}`,
      };
    }
    if (!PAID_TRADE_STATES.has(fields.trade_state))
      return { outcome: 'NOT_PAID', detail: `trade_state ${fields.trade_state}` };
    return this.paid(answer, trade);
  }

  async closeTrade(trade: TradeRef): Promise<TradeCloseResult> {
    const answer = await this.client.call(trade.merchantId, '/pay/closeorder', { out_trade_no: trade.orderNo });
    if (isV2Failure(answer)) return { outcome: 'FAILED', detail: answer.failure };
    const { fields } = answer;
    if (fields.result_code === 'SUCCESS' || fields.err_code === 'ORDERCLOSED') return { outcome: 'CLOSED' };
    if (fields.err_code === 'ORDERPAID') return { outcome: 'PAID', detail: 'ORDERPAID' };
    if (fields.err_code === 'ORDERNOTEXIST') return { outcome: 'NOT_FOUND', detail: 'ORDERNOTEXIST' };
    return { outcome: 'FAILED', detail: `WeChat Pay close: ${describeError(fields)}` };
  }

  async downloadBill(merchantId: string, date: BillDate): Promise<BillDownload> {
    const answer = await this.client.downloadBill(merchantId, {
      bill_date: date.replaceAll('-', ''),
      bill_type: 'ALL',
    });
    if (isV2Failure(answer)) return { outcome: 'FAILED', detail: answer.failure };
    if ('fields' in answer) {
      const detail = `WeChat Pay downloadbill: ${answer.fields.return_msg ?? answer.fields.return_code}`;
      return { outcome: BILL_NOT_READY.test(answer.fields.return_msg ?? '') ? 'NOT_READY' : 'FAILED', detail };
    }
    return {
      outcome: 'READY',
      entries: entriesThenRemove(answer.path, (path) => parseWechatpayBill(createReadStream(path), merchantId)),
    };
  }

  /** POST /pay/unifiedorder with the order's terms; the buyer's parameters from its answer, MD5-signed with the APIv2 key. */
  async createPayment(request: CreatePaymentRequest): Promise<CreatePaymentResult> {
    const method = wechatpayMethod(request.method);
    const { openid, clientIp, h5Type } = request.payer;
    const jsapi = method.v2TradeType === 'JSAPI';
    const answer = await this.client.call(request.merchantId, '/pay/unifiedorder', {
      ...(request.appId ? { appid: request.appId } : {}),
      ...(request.subMerchantId ? { sub_mch_id: request.subMerchantId } : {}),
      ...(request.subAppId ? { sub_appid: request.subAppId } : {}),
      body: request.description.slice(0, 127),
      out_trade_no: request.orderNo,
      total_fee: String(request.amount),
      fee_type: request.currency,
      // The payer's IP for H5; the API wants one for every trade type.
      spbill_create_ip: clientIp ?? '127.0.0.1',
      time_expire: beijingCompact(request.expiresAt),
      notify_url: `${request.notifyBaseUrl}/${this.notifyPath}`,
      trade_type: method.v2TradeType,
      ...(jsapi && openid ? { [request.subAppId ? 'sub_openid' : 'openid']: openid } : {}),
      ...(method.v2TradeType === 'MWEB' ? { scene_info: JSON.stringify({ h5_info: { type: h5Type } }) } : {}),
    });
    if (isV2Failure(answer)) return { outcome: 'RETRY', detail: answer.failure };
    const { fields } = answer;
    if (fields.result_code !== 'SUCCESS') {
      const code = fields.err_code ?? fields.result_code ?? 'FAIL';
      if (RETRYABLE_CREATE_CODES.has(code)) return { outcome: 'RETRY', detail: `WeChat Pay: ${describeError(fields)}` };
      return { outcome: 'REFUSED', code, message: fields.err_code_des ?? '' };
    }
    const now = new Date();
    if (method.v2TradeType === 'NATIVE' || method.v2TradeType === 'MWEB') {
      const [from, to, validity] =
        method.v2TradeType === 'NATIVE'
          ? ['code_url', 'code_url', PREPAY_VALIDITY_MS]
          : ['mweb_url', 'h5_url', H5_URL_VALIDITY_MS];
      if (!fields[from]) return { outcome: 'RETRY', detail: `WeChat Pay answered no ${from}` };
      return {
        outcome: 'CREATED',
        buyer: { params: { [to]: fields[from] } },
        validUntil: new Date(now.getTime() + validity),
      };
    }
    const prepayId = fields.prepay_id;
    if (!prepayId) return { outcome: 'RETRY', detail: 'WeChat Pay answered no prepay_id' };
    const appId = request.subAppId ?? fields.sub_appid ?? fields.appid;
    const timeStamp = String(Math.floor(now.getTime() / 1000));
    const params: Record<string, string> = jsapi
      ? { appId, timeStamp, nonceStr: nonce(), package: `prepay_id=${prepayId}`, signType: 'MD5' }
      : {
          appid: appId,
          partnerid: request.subMerchantId ?? request.merchantId,
          prepayid: prepayId,
          package: 'Sign=WXPay',
          noncestr: nonce(),
          timestamp: timeStamp,
        };
    const signature = this.client.signForBuyer(request.merchantId, params);
    return {
      outcome: 'CREATED',
      buyer: { params: { ...params, [jsapi ? 'paySign' : 'sign']: signature } },
      validUntil: new Date(now.getTime() + PREPAY_VALIDITY_MS),
      channelTradeId: prepayId,
    };
  }

  private paid({ fields, text }: V2Answer, trade: TradeRef): TradeQueryResult {
    try {
      const payment: PaymentNotification = {
        ...readPayment(fields),
        paid: true,
        channel: Channel.Wechatpay,
        merchantId: trade.merchantId,
        eventType: `V2.QUERY/${fields.trade_state}`,
        rawBody: Buffer.from(text, 'utf8'),
        headers: {},
      } as PaymentNotification;
      return { outcome: 'PAID', payment };
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return { outcome: 'FAILED', detail: error.message };
    }
  }
}

/** unifiedorder's err_code values that decide nothing: the same request is sent again later. */
const RETRYABLE_CREATE_CODES = new Set(['SYSTEMERROR', 'FREQUENCY_LIMITED']);

/** yyyyMMddHHmmss in Beijing time: APIv2's time_expire. */
function beijingCompact(at: Date): string {
  return new Date(at.getTime() + 8 * 3600_000).toISOString().slice(0, 19).replace(/\D/g, '');
}

function describeError(fields: Record<string, string>): string {
  return `${fields.err_code ?? fields.result_code ?? ''} ${fields.err_code_des ?? ''}`.trim();
}
