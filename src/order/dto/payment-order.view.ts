import { ApiProperty } from '@nestjs/swagger';
import { OrderStatus } from '../order-status';
import { PaymentOrder } from '../payment-order.entity';
import { REGISTERED_CHANNELS } from '../../channels/registered-channels';

export class PaymentOrderView {
  @ApiProperty({ example: 'ORD20261129000123' })
  orderNo: string;

  @ApiProperty({ example: 'u-1' })
  userId: string;

  @ApiProperty({ enum: Object.values(OrderStatus) })
  status: string;

  @ApiProperty({ description: 'Integer minor units (fen, cents): 1999 is 19.99', example: 1999 })
  amount: number;

  @ApiProperty({ example: 'CNY' })
  currency: string;

  /** The channel (and account) registered for the order, then the ones that paid it. */
  @ApiProperty({
    nullable: true,
    enum: REGISTERED_CHANNELS,
    description: 'The channel registered for the order, then the one that paid it',
    example: REGISTERED_CHANNELS[0],
  })
  channel: string | null;

  @ApiProperty({ nullable: true, type: String, description: 'The account of that channel (mchid, app_id)' })
  merchantId: string | null;

  @ApiProperty({
    nullable: true,
    type: String,
    description: "The sub-merchant of that account (a service provider's sub_mchid) registered, then the one paid",
  })
  subMerchantId: string | null;

  @ApiProperty({
    nullable: true,
    type: String,
    pattern: '^\\d{14}$',
    description:
      'yyyyMMddHHmmss: the time the order was sent to the channel, for channels that identify an order by it',
  })
  channelOrderTime: string | null;

  @ApiProperty({ nullable: true, type: String, description: "The channel's transaction id of the payment" })
  transactionId: string | null;

  @ApiProperty({ nullable: true, type: String, format: 'date-time' })
  paidAt: string | null;
}

export function toView(order: PaymentOrder): PaymentOrderView {
  return {
    orderNo: order.orderNo,
    userId: order.userId,
    status: order.status,
    amount: order.amount,
    currency: order.currency,
    channel: order.channel,
    merchantId: order.merchantId,
    subMerchantId: order.subMerchantId,
    channelOrderTime: order.channelOrderTime,
    transactionId: order.transactionId,
    paidAt: order.paidAt?.toISOString() ?? null,
  };
}
