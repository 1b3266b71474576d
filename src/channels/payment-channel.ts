import {
  ChannelRefundResult,
  CreatePaymentRequest,
  CreatePaymentResult,
  PaymentMethod,
  RefundRequest,
  TradeCloseResult,
  TradeQueryResult,
  TradeRef,
} from '../domain/channel-api';
import { BillDate, BillDownload } from '../domain/bill';
import { Channel, RawDelivery, VerifiedNotification } from '../domain/notification';

/** What an endpoint sends back to the platform: the exact ack or failure body it expects. */
export interface PlatformReply {
  status: number;
  headers: Record<string, string>;
  /** Undefined: no body (a 204 ack). */
  body?: string | object;
}

/**
 * The failure reply of a form-posting platform (Alipay, UnionPay): `fail` as plain text, the reason in
 * X-Fail-Reason (printable ASCII, at most 200 characters, for the operator reading the platform's log).
 */
export function plainTextFailure(status: number, message: string): PlatformReply {
  const reason = message.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
  return { status, headers: { 'content-type': 'text/plain; charset=utf-8', 'x-fail-reason': reason }, body: 'fail' };
}

/** One notification endpoint of a channel, POST /notify/<notifyPath>: how it verifies and how it answers. */
export interface NotifyEndpoint {
  readonly channel: Channel;
  /** The path segment of the endpoint: POST /notify/<notifyPath>. */
  readonly notifyPath: string;
  /** False when no account is configured; its endpoint then answers 503. */
  readonly enabled: boolean;
  /** Why notifications are off, and how to turn them on (logged at start while disabled). */
  readonly disabledHint: string;
  /** Verifies (and decrypts) a delivery; throws a DomainError for anything that must not be trusted. */
  verify(delivery: RawDelivery): VerifiedNotification;
  /** The success ack, sent only once the delivery's outcome has committed. */
  successReply(): PlatformReply;
  /** A failure the platform understands as "deliver again later". */
  failureReply(status: number, message: string): PlatformReply;
}

/**
 * The port every payment channel implements: one adapter per folder under src/channels/, all
 * registered under PAYMENT_CHANNELS. The rest of the service asks a channel, never names one.
 * The channel itself is its main notification endpoint.
 */
export interface PaymentChannel extends NotifyEndpoint {
  /**
   * Further notification dialects of the same channel, each at its own path (an older protocol
   * version the platform still sends); they verify into the same notifications. API calls stay the channel's.
   */
  readonly otherNotifyEndpoints?: readonly NotifyEndpoint[];

  /** Why the channel would refuse `orderNo` as its order number (out_trade_no), or undefined when it takes it. */
  orderNoRefusal(orderNo: string): string | undefined;
  /**
   * Why the channel would refuse an order registered for it (the order names this channel) as it
   * is, e.g. without a field it needs to find the order later; undefined (or no method) when it takes it.
   */
  orderRegistrationRefusal?(order: { orderNo: string; channelOrderTime?: string }): string | undefined;

  /** A delivery's bytes as a viewer may see them: identifiers of the payer masked, the rest as received. */
  maskPayer(rawBody: Buffer): Buffer;

  /**
   * The part of a kept delivery the platform encrypted (WeChat Pay APIv3's `resource`), decrypted
   * with the account's key, for an operator's look; with `masked`, the payer's identifiers masked
   * as maskPayer masks them. Absent for a channel that encrypts nothing; undefined for a delivery
   * with nothing encrypted (WeChat Pay APIv2's XML). Throws a DomainError (Undecryptable) when no
   * configured key opens it. The plaintext is for the caller alone: never logged.
   */
  decryptedContent?(delivery: RawDelivery, options: { masked: boolean }): Record<string, unknown> | undefined;
  /** Whether a delivery's bytes hold such an encrypted part (without opening it): what the console offers to decrypt. */
  hasEncryptedContent?(rawBody: Buffer): boolean;

