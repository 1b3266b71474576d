import { randomBytes } from 'node:crypto';
import { encryptReqInfo, signV2, V2SignType } from '../../../../src/channels/wechatpay/v2/wechatpay-v2.sign';
import { writeV2Xml } from '../../../../src/channels/wechatpay/v2/wechatpay-v2.xml';

/** A v2 payment result as WeChat Pay sends it (POST /notify/wechatpay-v2). */
export interface V2Payment {
  mchid: string;
  appid: string;
  outTradeNo: string;
  transactionId: string;
  /** Fen. */
  totalFee: number;
  feeType?: string;
  paidAt: Date;
  resultCode?: 'SUCCESS' | 'FAIL';
  openid?: string;
  /** A service provider's notification: the sub-merchant paid (mchid is then the provider's). */
  subMchid?: string;
}

/** A v2 refund result: its `req_info` is encrypted, and the notification is not signed. */
export interface V2Refund {
  mchid: string;
  appid: string;
  outRefundNo: string;
  refundId: string;
  outTradeNo: string;
  transactionId: string;
  /** Fen. */
  refundFee: number;
  totalFee: number;
  status?: 'SUCCESS' | 'CHANGE' | 'REFUNDCLOSE';
  successAt?: Date;
}

/** yyyyMMddHHmmss in Beijing time (UTC+8), v2's `time_end`. */
export function beijingCompact(date: Date): string {
  return new Date(date.getTime() + 8 * 3600_000).toISOString().replace(/\D/g, '').slice(0, 14);
}

/** The fields of a signed v2 payment notification (sign included), before they become XML. */
export function v2PaymentFields(
  payment: V2Payment,
  apiV2Key: string,
  signType: V2SignType = 'MD5',
): Record<string, string> {
  const fields: Record<string, string> = {
    return_code: 'SUCCESS',
    appid: payment.appid,
    mch_id: payment.mchid,
    ...(payment.subMchid === undefined ? {} : { sub_mch_id: payment.subMchid }),
    nonce_str: randomBytes(16).toString('hex'),
    result_code: payment.resultCode ?? 'SUCCESS',
    openid: payment.openid ?? 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o',
    is_subscribe: 'N',
    trade_type: 'JSAPI',
    bank_type: 'OTHERS',
    total_fee: String(payment.totalFee),
    fee_type: payment.feeType ?? 'CNY',
    cash_fee: String(payment.totalFee),
    transaction_id: payment.transactionId,
    out_trade_no: payment.outTradeNo,
    time_end: beijingCompact(payment.paidAt),
    ...(signType === 'MD5' ? {} : { sign_type: signType }),
  };
  return { ...fields, sign: signV2(fields, apiV2Key, signType) };
}

export function v2PaymentNotification(payment: V2Payment, apiV2Key: string, signType: V2SignType = 'MD5'): string {
  return writeV2Xml(v2PaymentFields(payment, apiV2Key, signType));
}

export function v2RefundNotification(refund: V2Refund, apiV2Key: string): string {
  const record = writeV2Xml(
    {
      out_refund_no: refund.outRefundNo,
      out_trade_no: refund.outTradeNo,
      refund_account: 'REFUND_SOURCE_RECHARGE_FUNDS',
      refund_fee: String(refund.refundFee),
      refund_id: refund.refundId,
      refund_recv_accout: '支付用户零钱',
      refund_request_source: 'API',
      refund_status: refund.status ?? 'SUCCESS',
      settlement_refund_fee: String(refund.refundFee),
      settlement_total_fee: String(refund.totalFee),
      success_time: new Date((refund.successAt ?? new Date()).getTime() + 8 * 3600_000)
        .toISOString()
        .replace('T', ' ')
        .slice(0, 19),
      total_fee: String(refund.totalFee),
      transaction_id: refund.transactionId,
    },
    'root',
  );
  return writeV2Xml({
    return_code: 'SUCCESS',
    appid: refund.appid,
    mch_id: refund.mchid,
    nonce_str: randomBytes(16).toString('hex'),
    req_info: encryptReqInfo(record, apiV2Key),
  });
}
