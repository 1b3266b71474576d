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

/**
 * One way the buyer can pay at a channel (WeChat Pay's JSAPI, Native, ...): its name as the API
 * takes it (`method`), and what the create request must carry for it.
 */
export interface PaymentMethod {
  /** The name the shop sends as `method`, unique within its channel (e.g. JSAPI, NATIVE, PAGE). */
  readonly name: string;
  /** The payer fields the method needs; the core refuses (400) a request without one, before any call. */
  readonly needs: readonly (keyof PayerDetails)[];
  /** One line for the docs and the OpenAPI description: what the buyer's client receives. */
  readonly summary: string;
}

/** What the buyer's side tells us, per method: each field is used only by the methods that need it. */
export interface PayerDetails {
  /** The payer's openid in the app the payment is made in (WeChat JSAPI and mini-program). */
  openid?: string;
  /** The buyer's IP address as the shop saw it (WeChat H5 and Native scene_info, UnionPay). */
  clientIp?: string;
  /** The buyer's client for an H5 payment: Wap, iOS or Android (WeChat h5_info.type). */
  h5Type?: string;
  /** Where the buyer's browser returns after paying (Alipay page/wap return_url, UnionPay frontUrl). */
  returnUrl?: string;
  /** Where the buyer goes when giving up (Alipay wap quit_url). */
  quitUrl?: string;
  /** The buyer's id at the channel (Alipay buyer_id for alipay.trade.create). */
  buyerId?: string;
}

/**
 * Create the payment for an order at its channel: every value the channel needs, all of them the
 * order's or fixed by the core once per order, so that a retry sends the very same request.
 */
export interface CreatePaymentRequest {
  /** Our order number: the channel's out_trade_no / orderId, its idempotency key. */
  orderNo: string;
  /** The account the order is at (resolved: one of the channel's apiAccounts()). */
  merchantId: string;
  /** The order's sub-merchant (a service provider's account); undefined for a direct merchant. */
  subMerchantId?: string;
  /** The app the buyer pays in (appid), when the shop names one; the channel's only/first app otherwise. */
  appId?: string;
  /** The sub-merchant's app (sub_appid) in partner mode, when the buyer pays in it. */
  subAppId?: string;
  /** The order's amount, integer minor units. */
  amount: number;
  /** The order's currency (ISO 4217). */
  currency: string;
  /** What the buyer sees on the payment (WeChat description, Alipay subject, UnionPay orderDesc). */
  description: string;
  /** One of the channel's paymentMethods' names. */
  method: string;
  /**
   * This service's public notify base, `<PUBLIC_BASE_URL>/notify` (no trailing slash): the channel
   * sends `${notifyBaseUrl}/${notifyPath}` of the endpoint its API dialect delivers to.
   */
  notifyBaseUrl: string;
  /** The order's expiry: the channel's time_expire / timeout_express / payTimeout is exactly this. */
  expiresAt: Date;
  /**
   * yyyyMMddHHmmss from the channel's orderTimeOf, for a channel that keys an order by its send time
   * (UnionPay's txnTime); fixed once per order and already recorded as the order's channelOrderTime.
   */
  channelOrderTime?: string;
  payer: PayerDetails;
}

/** What the buyer's client is given to pay with. */
export interface BuyerParameters {
  /**
   * The values, named as the channel's client SDK or page names them: wx.requestPayment's appId,
   * timeStamp, nonceStr, package, signType, paySign; code_url; h5_url; Alipay's orderStr; UnionPay's tn.
   */
  params: Record<string, string>;
  /** Set when the params are the fields of a form the buyer's browser submits (Alipay page pay, UnionPay front consume). */
  form?: { action: string; method: 'GET' | 'POST' };
}

/**
 * A create call's answer, once the channel's signature verified. CREATED: the buyer can pay with
 * `buyer` until `validUntil` (never later than the request's expiresAt; WeChat's prepay_id lives
 * 2 hours). REFUSED: the channel said no, with its own code and message (the shop sees 422).
 * RETRY: no word from the channel that can be trusted (timeout, 5xx, unverifiable answer): the
 * trade may or may not exist there; the core sends the same request again later.
 */
export type CreatePaymentResult =
  | { outcome: 'CREATED'; buyer: BuyerParameters; validUntil: Date; channelTradeId?: string }
  | { outcome: 'REFUSED'; code: string; message: string }
  | { outcome: 'RETRY'; detail: string };
