/** Stable error codes with their HTTP status; the exception filter maps them to HTTP and to each platform's failure body. */
export const ErrorCode = {
  MalformedRequest: { status: 400 },
  InvalidSignature: { status: 401 },
  TimestampExpired: { status: 401 },
  UnknownSigningKey: { status: 401 },
  MerchantMismatch: { status: 401 },
  Undecryptable: { status: 400 },
  Unauthenticated: { status: 401 },
  Forbidden: { status: 403 },
  NotFound: { status: 404 },
  OrderNotFound: { status: 404 },
  OrderConflict: { status: 409 },
  ChannelUnavailable: { status: 503 },
  ChannelRefused: { status: 422 },
  PaymentNotFound: { status: 404 },
  DeliveryNotFound: { status: 404 },
  RefundNotFound: { status: 404 },
  RefundConflict: { status: 409 },
  OverRefund: { status: 422 },
  AnomalyConflict: { status: 409 },
  MerchantConflict: { status: 409 },
  DryRunRequired: { status: 409 },
  RefundChannelUnavailable: { status: 503 },
  ChannelDisabled: { status: 503 },
  FeatureDisabled: { status: 503 },
  TooManyReads: { status: 429 },
} as const;

export type ErrorCodeName = keyof typeof ErrorCode;

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCodeName,
    message: string,
    /** Further fields of the answer's body (a channel's own code and message). */
    readonly fields?: Record<string, string>,
  ) {
    super(message);
    this.name = `DomainError(${code})`;
  }

  get status(): number {
    return ErrorCode[this.code].status;
  }
}

/**
 * A verified, decrypted payment for an order this service does not know: OrderNotFound, carrying
 * what the notification named, so that the refused notification kept for it can say which order to
 * register (and be found by it).
 */
export class UnknownOrderError extends DomainError {
  constructor(
    readonly orderNo: string,
    readonly transactionId: string,
  ) {
    super('OrderNotFound', `order ${orderNo} is not registered; the platform should retry`);
  }
}
