import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsISO8601, IsString, Length, Matches, Max, Min, ValidateIf } from 'class-validator';
import { NotNull, OptionalField } from '../../platform/http/optional';
import { AnomalyStatus, AnomalyType, ResolutionReason } from '../../payments/anomaly/anomaly.entity';
import { RefundStatus } from '../../refund/refund.entity';
import { OrderStatus } from '../../order/order-status';
import { Channel } from '../../domain/notification';
import { ORDER_NO, ORDER_NO_MESSAGE } from '../../order/order-no';
import { MAX_AMOUNT } from '../../domain/money';
import { OptionalOneOf, PageLimit } from '../../platform/http/query-decorators';
import { REGISTERED_CHANNELS } from '../../channels/registered-channels';

const ISO = { strict: true, strictSeparator: true };

/** Optional `from` (inclusive) and `to` (exclusive), ISO 8601. */
export class TimeRangeQueryDto {
  @ApiPropertyOptional({ format: 'date-time', description: 'Inclusive', example: '2026-11-29T00:00:00Z' })
  @OptionalField()
  @IsISO8601(ISO, { message: 'from must be an ISO 8601 date-time, e.g. 2026-11-29T00:00:00Z' })
  from?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Exclusive', example: '2026-11-30T00:00:00Z' })
  @OptionalField()
  @IsISO8601(ISO, { message: 'to must be an ISO 8601 date-time, e.g. 2026-11-30T00:00:00Z' })
  to?: string;
}

/** A page, newest first: `limit` items, then `cursor` = the previous page's nextCursor. */
export class PageQueryDto extends TimeRangeQueryDto {
  @PageLimit(200, 50)
  limit?: number;

  /** The nextCursor of the previous page. */
  @ApiPropertyOptional({ description: 'The nextCursor of the previous page', pattern: '^[1-9]\\d{0,18}$' })
  @OptionalField()
  @Matches(/^[1-9]\d{0,18}$/, { message: 'cursor must be the nextCursor of a previous page' })
  cursor?: string;
}

export class AnomalyQueryDto extends PageQueryDto {
  @OptionalOneOf('type', Object.values(AnomalyType))
  type?: AnomalyType;

  @OptionalOneOf('status', Object.values(AnomalyStatus))
  status?: AnomalyStatus;

  @OptionalOneOf('channel', REGISTERED_CHANNELS)
  channel?: Channel;
}

export class RefundQueryDto extends PageQueryDto {
  @OptionalOneOf('status', Object.values(RefundStatus))
  status?: RefundStatus;

  @OptionalOneOf('channel', REGISTERED_CHANNELS)
  channel?: Channel;
}

/** `<createdAt in ms>.<orderNo>` of the last order of the previous page: orders are paged by (createdAt, orderNo). */
export const ORDER_CURSOR = /^(\d{1,15})\.([A-Za-z0-9_-]{1,64})$/;

/** The filters of the order list and its CSV export. */
class OrderFilterDto extends TimeRangeQueryDto {
  @OptionalOneOf('status', Object.values(OrderStatus))
  status?: OrderStatus;

  @OptionalOneOf('channel', REGISTERED_CHANNELS)
  channel?: Channel;

  @ApiPropertyOptional({ description: 'The nextCursor of the previous page', pattern: ORDER_CURSOR.source })
  @OptionalField()
  @Matches(ORDER_CURSOR, { message: 'cursor must be the nextCursor of a previous page' })
  cursor?: string;
}

/** Orders, newest first (by creation), a page at a time. */
export class OrderQueryDto extends OrderFilterDto {
  @PageLimit(200, 50)
  limit?: number;
}

/** The most rows one CSV export holds; the rest is the next export's, from X-Next-Cursor. */
export const MAX_CSV_ROWS = 10_000;

export class OrderExportQueryDto extends OrderFilterDto {
  @PageLimit(MAX_CSV_ROWS, MAX_CSV_ROWS)
  limit?: number;
}

