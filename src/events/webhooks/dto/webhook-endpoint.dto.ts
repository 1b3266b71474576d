import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsBoolean,
  IsIn,
  IsInt,
  IsISO8601,
  IsString,
  Length,
  Matches,
  Max,
  Min,
} from 'class-validator';
import { OptionalField } from '../../../platform/http/optional';
import { EventType } from '../../payment-events';

const EVENT_TYPES = Object.values(EventType);
const ISO = { strict: true, strictSeparator: true };
const NULLABLE_STRING = { type: String, nullable: true } as const;

export class CreateWebhookEndpointDto {
  @ApiProperty({ example: 'https://shop.example.com/webhooks/payments', maxLength: 2048 })
  @IsString()
  @Length(1, 2048)
  url: string;

  @ApiPropertyOptional({
    enum: EVENT_TYPES,
    isArray: true,
    description: 'The event types it receives; all when absent',
  })
  @OptionalField()
  @ArrayMinSize(1)
  @ArrayMaxSize(EVENT_TYPES.length)
  @ArrayUnique()
  @IsIn(EVENT_TYPES, { each: true, message: `eventTypes must be some of ${EVENT_TYPES.join(', ')}` })
  eventTypes?: EventType[];

  @ApiPropertyOptional({ maxLength: 255 })
  @OptionalField()
  @IsString()
  @Length(0, 255)
  description?: string;
}

export class UpdateWebhookEndpointDto {
  @ApiPropertyOptional({ description: 'false disables it (nothing is sent, deliveries wait); true enables it again' })
  @OptionalField()
  @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional({ enum: EVENT_TYPES, isArray: true, nullable: true, description: 'null: all event types' })
  @OptionalField({ nullable: true })
  @ArrayMinSize(1)
  @ArrayMaxSize(EVENT_TYPES.length)
  @ArrayUnique()
  @IsIn(EVENT_TYPES, { each: true, message: `eventTypes must be some of ${EVENT_TYPES.join(', ')}` })
  eventTypes?: EventType[] | null;

  @ApiPropertyOptional({ maxLength: 255 })
  @OptionalField()
  @IsString()
  @Length(0, 255)
  description?: string;
}

export class ResendDto {
  @ApiProperty({ description: "The event's id: its webhook-id", example: '0b5a6f0e-8f7c-4d0e-9b8a-2f9a3c1d4e5f' })
  @Matches(/^[0-9a-f-]{36}$/i, { message: 'eventId must be an event id (a UUID)' })
  eventId: string;
}

export class RecoverDto {
  @ApiProperty({ format: 'date-time', description: 'Re-send every FAILED delivery created since then' })
  @IsISO8601(ISO, { message: 'since must be an ISO 8601 date-time, e.g. 2026-11-29T00:00:00Z' })
  since: string;
}

export const AttemptOutcome = { Succeeded: 'succeeded', Failed: 'failed' } as const;
export type AttemptOutcome = (typeof AttemptOutcome)[keyof typeof AttemptOutcome];

export class AttemptQueryDto {
  @ApiPropertyOptional()
  @OptionalField()
  @Matches(/^[0-9a-f-]{36}$/i, { message: 'eventId must be an event id (a UUID)' })
  eventId?: string;

  @ApiPropertyOptional()
  @OptionalField()
  @IsString()
  @Length(1, 64)
  orderNo?: string;

  @ApiPropertyOptional({ enum: Object.values(AttemptOutcome) })
  @OptionalField()
  @IsIn(Object.values(AttemptOutcome), { message: 'status must be succeeded or failed' })
  status?: AttemptOutcome;

  @ApiPropertyOptional({ format: 'date-time', description: 'Attempts started at or after (inclusive)' })
  @OptionalField()
  @IsISO8601(ISO, { message: 'from must be an ISO 8601 date-time' })
  from?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Attempts started before (exclusive)' })
  @OptionalField()
  @IsISO8601(ISO, { message: 'to must be an ISO 8601 date-time' })
  to?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 200, default: 50 })
  @OptionalField()
  @Type(() => Number)
  @IsInt({ message: 'limit must be an integer' })
  @Min(1)
  @Max(200)
  limit?: number;

  @ApiPropertyOptional({ description: 'The nextCursor of the previous page', pattern: '^[1-9]\\d{0,18}$' })
  @OptionalField()
  @Matches(/^[1-9]\d{0,18}$/, { message: 'cursor must be the nextCursor of a previous page' })
  cursor?: string;
}

export class WebhookEndpointView {
  @ApiProperty()
  id: string;

  @ApiProperty()
  url: string;

  @ApiProperty(NULLABLE_STRING)
  description: string | null;

  @ApiProperty({ enum: EVENT_TYPES, isArray: true, nullable: true, description: 'null: all event types' })
  eventTypes: string[] | null;

  @ApiProperty()
  enabled: boolean;

  @ApiProperty({ ...NULLABLE_STRING, description: 'Why the service disabled it, when it did' })
  disabledReason: string | null;

  @ApiProperty({ ...NULLABLE_STRING, format: 'date-time', description: 'Since when every attempt has failed' })
  failingSince: string | null;

  @ApiProperty({
    ...NULLABLE_STRING,
    format: 'date-time',
    description: 'Until when the secret before the last rotation still signs alongside the current one',
  })
  previousSecretUntil: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt: string;
}

export class WebhookEndpointSecretView extends WebhookEndpointView {
  @ApiProperty({ description: 'The signing secret (whsec_…): shown this once, never again', example: 'whsec_…' })
  secret: string;
}

export class WebhookAttemptView {
  @ApiProperty({ description: 'Pass as cursor to page on' })
  id: string;

  @ApiProperty({ description: 'The event id, sent as webhook-id' })
  eventId: string;

  @ApiProperty()
  eventType: string;

  @ApiProperty()
  orderNo: string;

  @ApiProperty({ description: "The attempt's number for this event at this endpoint (1 for the first)" })
  attempt: number;

  @ApiProperty({ format: 'date-time' })
  startedAt: string;

  @ApiProperty()
  latencyMs: number;

  @ApiProperty({ type: Number, nullable: true, description: 'null when no HTTP answer came' })
  statusCode: number | null;

  @ApiProperty({ enum: Object.values(AttemptOutcome) })
  status: AttemptOutcome;

  @ApiProperty(NULLABLE_STRING)
  error: string | null;

  @ApiProperty({ ...NULLABLE_STRING, description: 'The first 1 KB of the answer' })
  responseBody: string | null;

  @ApiProperty({ enum: ['PENDING', 'SUCCEEDED', 'FAILED'], description: "The delivery's status now" })
  deliveryStatus: string;
}

export class WebhookAttemptPageView {
  @ApiProperty({ type: [WebhookAttemptView] })
  items: WebhookAttemptView[];

  @ApiProperty({ ...NULLABLE_STRING, description: 'Pass as cursor for the next page; null on the last' })
  nextCursor: string | null;
}

export class ResendView {
  @ApiProperty()
  eventId: string;

  @ApiProperty({ enum: ['PENDING', 'SUCCEEDED', 'FAILED'] })
  status: string;

  @ApiProperty({ description: 'false when the delivery was already pending: nothing changed' })
  queued: boolean;
}

export class RecoverView {
  @ApiProperty({ description: 'FAILED deliveries queued again' })
  queued: number;

  @ApiProperty({ format: 'date-time', description: 'When the last of them is due (they are spread out)' })
  lastDueAt: string;
}
