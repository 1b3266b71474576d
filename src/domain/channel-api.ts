import { Channel, PaymentNotification } from './notification';

/** What a channel needs to refund one payment: plain values, never the refund row itself. */
export interface RefundRequest {
  /** Our refund number: the channel's idempotency key (its out_refund_no or out_request_no). */
  refundNo: string;
  transactionId: string;
  /** The account (the channel's merchant or app id) that took the payment; undefined for the only account. */
  merchantId?: string;
  /** The sub-merchant the payment was made for (a service provider's account); undefined for a direct merchant. */
  subMerchantId?: string;
  /** Integer minor units. */
  amount: number;
  transactionAmount: number;
  currency: string;
  reason: string;
  /**
   * When the refund request was sent, oldest first; in a refund call the last is this very send. A
   * channel that knows a request by when it was sent (UnionPay: orderId + txnTime) asks about each.
   */
  sendTimes?: readonly Date[];
}

/**
 * The channel's answer about a refund, once its signature has been verified. CLOSED and ABNORMAL:
 * the channel refused, closed or could not pay out the refund. NOT_REFUNDED (queries only): the
 * channel has no successful refund under this number. RETRY: no word from the channel that can be
 * trusted (timeout, 5xx, unverifiable answer), so ask again later.
 */
export interface ChannelRefundResult {
  outcome: 'SUCCEEDED' | 'PROCESSING' | 'CLOSED' | 'ABNORMAL' | 'NOT_REFUNDED' | 'RETRY';
  channelRefundId?: string;
  /** Why, for CLOSED, ABNORMAL and RETRY. */
  detail?: string;
}

/** One order as a channel knows it: our order number, at one of our accounts. */
export interface TradeRef {
  orderNo: string;
  merchantId: string;
  /** The sub-merchant the order is for, when known; a service provider's account asks each of its own otherwise. */
  subMerchantId?: string;
  /**
   * The time (yyyyMMddHHmmss, in the channel's zone) the order was sent to the channel, for channels
   * that identify an order by it; undefined when the order was registered without it.
   */
  channelOrderTime?: string;
}

/**
 * A trade query's answer. PAID carries the payment exactly as a notification would; FOREIGN is a
 * verified answer naming an account that is not ours; FAILED is no trustworthy answer at all.
 */
export type TradeQueryResult =
  | { outcome: 'PAID'; payment: PaymentNotification; detail?: string }
  | { outcome: 'NOT_PAID' | 'NOT_FOUND' | 'FOREIGN' | 'FAILED'; detail: string };

/**
 * A trade close's answer: CLOSED (or nothing to close: NOT_FOUND), PAID at the channel, or FAILED.
 * NOT_APPLICABLE: the channel has no close (its trades cannot be closed there); the order closes here only.
 */
export interface TradeCloseResult {
  outcome: 'CLOSED' | 'NOT_FOUND' | 'PAID' | 'FAILED' | 'NOT_APPLICABLE';
  detail?: string;
}

export const ChannelCallOutcome = {
  Paid: 'PAID',
  NotPaid: 'NOT_PAID',
  NotFound: 'NOT_FOUND',
  Foreign: 'FOREIGN',
  Failed: 'FAILED',
  Closed: 'CLOSED',
  Unavailable: 'UNAVAILABLE',
  NotApplicable: 'NOT_APPLICABLE',
} as const;
export type ChannelCallOutcome = (typeof ChannelCallOutcome)[keyof typeof ChannelCallOutcome];

export type { Channel };
