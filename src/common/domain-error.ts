import { HttpStatus } from '@nestjs/common';

/** Stable error codes; the exception filter maps them to HTTP and to each platform's failure body. */
export const ErrorCode = {
  MalformedRequest: { status: HttpStatus.BAD_REQUEST },
  InvalidSignature: { status: HttpStatus.UNAUTHORIZED },
  TimestampExpired: { status: HttpStatus.UNAUTHORIZED },
  UnknownSigningKey: { status: HttpStatus.UNAUTHORIZED },
  MerchantMismatch: { status: HttpStatus.UNAUTHORIZED },
  Undecryptable: { status: HttpStatus.BAD_REQUEST },
  Unauthenticated: { status: HttpStatus.UNAUTHORIZED },
  Forbidden: { status: HttpStatus.FORBIDDEN },
  OrderNotFound: { status: HttpStatus.NOT_FOUND },
  OrderConflict: { status: HttpStatus.CONFLICT },
  PaymentNotFound: { status: HttpStatus.NOT_FOUND },
  DeliveryNotFound: { status: HttpStatus.NOT_FOUND },
  RefundConflict: { status: HttpStatus.CONFLICT },
  OverRefund: { status: HttpStatus.UNPROCESSABLE_ENTITY },
  RefundChannelUnavailable: { status: HttpStatus.SERVICE_UNAVAILABLE },
  ChannelDisabled: { status: HttpStatus.SERVICE_UNAVAILABLE },
  FeatureDisabled: { status: HttpStatus.SERVICE_UNAVAILABLE },
} as const;

export type ErrorCodeName = keyof typeof ErrorCode;

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCodeName,
    message: string,
  ) {
    super(message);
    this.name = `DomainError(${code})`;
  }

  get status(): number {
    return ErrorCode[this.code].status;
  }
}