  /** Every configured account: the channel's merchant or app ids. */
  accountIds(): string[];
  /** The sub-merchants a service provider's account collects for (of `merchantId`, or of every account); [] for none. */
  subMerchantIds(merchantId?: string): string[];
  /** The ids of the platform keys notifications are verified with (none for a channel whose keys have no id), for the start line. */
  keyIds(): string[];
  /** Checks an operator explicitly waived, named on the start line; none when absent. */
  waivedChecks?(): string[];
  /** The accounts (merchant or app ids) whose API can be called: they have a merchant/app key. */
  apiAccounts(): string[];
  /** Why `merchantId`'s API cannot be called, or undefined when it can. */
  apiUnavailableReason(merchantId: string | undefined): string | undefined;
  /** Never throws: every failure is a RETRY with its reason. The refund number is the channel's idempotency key. */
  refund(request: RefundRequest): Promise<ChannelRefundResult>;
  /**
   * Asks where an accepted refund stands, for when its notification does not come. Only a final
   * status is taken as the channel's word; anything else is PROCESSING, NOT_REFUNDED or RETRY, never CLOSED.
   */
  queryRefund(request: RefundRequest): Promise<ChannelRefundResult>;
  /** Asks whether the trade of an order was paid (when its notifications are lost). Never throws. */
  queryTrade(trade: TradeRef): Promise<TradeQueryResult>;
  /** Closes the trade at the channel so that it can no longer be paid. Never throws. */
  closeTrade(trade: TradeRef): Promise<TradeCloseResult>;
  /**
   * The account's trade bill of a Beijing calendar day, downloaded, its integrity checked, read
   * line by line; NOT_READY while the channel has not generated it yet. Never throws. With
   * `subMerchantId`, the bill of that sub-merchant of a service provider's account.
   */
  downloadBill(merchantId: string, date: BillDate, subMerchantId?: string): Promise<BillDownload>;

  /**
   * The ways a buyer can pay that createPayment makes (absent or empty: the channel creates no
   * payments; shops create them themselves and register the order without `method`).
   */
  readonly paymentMethods?: readonly PaymentMethod[];
  /**
   * Why the channel would refuse this create request as it is (a partner account without a
   * sub-merchant, an app that is not the account's), or undefined: checked before the claim, so a
   * refusal is a 400 that writes nothing and calls nothing.
   */
  createPaymentRefusal?(request: CreatePaymentRequest): string | undefined;
  /**
   * For a channel that identifies an order by the time it was sent (UnionPay's txnTime): that time
   * for `at`, yyyyMMddHHmmss in the channel's zone. Absent for channels keyed by the order number alone.
   */
  orderTimeOf?(at: Date): string;
  /**
   * Creates the payment at the channel (WeChat Pay's prepay, Alipay's page pay, UnionPay's
   * frontTransReq) and gives what the buyer's client needs. Never throws.
   *
   * What the core guarantees to the adapter (src/order/channel-payments.ts):
   * - the order exists, WAIT_PAY, registered for this channel; `amount`, `currency`, `orderNo`,
   *   `merchantId` (one of apiAccounts()) and `subMerchantId` are the order's; `method` is one of
   *   paymentMethods and every payer field it `needs` is present; createPaymentRefusal said nothing;
   * - `notifyBaseUrl` comes from the one PUBLIC_BASE_URL setting; `expiresAt` is the order's expiry,
   *   in the future; once it passes, the core closes the trade through closeTrade (with the order's
   *   channelOrderTime), so the channel's expiry and the order's close agree;
   * - `channelOrderTime` (when orderTimeOf exists) is orderTimeOf(the registration's time), recorded
   *   as the order's channelOrderTime when the order was registered, BEFORE the first call (a shop
   *   creating the payment here does not send one);
   * - at most one call per order is in flight across every replica (a claim in the database);
   * - after a RETRY (or a CREATED whose validUntil has passed while the order is still payable) the
   *   core calls again with the identical request, same expiresAt and channelOrderTime: the adapter
   *   must send the same terms so the channel sees the same trade (out_trade_no / orderId+txnTime),
   *   never a second payable trade with different terms;
   * - CREATED's buyer parameters are stored and answered verbatim to the same request until
   *   min(validUntil, expiresAt); a REFUSED is stored and answered (422) to the same request again.
   */
  createPayment?(request: CreatePaymentRequest): Promise<CreatePaymentResult>;
}

export const PAYMENT_CHANNELS = Symbol('PAYMENT_CHANNELS');

/** A network failure as one short phrase: "timed out", "fetch failed (ECONNREFUSED)". */
export function describeFailure(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const name = (error as Error).name === 'TimeoutError' ? 'timed out' : (error as Error).message;
  return cause?.code ? `${name} (${cause.code})` : name;
}