export const Bucket = { Hour: 'hour', Day: 'day' } as const;
export type Bucket = (typeof Bucket)[keyof typeof Bucket];

export class CallbackStatsQueryDto extends TimeRangeQueryDto {
  @ApiPropertyOptional({ enum: Object.values(Bucket), default: Bucket.Hour, description: 'UTC buckets' })
  @OptionalField()
  @IsIn(Object.values(Bucket), { message: 'bucket must be hour or day' })
  bucket?: Bucket;
}

export class EmergencyRefundDto {
  @ApiProperty({ pattern: ORDER_NO.source })
  @IsString()
  @Matches(ORDER_NO, { message: ORDER_NO_MESSAGE })
  orderNo: string;

  @ApiProperty({ description: "The transaction whose money goes back: the one that paid the order, or an anomaly's" })
  @IsString()
  @Matches(/^[\x21-\x7e]{1,64}$/, { message: 'transactionId must be 1 to 64 printable ASCII characters' })
  transactionId: string;

  /** Minor units; what is left of the transaction when absent. */
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_AMOUNT,
    description:
      'Integer minor units; what is left of the transaction (what it paid less what its refunds reserved) when absent',
  })
  @OptionalField()
  @IsInt({ message: 'amount must be an integer in minor units (e.g. 1999 for 19.99)' })
  @Min(1, { message: 'amount must be greater than zero' })
  @Max(MAX_AMOUNT, { message: `amount must be at most ${MAX_AMOUNT}` })
  amount?: number;

  @ApiProperty({ minLength: 1, maxLength: 256 })
  @IsString()
  @Length(1, 256, { message: 'reason must be 1 to 256 characters' })
  @Matches(/\S/, { message: 'reason must not be blank' })
  reason: string;

  @ApiPropertyOptional({
    pattern: '^[A-Za-z0-9_\\-|*@]{1,64}$',
    description:
      'The idempotency key of the refund. When absent, derived from the request (transaction, purpose, amount) and ' +
      'how often that request was rejected or closed: the same request again is the same refund until it is rejected ' +
      'or closed, after which it can be asked again',
  })
  @OptionalField()
  @Matches(/^[A-Za-z0-9_\-|*@]{1,64}$/, { message: 'refundNo must be 1 to 64 letters, digits or _ - | * @' })
  refundNo?: string;
}

/** Why an operator resolves or rejects a refund; kept in the audit log. */
export class ReasonDto {
  @ApiProperty({ minLength: 1, maxLength: 256 })
  @IsString()
  @Length(1, 256, { message: 'reason must be 1 to 256 characters' })
  @Matches(/\S/, { message: 'reason must not be blank' })
  reason: string;
}

/** Closes an anomaly without a refund: why, what it duplicates or refers to, and a note; kept in the audit log. */
export class ResolveAnomalyDto {
  @ApiProperty({ enum: Object.values(ResolutionReason) })
  @IsIn(Object.values(ResolutionReason), {
    message: `reason must be one of ${Object.values(ResolutionReason).join(', ')}`,
  })
  reason: ResolutionReason;

  @ApiPropertyOptional({
    pattern: '^[\\x21-\\x7e]{1,64}$',
    description: 'Required for DUPLICATE_OF: what it duplicates (an anomaly, a transaction, a ticket)',
  })
  @ValidateIf((dto: ResolveAnomalyDto) => dto.reason === ResolutionReason.DuplicateOf || dto.reference !== undefined)
  @NotNull()
  @IsString({ message: 'reference is required for DUPLICATE_OF: name what the anomaly duplicates' })
  @Matches(/^[\x21-\x7e]{1,64}$/, { message: 'reference must be 1 to 64 printable ASCII characters' })
  reference?: string;

  @ApiProperty({ minLength: 1, maxLength: 256 })
  @IsString()
  @Length(1, 256, { message: 'note must be 1 to 256 characters' })
  @Matches(/\S/, { message: 'note must not be blank' })
  note: string;
}
