export const Channel = { Wechatpay: 'WECHATPAY', Alipay: 'ALIPAY', Unionpay: 'UNIONPAY' } as const;
export type Channel = (typeof Channel)[keyof typeof Channel];

/** What a channel's verifier produces once the signature holds: the same shape for every channel. */
export interface VerifiedNotification {
  channel: Channel;
  /** The channel's merchant or app id. */
  merchantId: string;
  /**
   * The sub-merchant the payment was made for, when the account is a service provider's that
   * collects for its sub-merchants; absent for a merchant paid directly.
   */
  subMerchantId?: string;
  /** The channel's own word for the event (an event type or trade status, such as TRADE_SUCCESS). */
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
  /**
   * Why a notification whose signature holds cannot apply (a field too long, a currency that is no
   * ISO 4217 code): the same bytes would fail the same way on every retry. It pays nothing; it is
   * kept, recorded as a MALFORMED_NOTIFICATION anomaly and acked, so that the platform stops.
   */
  malformed?: string;
}

/** Longer identifiers than any channel sends; the columns that keep them hold this many characters. */
export const MAX_IDENTIFIER_LENGTH = 64;

/** The fields of a notification that failed to read, as far as they can be kept: for the operator. */
export function malformedNotification(
  base: Omit<VerifiedNotification, 'paid' | 'outTradeNo' | 'transactionId' | 'malformed'>,
  ids: { outTradeNo?: unknown; transactionId?: unknown },
  reason: string,
): VerifiedNotification {
  return {
    ...base,
    eventType: base.eventType.slice(0, MAX_IDENTIFIER_LENGTH),
    paid: false,
    outTradeNo: keepableId(ids.outTradeNo),
    transactionId: keepableId(ids.transactionId),
    malformed: reason,
  };
}

function keepableId(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value.slice(0, MAX_IDENTIFIER_LENGTH) : undefined;
}

/** The verifiers' word for data that cannot apply, as opposed to a delivery that must not be trusted. */
export const MALFORMED = 'MalformedRequest';

export const RefundNoticeStatus = { Succeeded: 'SUCCEEDED', Closed: 'CLOSED', Abnormal: 'ABNORMAL' } as const;
export type RefundNoticeStatus = (typeof RefundNoticeStatus)[keyof typeof RefundNoticeStatus];

export interface RefundNotice {
  /** The merchant's refund number (the channel's out_refund_no or out_biz_no). */
  refundNo: string;
  /** The channel's own refund id, when it sends one. */
  channelRefundId?: string;
  status: RefundNoticeStatus;
  /**
   * The refunded amount (integer minor units), when the notice is not signed and its fields are
   * the only check: a notice whose amount is not the refund's settles nothing.
   */
  amount?: number;
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
