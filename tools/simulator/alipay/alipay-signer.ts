/**
 * Real signed notifications as Alipay posts them: real RSA keys, real RSA2 signatures. Shared by the verifiers'
 * unit specs, the e2e suites, the benchmark and the simulator, so nothing here imports the code under test: the
 * signing side is written from the platform's docs.
 */
import { KeyObject, sign } from 'node:crypto';
import { beijingDateTime, randomDigits } from '../signing';

/**
 * The application/x-www-form-urlencoded body Alipay posts. The signed content is every parameter but
 * sign and sign_type with a non-empty value, sorted by key, joined raw (not encoded) as `k=v&k=v`.
 * RSA2 is SHA256withRSA; RSA (legacy, which the verifier must refuse) is SHA1withRSA.
 */
export function alipayDelivery(
  privateKey: KeyObject,
  params: Record<string, string>,
  options: { signType?: 'RSA2' | 'RSA' } = {},
): string {
  const signType = options.signType ?? 'RSA2';
  const content = Object.entries(params)
    .filter(([key, value]) => key !== 'sign' && key !== 'sign_type' && value !== '')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
  const signature = sign(signType === 'RSA2' ? 'sha256' : 'sha1', Buffer.from(content, 'utf8'), privateKey);
  const all = { ...params, sign: signature.toString('base64'), sign_type: signType };
  return Object.entries(all)
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`)
    .join('&');
}

export interface AlipayTradeParams {
  appId: string;
  outTradeNo: string;
  tradeNo: string;
  /** Yuan as Alipay writes it, e.g. "88.88". */
  totalAmount: string;
  tradeStatus?: string;
  sellerId?: string;
  /** When the payment happened; defaults to now. */
  paidAt?: Date;
  /** notify_time, when this delivery is sent; defaults to a second after paidAt. */
  notifiedAt?: Date;
}

/** A trade_status_sync notification's parameters, shaped like the ones Alipay sends. */
export function alipayTradeParams(p: AlipayTradeParams): Record<string, string> {
  const paidAt = p.paidAt ?? new Date();
  return {
    notify_time: beijingDateTime(p.notifiedAt ?? new Date(paidAt.getTime() + 1000)),
    notify_type: 'trade_status_sync',
    notify_id: `${beijingDateTime(paidAt).replace(/\D/g, '').slice(0, 8)}00222${randomDigits(17)}`,
    charset: 'utf-8',
    version: '1.0',
    app_id: p.appId,
    auth_app_id: p.appId,
    trade_no: p.tradeNo,
    out_trade_no: p.outTradeNo,
    trade_status: p.tradeStatus ?? 'TRADE_SUCCESS',
    total_amount: p.totalAmount,
    receipt_amount: p.totalAmount,
    buyer_id: `2088${randomDigits(12)}`,
    seller_id: p.sellerId ?? '2088531891668739',
    gmt_create: beijingDateTime(new Date(paidAt.getTime() - 2000)),
    gmt_payment: beijingDateTime(paidAt),
    subject: '测试商品 订单支付',
  };
}

export interface AlipayRefundNotifyParams extends AlipayTradeParams {
  /** The refund request's out_request_no, sent back as out_biz_no. */
  outBizNo: string;
  /** Yuan refunded on the trade so far, e.g. "88.88". */
  refundFee: string;
}

/**
 * The trade_status_sync notification Alipay sends after a refund: out_biz_no and refund_fee set,
 * trade_status TRADE_CLOSED after a full refund (TRADE_SUCCESS after a partial one).
 */
export function alipayRefundParams(p: AlipayRefundNotifyParams): Record<string, string> {
  const refundedAt = new Date();
  return {
    ...alipayTradeParams({ tradeStatus: 'TRADE_CLOSED', ...p }),
    out_biz_no: p.outBizNo,
    refund_fee: p.refundFee,
    gmt_refund: `${beijingDateTime(refundedAt)}.${String(refundedAt.getMilliseconds()).padStart(3, '0')}`,
    gmt_close: beijingDateTime(refundedAt),
  };
}

/** 8888 fen ⇔ '88.88', as Alipay writes amounts, by string and integer operations only. */
export function yuan(fen: number): string {
  return `${Math.floor(fen / 100)}.${String(fen % 100).padStart(2, '0')}`;
}
