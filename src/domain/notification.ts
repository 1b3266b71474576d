export const Channel = { Wechatpay: 'WECHATPAY', Alipay: 'ALIPAY' } as const;
export type Channel = (typeof Channel)[keyof typeof Channel];

/** What a channel's verifier produces once the signature holds: the same shape for every channel. */
export interface VerifiedNotification {
  channel: Channel;
  /** WeChat mchid, or Alipay app_id. */
  merchantId: string;
  /** WeChat event_type (TRANSACTION.SUCCESS, ...) or Alipay trade_status (TRADE_SUCCESS, ...). */
  eventType: string;
  /** Whether this notification says money was taken; only those consume the payment's dedup key. */
  paid: boolean;
  /** Present on every trade notification; absent on events that are not about a trade. */
  outTradeNo?: string;
  transactionId?: string;
  /** Integer minor units. */
  amount?: number;
  currency?: string;
  paidAt?: Date;
  /** Present on refund notifications: which refund the channel settled, and how. */
  refund?: RefundNotice;
  rawBody: Buffer;
  /** The headers that reconciliation needs (signature headers, content type). */
  headers: Record<string, string>;
  /**
   * Names this exact signed delivery (SHA-256 hex of what its signature covers and the signature),
   * when the channel's signature is fresh per sending: the same value again is a replay, not a
   * delivery the channel made.
   */
  replayKey?: string;
}

export const RefundNoticeStatus = { Succeeded: 'SUCCEEDED', Closed: 'CLOSED', Abnormal: 'ABNORMAL' } as const;
export type RefundNoticeStatus = (typeof RefundNoticeStatus)[keyof typeof RefundNoticeStatus];

export interface RefundNotice {
  /** The merchant's refund number (WeChat out_refund_no, Alipay out_biz_no). */
  refundNo: string;
  /** The channel's own refund id, when it sends one. */
  channelRefundId?: string;
  status: RefundNoticeStatus;
}

/** A notification that pays: the fields the payment pipeline needs are all present. */
export type PaymentNotification = VerifiedNotification &
  Required<Pick<VerifiedNotification, 'outTradeNo' | 'transactionId' | 'amount' | 'currency' | 'paidAt'>> & {
    paid: true;
  };

export function isPayment(n: VerifiedNotification): n is PaymentNotification {
  return n.paid;
}

export interface RawDelivery {
  body: Buffer;
  headers: Record<string, string | string[] | undefined>;
}

export const CLOCK = Symbol('CLOCK');
/** Milliseconds since the epoch; injected so that tests can verify notifications signed in the past. */
export type Clock = () => number;
