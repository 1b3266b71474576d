import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Matches } from 'class-validator';
import { OptionalField } from '../../platform/http/optional';
import { OptionalOneOf } from '../../platform/http/query-decorators';
import { REGISTERED_CHANNELS } from '../../channels/registered-channels';
import { Channel } from '../../domain/notification';
import {
  CapKind,
  REFUSAL_REASONS,
  RefusalReason,
  RefusedNotification,
  RefusedNotificationHour,
  RefusedStatus,
} from '../../payments/refused-notification/refused-notification.entity';
import { PageQueryDto, TimeRangeQueryDto } from '../dto/admin-queries.dto';

const STATUSES = Object.values(RefusedStatus);
const PRINTABLE_ID = /^[\x21-\x7e]{1,64}$/;
const DATE_TIME = { type: String, format: 'date-time' } as const;
const NULLABLE_DATE_TIME = { ...DATE_TIME, nullable: true } as const;
const NULLABLE_STRING = { type: String, nullable: true } as const;

/** Newest first; `from`/`to` bound when it was first refused. */
export class RefusedNotificationQueryDto extends PageQueryDto {
  @OptionalOneOf('channel', REGISTERED_CHANNELS)
  channel?: Channel;

  @OptionalOneOf('reason', REFUSAL_REASONS)
  reason?: RefusalReason;

  @OptionalOneOf('status', STATUSES)
  status?: RefusedStatus;

  @ApiPropertyOptional({ description: 'The order a verified notification for an unknown order named' })
  @OptionalField()
  @Matches(PRINTABLE_ID, { message: 'orderNo must be 1 to 64 printable ASCII characters' })
  orderNo?: string;

  @ApiPropertyOptional({ description: 'The transaction id such a notification named' })
  @OptionalField()
  @Matches(PRINTABLE_ID, { message: 'transactionId must be 1 to 64 printable ASCII characters' })
  transactionId?: string;
}

/** UTC hours, `from` (inclusive) to `to` (exclusive); the last 24 hours by default. */
export class RefusedHoursQueryDto extends TimeRangeQueryDto {}

export class RefusedNotificationSummaryView {
  @ApiProperty()
  id: string;

  @ApiProperty({ enum: REGISTERED_CHANNELS })
  channel: string;

  @ApiProperty({ description: 'The endpoint it arrived at: POST /notify/<notifyPath>' })
  notifyPath: string;

  @ApiProperty({ enum: REFUSAL_REASONS, description: 'Why it was refused when it arrived' })
  reason: string;

  @ApiProperty({
    ...NULLABLE_STRING,
    description: 'The order it named, when it verified and decrypted and the order was unknown (OrderNotFound)',
  })
  orderNo: string | null;

  @ApiProperty({ ...NULLABLE_STRING, description: "That notification's transaction id" })
  transactionId: string | null;

  @ApiProperty({ description: 'SHA-256 of the bytes, hex: one row per channel and bytes' })
  bodySha256: string;

  @ApiProperty({ type: 'integer' })
  bodyBytes: number;

  @ApiProperty({ type: 'integer', description: 'Deliveries of these bytes refused, the first included' })
  timesSeen: number;

  @ApiProperty(DATE_TIME)
  firstSeenAt: string;

  @ApiProperty(DATE_TIME)
  lastSeenAt: string;

  @ApiProperty({ enum: STATUSES, description: 'ACCEPTED once a re-verification settled it' })
  status: string;

  @ApiProperty({ type: 'integer' })
  reverifyCount: number;

  @ApiProperty(NULLABLE_DATE_TIME)
  reverifiedAt: string | null;

  @ApiProperty(NULLABLE_STRING)
  reverifiedBy: string | null;

  @ApiProperty({ ...NULLABLE_STRING, description: "The last re-verification's refusal (an error code)" })
  reverifyReason: string | null;
}

export class RefusedNotificationPageView {
  @ApiProperty({ type: [RefusedNotificationSummaryView] })
  items: RefusedNotificationSummaryView[];

  @ApiProperty({ ...NULLABLE_STRING, description: 'Pass as cursor for the next page; null on the last' })
  nextCursor: string | null;
}

export class RefusedNotificationView extends RefusedNotificationSummaryView {
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'The headers kept with the bytes (signature headers, content type)',
  })
  headers: Record<string, string>;

  @ApiProperty({
    ...NULLABLE_STRING,
    description:
      'The body decoded as UTF-8: for an admin as received; for a viewer with the payer masked by the channel, ' +
      'or null when the channel cannot read it to mask it',
  })
  rawBody: string | null;

  @ApiProperty({ ...NULLABLE_STRING, format: 'byte', description: 'The same bytes, byte-exact' })
  rawBodyBase64: string | null;

  @ApiProperty({ description: "true: the payer's identifiers are masked (a viewer's read)" })
  masked: boolean;
}

export class RefusedHourView {
  @ApiProperty({ enum: REGISTERED_CHANNELS })
  channel: string;

  @ApiProperty({ ...DATE_TIME, description: 'The UTC hour' })
  hour: string;

  @ApiProperty({
    enum: Object.values(CapKind),
    description: 'SIGNED: refusals whose signature held (unknown orders); UNSIGNED: the others. Each has its own cap',
  })
  kind: string;

  @ApiProperty({ type: 'integer', description: 'New refused notifications kept that hour' })
  kept: number;

  @ApiProperty({ type: 'integer', description: 'New ones not kept: over REFUSED_NOTIFICATIONS_PER_HOUR' })
  dropped: number;
}

export class RefusedHoursView {
  @ApiProperty({ type: [RefusedHourView], description: 'Oldest first' })
  rows: RefusedHourView[];

  @ApiProperty({
    type: 'integer',
    description: 'REFUSED_NOTIFICATIONS_PER_HOUR: new ones kept per channel, hour and kind',
  })
  perHour: number;
}

export class ReverificationView extends RefusedNotificationSummaryView {
  @ApiProperty({ description: 'true: it verified now and settled through the notify use case' })
  accepted: boolean;

  @ApiProperty({ type: 'integer', description: 'The status the platform would have been answered' })
  answerStatus: number;
}

/** A row without its bytes and headers: what a list reads. */
export type RefusedNotificationSummary = Omit<RefusedNotification, 'rawBody' | 'headers'> & { bodyBytes: number };

export function toSummaryView(r: RefusedNotificationSummary): RefusedNotificationSummaryView {
  return {
    id: String(r.id),
    channel: r.channel,
    notifyPath: r.notifyPath,
    reason: r.reason,
    orderNo: r.orderNo,
    transactionId: r.transactionId,
    bodySha256: r.bodySha256.toString('hex'),
    bodyBytes: r.bodyBytes,
    timesSeen: r.timesSeen,
    firstSeenAt: r.firstSeenAt.toISOString(),
    lastSeenAt: r.lastSeenAt.toISOString(),
    status: r.status,
    reverifyCount: r.reverifyCount,
    reverifiedAt: r.reverifiedAt?.toISOString() ?? null,
    reverifiedBy: r.reverifiedBy,
    reverifyReason: r.reverifyReason,
  };
}

export function toHourView(h: RefusedNotificationHour): RefusedHourView {
  return { channel: h.channel, hour: h.hour.toISOString(), kind: h.kind, kept: h.kept, dropped: h.dropped };
}
