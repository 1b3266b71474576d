import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ChannelPayment, ChannelPaymentState } from '../channel-payment.entity';
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

export class BuyerFormView {
  @ApiProperty({ description: "Where the buyer's browser submits the params as a form" })
  action: string;

  @ApiProperty({ enum: ['GET', 'POST'] })
  method: 'GET' | 'POST';
}

export class BuyerView {
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description:
      "What the buyer's client is given, named as the channel's SDK names it: wx.requestPayment's appId, timeStamp, nonceStr, package, signType, paySign; code_url; h5_url; the app SDK's fields",
    example: { code_url: 'weixin://wxpay/bizpayurl?pr=abc' },
  })
  params: Record<string, string>;

  @ApiPropertyOptional({ type: BuyerFormView, description: 'Set when the params are a form to submit' })
  form?: BuyerFormView;
}

export class ChannelPaymentView {
  @ApiProperty({ example: 'JSAPI' })
  method: string;

  @ApiProperty({ enum: Object.values(ChannelPaymentState) })
  state: string;

  @ApiProperty({ format: 'date-time', description: "The order's expiry, sent to the channel as its own" })
  expiresAt: string;

  @ApiProperty({ format: 'date-time', description: 'When the order asked for it: its terms were fixed then' })
  createdAt: string;

  @ApiProperty({
    nullable: true,
    type: BuyerView,
    description: 'CREATED: what the buyer pays with, until validUntil',
  })
  buyer: BuyerView | null;

  @ApiProperty({ nullable: true, type: String, format: 'date-time' })
  validUntil: string | null;

  @ApiProperty({ nullable: true, type: String, description: "The channel's id of what it created (prepay_id, ...)" })
  channelTradeId: string | null;

  @ApiProperty({ description: 'Calls made to the channel' })
  attempts: number;

  @ApiProperty({ nullable: true, type: String, description: "REFUSED: the channel's code; RETRY: why no answer" })
  failureCode: string | null;

  @ApiProperty({ nullable: true, type: String })
  failureMessage: string | null;
}

export class CreatedPaymentOrderView extends PaymentOrderView {
  @ApiProperty({ type: ChannelPaymentView, description: 'The payment created at the channel' })
  payment: ChannelPaymentView;
}

export function toPaymentView(payment: ChannelPayment): ChannelPaymentView {
  return {
    method: payment.method,
    state: payment.state,
    expiresAt: payment.expiresAt.toISOString(),
    createdAt: payment.createdAt.toISOString(),
    buyer: payment.buyer === null ? null : (JSON.parse(payment.buyer) as BuyerView),
    validUntil: payment.validUntil?.toISOString() ?? null,
    channelTradeId: payment.channelTradeId,
    attempts: payment.attempts,
    failureCode: payment.failureCode,
    failureMessage: payment.failureMessage,
  };
}
