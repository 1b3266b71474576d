import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsIP,
  IsISO8601,
  IsOptional,
  IsString,
  IsUrl,
  Length,
  Matches,
  Max,
  Min,
  ValidateBy,
  ValidateNested,
} from 'class-validator';
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

const URL_OPTIONS = { protocols: ['http', 'https'], require_protocol: true, require_tld: false };

/** What the buyer's side tells us, per method (PayerDetails): each method's needs are in the docs. */
export class PayerDto {
  @ApiPropertyOptional({ description: "The payer's openid in the app they pay in (WeChat Pay JSAPI, MINI_PROGRAM)" })
  @IsOptional()
  @IsString()
  @Matches(/^[\w-]{1,128}$/, { message: 'payer.openid must be an openid (letters, digits, _ and -, at most 128)' })
  openid?: string;

  @ApiPropertyOptional({ description: "The buyer's IP address as the shop saw it (WeChat Pay H5)" })
  @IsOptional()
  @IsIP(undefined, { message: 'payer.clientIp must be an IPv4 or IPv6 address' })
  clientIp?: string;

  @ApiPropertyOptional({ enum: ['Wap', 'iOS', 'Android'], description: "The buyer's client of an H5 payment" })
  @IsOptional()
  @IsIn(['Wap', 'iOS', 'Android'], { message: 'payer.h5Type must be one of Wap, iOS, Android' })
  h5Type?: string;

  @ApiPropertyOptional({ description: "Where the buyer's browser returns after paying (Alipay page/wap, UnionPay)" })
  @IsOptional()
  @IsUrl(URL_OPTIONS, { message: 'payer.returnUrl must be an http(s) URL' })
  @Length(1, 256, { message: 'payer.returnUrl must be at most 256 characters' })
  returnUrl?: string;

  @ApiPropertyOptional({ description: 'Where the buyer goes when giving up (Alipay wap quit_url)' })
  @IsOptional()
  @IsUrl(URL_OPTIONS, { message: 'payer.quitUrl must be an http(s) URL' })
  @Length(1, 256, { message: 'payer.quitUrl must be at most 256 characters' })
  quitUrl?: string;

  @ApiPropertyOptional({ description: "The buyer's id at the channel (Alipay buyer_id, for alipay.trade.create)" })
  @IsOptional()
  @IsString()
  @Matches(/^\w{1,64}$/, { message: 'payer.buyerId must be letters and digits, at most 64' })
  buyerId?: string;
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
  @IsOptional()
  @IsString()
  @Matches(/^\w{1,32}$/, { message: 'merchantId must be a mchid or app_id (letters and digits, at most 32)' })
  merchantId?: string;

  /** The sub-merchant of a service provider's account the order is for (a sub_mchid). */
  @ApiPropertyOptional({
    pattern: '^\\w{1,32}$',
    description:
      "The sub-merchant the order is for, when the channel's account is a service provider's (sub_mchid): a payment to another sub-merchant is not applied",
  })
  @IsOptional()
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
  @IsOptional()
  @ValidateBy(
    { name: 'isChannelOrderTime', validator: { validate: isChannelOrderTime } },
    { message: 'channelOrderTime must be a valid date and time of 14 digits, yyyyMMddHHmmss (e.g. 20261129103000)' },
  )
  channelOrderTime?: string;

  /** With `channel`: create the payment at the channel now; the answer carries what the buyer pays with. */
  @ApiPropertyOptional({
    pattern: '^[A-Z0-9_]{1,32}$',
    example: 'JSAPI',
    description:
      "Create the payment at `channel` with this method (one of the channel's; see docs/taking-a-payment.md), and answer what the buyer's client pays with. Without it the order is only registered, as before",
  })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Z0-9_]{1,32}$/, { message: 'method must be a payment method name such as JSAPI or NATIVE' })
  method?: string;

  @ApiPropertyOptional({
    maxLength: 127,
    example: 'Order ORD20261129000123',
    description: 'With method: what the buyer sees on the payment (WeChat description, Alipay subject)',
  })
  @IsOptional()
  @IsString()
  @Length(1, 127, { message: 'description must be 1 to 127 characters' })
  description?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    description:
      'With method: when the order stops being payable (at the channel too: its time_expire); default now + PAYMENT_EXPIRY_SECONDS. Whole seconds; at least a minute ahead, at most 7 days',
  })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'expiresAt must be an ISO 8601 date-time such as 2026-11-29T10:30:00+08:00' })
  expiresAt?: string;

  @ApiPropertyOptional({
    pattern: '^\\w{1,32}$',
    description: 'With method: the app the buyer pays in (appid), when the account has several',
  })
  @IsOptional()
  @IsString()
  @Matches(/^\w{1,32}$/, { message: 'appId must be an appid (letters and digits, at most 32)' })
  appId?: string;

  @ApiPropertyOptional({
    pattern: '^\\w{1,32}$',
    description: "With method, in partner mode: the sub-merchant's app (sub_appid) the buyer pays in",
  })
  @IsOptional()
  @IsString()
  @Matches(/^\w{1,32}$/, { message: 'subAppId must be a sub_appid (letters and digits, at most 32)' })
  subAppId?: string;

  @ApiPropertyOptional({ type: PayerDto, description: 'With method: what the method needs of the buyer' })
  @IsOptional()
  @ValidateNested()
  @Type(() => PayerDto)
  payer?: PayerDto;
}
