import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsString, Length, Matches, Max, Min } from 'class-validator';
import { OptionalField } from '../../platform/http/optional';
import { MAX_AMOUNT } from '../../domain/money';
import { Refund, RefundStatus } from '../refund.entity';

/** The refund numbers both WeChat Pay (out_refund_no) and Alipay (out_request_no) take. */
const REFUND_NO = /^[A-Za-z0-9_\-|*@]{1,64}$/;

export class ShopRefundDto {
  @ApiProperty({
    pattern: REFUND_NO.source,
    description:
      "The order service's own refund number: the idempotency key (the same number again is the same refund)",
    example: 'RF20261205000001',
  })
  @IsString()
  @Matches(REFUND_NO, { message: 'refundNo must be 1 to 64 letters, digits or _ - | * @' })
  refundNo: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_AMOUNT,
    description: 'Integer minor units; what is left of the payment when absent',
  })
  @OptionalField()
  @IsInt({ message: 'amount must be an integer in minor units (e.g. 1999 for 19.99)' })
  @Min(1, { message: 'amount must be greater than zero' })
  @Max(MAX_AMOUNT, { message: `amount must be at most ${MAX_AMOUNT}` })
  amount?: number;

  @ApiProperty({ minLength: 1, maxLength: 256, example: 'returned by the buyer' })
  @IsString()
  @Length(1, 256, { message: 'reason must be 1 to 256 characters' })
  @Matches(/\S/, { message: 'reason must not be blank' })
  reason: string;
}

export class ShopRefundView {
  @ApiProperty()
  refundNo: string;

  @ApiProperty()
  orderNo: string;

  @ApiProperty({ type: 'integer', description: 'Integer minor units' })
  amount: number;

  @ApiProperty()
  currency: string;

  @ApiProperty({
    enum: Object.values(RefundStatus),
    description: 'PENDING until the channel answers; refund.succeeded or refund.closed follows as an event',
  })
  status: string;

  @ApiPropertyOptional({ type: String, nullable: true })
  channelRefundId: string | null;

  @ApiProperty()
  createdAt: string;

  @ApiPropertyOptional({ type: String, nullable: true })
  completedAt: string | null;
}

export function toShopRefundView(refund: Refund): ShopRefundView {
  return {
    refundNo: refund.refundNo,
    orderNo: refund.orderNo,
    amount: refund.amount,
    currency: refund.currency,
    status: refund.status,
    channelRefundId: refund.channelRefundId,
    createdAt: refund.createdAt.toISOString(),
    completedAt: refund.completedAt?.toISOString() ?? null,
  };
}
