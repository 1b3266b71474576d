import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsString, Matches, Max, Min, ValidateBy } from 'class-validator';
import { OptionalField } from '../../platform/http/optional';
import { Channel } from '../../domain/notification';
import { ORDER_NO, ORDER_NO_MESSAGE } from '../order-no';
import { MAX_AMOUNT } from '../../domain/money';
import { OptionalOneOf } from '../../platform/http/query-decorators';
import { REGISTERED_CHANNELS } from '../../channels/registered-channels';

const CHANNEL_ORDER_TIME = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/;

/** yyyyMMddHHmmss naming a real moment of the calendar: 20260230120000 and 20261201246000 are not. */
export function isChannelOrderTime(value: unknown): boolean {
  const parts = typeof value === 'string' ? CHANNEL_ORDER_TIME.exec(value) : null;
  if (!parts) return false;
  const [year, month, day, hour, minute, second] = parts.slice(1).map(Number);
  const at = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  return (
    at.getUTCFullYear() === year &&
    at.getUTCMonth() === month - 1 &&
    at.getUTCDate() === day &&
    at.getUTCHours() === hour &&
    at.getUTCMinutes() === minute &&
    at.getUTCSeconds() === second
  );
}

export class CreatePaymentOrderDto {
  @ApiProperty({ pattern: ORDER_NO.source, example: 'ORD20261129000123' })
  @IsString()
  @Matches(ORDER_NO, { message: ORDER_NO_MESSAGE })
  orderNo: string;

  @ApiProperty({ pattern: '^\\S{1,64}$', example: 'u-1' })
  @IsString()
  @Matches(/^\S{1,64}$/, { message: 'userId must be 1 to 64 characters without spaces' })
  userId: string;

  /** Integer minor units (fen, cents). */
  @ApiProperty({
    type: 'integer',
    minimum: 1,
    maximum: MAX_AMOUNT,
    description: 'Integer minor units (fen, cents): 1999 is 19.99',
    example: 1999,
  })
  @IsInt({ message: 'amount must be an integer in minor units (e.g. 1999 for 19.99)' })
  @Min(1, { message: 'amount must be greater than zero' })
  @Max(MAX_AMOUNT, { message: `amount must be at most ${MAX_AMOUNT}` })
  amount: number;

  @ApiProperty({ pattern: '^[A-Z]{3}$', description: 'ISO 4217, one of CURRENCIES (default CNY only)', example: 'CNY' })
  @IsString()
  @Matches(/^[A-Z]{3}$/, { message: 'currency must be an ISO 4217 code such as CNY' })
  currency: string;

  /** The channel the buyer pays through, when known: active queries and closes then ask only it. */
  @OptionalOneOf(
    'channel',
    REGISTERED_CHANNELS,
    'The channel the buyer pays through, when known: active queries and closes then ask only it',
  )
  channel?: Channel;

  /** The account (the channel's merchant or app id) of that channel the order was placed with. */
  @ApiPropertyOptional({
    pattern: '^\\w{1,32}$',
    description:
      "The account (the channel's merchant or app id: mchid, app_id) of that channel the order was placed with",
  })
  @OptionalField()
  @IsString()
  @Matches(/^\w{1,32}$/, { message: 'merchantId must be a mchid or app_id (letters and digits, at most 32)' })
  merchantId?: string;

  /** The sub-merchant of a service provider's account the order is for (a sub_mchid). */
  @ApiPropertyOptional({
    pattern: '^\\w{1,32}$',
    description:
      "The sub-merchant the order is for, when the channel's account is a service provider's (sub_mchid): a payment to another sub-merchant is not applied",
  })
  @OptionalField()
  @IsString()
  @Matches(/^\w{1,32}$/, { message: 'subMerchantId must be a sub-merchant id (letters and digits, at most 32)' })
  subMerchantId?: string;

  /** yyyyMMddHHmmss: the time the order was sent to the channel. */
  @ApiPropertyOptional({
    pattern: '^\\d{14}$',
    example: '20261129103000',
    description:
      "yyyyMMddHHmmss: the time the order was sent to the channel, for channels that identify an order by it (Beijing time). Required when the order names such a channel; without it that channel's active query cannot find the order",
  })
  @OptionalField()
  @ValidateBy(
    { name: 'isChannelOrderTime', validator: { validate: isChannelOrderTime } },
    { message: 'channelOrderTime must be a valid date and time of 14 digits, yyyyMMddHHmmss (e.g. 20261129103000)' },
  )
  channelOrderTime?: string;
}
