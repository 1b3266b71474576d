import { ApiProperty } from '@nestjs/swagger';
import { ChannelCall } from '../../trade/channel-call.entity';
import {
  AnomalyStatus,
  AnomalyType,
  PaymentAnomaly,
  ResolutionReason,
  ResolutionStatus,
} from '../../payments/anomaly/anomaly.entity';
import { CallbackDelivery } from '../../payments/idempotency/callback-delivery.entity';
import { ChannelPaymentView, PaymentOrderView, toView } from '../../order/dto/payment-order.view';
import { OrderStatusChange } from '../../order/order-status-change.entity';
import { PaymentOrder } from '../../order/payment-order.entity';
import { OrderStatus } from '../../order/order-status';
import { Refund, RefundPurpose, RefundStatus } from '../../refund/refund.entity';
import { RefundAnomaly } from '../../refund/refund-anomaly.entity';
import { REGISTERED_CHANNELS } from '../../channels/registered-channels';

const iso = (date: Date | null): string | null => date?.toISOString() ?? null;

const MINOR_UNITS = { type: 'integer', description: 'Integer minor units (fen, cents)' } as const;
const DATE_TIME = { type: String, format: 'date-time' } as const;
const NULLABLE_DATE_TIME = { ...DATE_TIME, nullable: true } as const;
const NULLABLE_STRING = { type: String, nullable: true } as const;

/** An admin's decision to close the anomaly without a refund. */
export class AnomalyResolutionView {
  @ApiProperty({ enum: Object.values(ResolutionStatus) })
  status: string;

  @ApiProperty({ enum: Object.values(ResolutionReason) })
  reason: string;

  @ApiProperty(NULLABLE_STRING)
  reference: string | null;

  @ApiProperty()
  note: string;

  @ApiProperty()
  requestedBy: string;

  @ApiProperty(DATE_TIME)
  requestedAt: string;

  @ApiProperty(NULLABLE_STRING)
  reviewedBy: string | null;

  @ApiProperty(NULLABLE_DATE_TIME)
  reviewedAt: string | null;
}

export class AnomalyView {
  @ApiProperty({ description: 'Pass as cursor to page on' })
  id: string;

  @ApiProperty({ enum: Object.values(AnomalyType) })
  type: string;

  @ApiProperty()
  orderNo: string;

  @ApiProperty()
  transactionId: string;

  @ApiProperty({ enum: REGISTERED_CHANNELS })
  channel: string;

  @ApiProperty(MINOR_UNITS)
  orderAmount: number;

  @ApiProperty(MINOR_UNITS)
  paidAmount: number;

  @ApiProperty()
  currency: string;

  @ApiProperty({ enum: Object.values(AnomalyStatus) })
  status: string;

  @ApiProperty(DATE_TIME)
  createdAt: string;

  @ApiProperty(DATE_TIME)
  updatedAt: string;

  @ApiProperty({ type: AnomalyResolutionView, nullable: true, description: 'Closed, or to be, without a refund' })
  resolution: AnomalyResolutionView | null;
}

export function toAnomalyView(a: PaymentAnomaly): AnomalyView {
  return {
    id: a.id,
    type: a.type,
    orderNo: a.orderNo,
    transactionId: a.transactionId,
    channel: a.channel,
    orderAmount: a.orderAmount,
    paidAmount: a.paidAmount,
    currency: a.currency,
    status: a.status,
    createdAt: a.createdAt.toISOString(),
    updatedAt: a.updatedAt.toISOString(),
    resolution: a.resolutionStatus
      ? {
          status: a.resolutionStatus,
          reason: a.resolutionReason!,
          reference: a.resolutionReference,
          note: a.resolutionNote!,
          requestedBy: a.resolutionRequestedBy!,
          requestedAt: a.resolutionRequestedAt!.toISOString(),
          reviewedBy: a.resolutionReviewedBy,
          reviewedAt: iso(a.resolutionReviewedAt),
        }
      : null,
  };
}

export class RefundView {
  @ApiProperty()
  refundNo: string;

  @ApiProperty()
  orderNo: string;

  @ApiProperty({ enum: REGISTERED_CHANNELS })
  channel: string;

  @ApiProperty()
  transactionId: string;

  @ApiProperty({ enum: Object.values(RefundPurpose) })
  purpose: string;

  @ApiProperty(MINOR_UNITS)
  amount: number;

  @ApiProperty()
  currency: string;

  @ApiProperty()
  reason: string;

  @ApiProperty({ enum: Object.values(RefundStatus) })
  status: string;

  @ApiProperty(NULLABLE_STRING)
  channelRefundId: string | null;

  @ApiProperty({ type: 'integer' })
  attempts: number;

  @ApiProperty(NULLABLE_STRING)
  lastError: string | null;

  @ApiProperty({ description: 'The operator id' })
  requestedBy: string;

  /** Who approved or rejected it, when it awaited approval. */
  @ApiProperty(NULLABLE_STRING)
  reviewedBy: string | null;

  @ApiProperty(NULLABLE_DATE_TIME)
  reviewedAt: string | null;

  @ApiProperty(DATE_TIME)
  createdAt: string;

  @ApiProperty(DATE_TIME)
  updatedAt: string;

  @ApiProperty(NULLABLE_DATE_TIME)
  completedAt: string | null;
}

/** A refund the channel made although it was recorded CLOSED or REJECTED: for a person to act on. */
export class RefundAnomalyView {
  @ApiProperty()
  refundNo: string;

  @ApiProperty({ enum: [RefundStatus.Closed, RefundStatus.Rejected], description: 'What the refund was recorded as' })
  wasStatus: string;

  @ApiProperty(MINOR_UNITS)
  amount: number;

  @ApiProperty({ ...MINOR_UNITS, description: 'What the transaction paid' })
  paidAmount: number;

  @ApiProperty({
    ...MINOR_UNITS,
    description: "What the transaction's refunds add up to with this one; above paidAmount, money left twice",
  })
  refundedAmount: number;

  @ApiProperty()
  moneyLeftTwice: boolean;

  @ApiProperty()
  currency: string;

  @ApiProperty()
  createdAt: string;
}

export function toRefundAnomalyView(a: RefundAnomaly): RefundAnomalyView {
  return {
    refundNo: a.refundNo,
    wasStatus: a.wasStatus,
    amount: a.amount,
    paidAmount: a.paidAmount,
    refundedAmount: a.refundedAmount,
    moneyLeftTwice: a.refundedAmount > a.paidAmount,
    currency: a.currency,
    createdAt: a.createdAt.toISOString(),
  };
}

export function toRefundView(r: Refund): RefundView {
  return {
    refundNo: r.refundNo,
    orderNo: r.orderNo,
    channel: r.channel,
    transactionId: r.transactionId,
    purpose: r.purpose,
    amount: r.amount,
    currency: r.currency,
    reason: r.reason,
    status: r.status,
    channelRefundId: r.channelRefundId,
    attempts: r.attempts,
    lastError: r.lastError,
    requestedBy: r.requestedBy,
    reviewedBy: r.reviewedBy,
    reviewedAt: iso(r.reviewedAt),
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
    completedAt: iso(r.completedAt),
  };
}

export class DeliverySummaryView {
  @ApiProperty()
  id: string;

  @ApiProperty({ enum: REGISTERED_CHANNELS })
  channel: string;

  @ApiProperty()
  eventType: string;

  @ApiProperty(NULLABLE_STRING)
  transactionId: string | null;

  @ApiProperty()
  outcome: string;

  @ApiProperty(DATE_TIME)
  receivedAt: string;

  @ApiProperty({ type: 'integer', nullable: true })
  processingMs: number | null;

  @ApiProperty({ description: 'GET this for the exact bytes received and their signature headers' })
  rawPayloadUrl: string;
}

export function toDeliverySummary(d: Omit<CallbackDelivery, 'rawBody' | 'headers' | 'orderNo'>): DeliverySummaryView {
  return {
    id: d.id,
    channel: d.channel,
    eventType: d.eventType,
    transactionId: d.transactionId,
    outcome: d.outcome,
    receivedAt: d.receivedAt.toISOString(),
    processingMs: d.processingMs,
    rawPayloadUrl: `/admin/deliveries/${d.id}`,
  };
}

export class DeliveryView extends DeliverySummaryView {
  @ApiProperty(NULLABLE_STRING)
  orderNo: string | null;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } })
  headers: Record<string, string>;

  @ApiProperty({
    ...NULLABLE_STRING,
    description: 'The body as received, decoded as UTF-8; null once retention pruned it',
  })
  rawBody: string | null;

  @ApiProperty({
    ...NULLABLE_STRING,
    description: 'The body as received, byte-exact; null once retention pruned it',
    format: 'byte',
  })
  rawBodyBase64: string | null;

  @ApiProperty({
    ...NULLABLE_DATE_TIME,
    description: 'When retention removed the bytes (and the headers, if over 256 bytes); null while they are kept',
  })
  rawPrunedAt: string | null;

  @ApiProperty({
    description: 'Whether the bytes hold a part the platform encrypted: GET /admin/deliveries/:id/decrypted opens it',
  })
  encryptedContent: boolean;
}

export function toDeliveryView(d: CallbackDelivery, encryptedContent = false): DeliveryView {
  const pruned = d.rawPrunedAt !== null;
  return {
    ...toDeliverySummary(d),
    orderNo: d.orderNo,
    headers: d.headers,
    rawBody: pruned ? null : d.rawBody.toString('utf8'),
    rawBodyBase64: pruned ? null : d.rawBody.toString('base64'),
    rawPrunedAt: iso(d.rawPrunedAt),
    encryptedContent: !pruned && encryptedContent,
  };
}

export class StatusChangeView {
  @ApiProperty(NULLABLE_STRING)
  fromStatus: string | null;

  @ApiProperty()
  toStatus: string;

  @ApiProperty()
  event: string;

  @ApiProperty(NULLABLE_STRING)
  cause: string | null;

  @ApiProperty(DATE_TIME)
  changedAt: string;
}

export function toStatusChangeView(c: OrderStatusChange): StatusChangeView {
  return {
    fromStatus: c.fromStatus,
    toStatus: c.toStatus,
    event: c.event,
    cause: c.cause,
    changedAt: c.changedAt.toISOString(),
  };
}

export class PaymentView {
  @ApiProperty({ enum: REGISTERED_CHANNELS })
  channel: string;

  @ApiProperty()
  transactionId: string;

  /** The account that took it (the channel's merchant or app id); null for payments recorded before accounts. */
  @ApiProperty({
    ...NULLABLE_STRING,
    description: "The account that took it (the channel's merchant or app id: mchid, app_id)",
  })
  merchantId: string | null;

  @ApiProperty(MINOR_UNITS)
  amount: number;

  @ApiProperty()
  currency: string;

  @ApiProperty({ ...MINOR_UNITS, description: 'Taken by refunds that are pending, in flight or done (minor units)' })
  refundReservedAmount: number;

  @ApiProperty(DATE_TIME)
  firstReceivedAt: string;
}

export class OrderDetailOrderView extends PaymentOrderView {
  @ApiProperty(DATE_TIME)
  createdAt: string;

  @ApiProperty(DATE_TIME)
  updatedAt: string;
}

export class OrderDeliveriesView {
  @ApiProperty({ type: 'integer', description: 'Every delivery received, counted' })
  count: number;

  @ApiProperty(NULLABLE_DATE_TIME)
  firstReceivedAt: string | null;

  @ApiProperty(NULLABLE_DATE_TIME)
  lastReceivedAt: string | null;

  @ApiProperty({ type: [DeliverySummaryView], description: 'Up to 1,000 listed' })
  items: DeliverySummaryView[];
}

export class OrderDetailView {
  @ApiProperty()
  order: OrderDetailOrderView;

  @ApiProperty({ type: [StatusChangeView] })
  history: StatusChangeView[];

  @ApiProperty({ type: [PaymentView] })
  payments: PaymentView[];

  @ApiProperty()
  deliveries: OrderDeliveriesView;

  @ApiProperty({ type: [AnomalyView] })
  anomalies: AnomalyView[];

  @ApiProperty({ type: [RefundView] })
  refunds: RefundView[];

  @ApiProperty({
    type: [RefundAnomalyView],
    description: 'Refunds the channel made after they were recorded CLOSED or REJECTED',
  })
  refundAnomalies: RefundAnomalyView[];

  /** Trade queries and closes at the channel, with their answers. */
  @ApiProperty({
    type: () => [ChannelCallView],
    description: 'Trade queries and closes at the channel, with their answers',
  })
  channelCalls: ChannelCallView[];

  @ApiProperty({
    type: () => ChannelPaymentView,
    nullable: true,
    description: 'The payment this service created at the channel (POST /payment-orders with method): what, until when',
  })
  createdPayment: ChannelPaymentView | null;
}

export class ChannelCallView {
  @ApiProperty({ description: 'query or close' })
  request: string;

  @ApiProperty({ enum: REGISTERED_CHANNELS })
  channel: string;

  @ApiProperty()
  merchantId: string;

  @ApiProperty()
  outcome: string;

  @ApiProperty(NULLABLE_STRING)
  transactionId: string | null;

  @ApiProperty(NULLABLE_STRING)
  detail: string | null;

  @ApiProperty(DATE_TIME)
  at: string;
}

export function toChannelCallView(call: ChannelCall): ChannelCallView {
  return {
    request: call.request,
    channel: call.channel,
    merchantId: call.merchantId,
    outcome: call.outcome,
    transactionId: call.transactionId,
    detail: call.detail,
    at: call.createdAt.toISOString(),
  };
}

export class AnomalyPageView {
  @ApiProperty({ type: [AnomalyView] })
  items: AnomalyView[];

  @ApiProperty({ ...NULLABLE_STRING, description: 'Pass as cursor for the next page; null on the last' })
  nextCursor: string | null;
}

export class RefundListItemView extends RefundView {
  @ApiProperty({
    ...MINOR_UNITS,
    description:
      "What the transaction's refunds add up to now, this one included: done, in flight and awaiting approval. " +
      'Four eyes apply once it reaches REFUND_APPROVAL_THRESHOLD',
  })
  transactionRefundTotal: number;
}

export class RefundPageView {
  @ApiProperty({ type: [RefundListItemView] })
  items: RefundListItemView[];

  @ApiProperty({ ...NULLABLE_STRING, description: 'Pass as cursor for the next page; null on the last' })
  nextCursor: string | null;
}

export class EmergencyRefundView extends RefundView {
  @ApiProperty({ description: 'false when this request repeated an earlier one (same refund number)' })
  created: boolean;
}

export function toOrderDetailOrder(order: PaymentOrder): OrderDetailOrderView {
  return { ...toView(order), createdAt: order.createdAt.toISOString(), updatedAt: order.updatedAt.toISOString() };
}

/** One order of the list: what a payments team filters, exports and opens. */
export class OrderListItemView {
  @ApiProperty()
  orderNo: string;

  @ApiProperty({ enum: Object.values(OrderStatus) })
  status: string;

  @ApiProperty(MINOR_UNITS)
  amount: number;

  @ApiProperty({ example: 'CNY' })
  currency: string;

  @ApiProperty({ nullable: true, enum: REGISTERED_CHANNELS })
  channel: string | null;

  @ApiProperty(NULLABLE_STRING)
  merchantId: string | null;

  @ApiProperty({ ...NULLABLE_STRING, description: 'The transaction that paid the order' })
  transactionId: string | null;

  @ApiProperty(DATE_TIME)
  createdAt: string;

  @ApiProperty(NULLABLE_DATE_TIME)
  paidAt: string | null;
}

export function toOrderListItem(order: PaymentOrder): OrderListItemView {
  return {
    orderNo: order.orderNo,
    status: order.status,
    amount: order.amount,
    currency: order.currency,
    channel: order.channel,
    merchantId: order.merchantId,
    transactionId: order.transactionId,
    createdAt: order.createdAt.toISOString(),
    paidAt: iso(order.paidAt),
  };
}

export class OrderPageView {
  @ApiProperty({ type: [OrderListItemView] })
  items: OrderListItemView[];

  @ApiProperty({ ...NULLABLE_STRING, description: 'Pass as cursor for the next page; null on the last' })
  nextCursor: string | null;
}

/** A delivery's encrypted part, decrypted: exact for an admin (audited), the payer masked for a viewer. */
export class DecryptedContentView {
  @ApiProperty()
  deliveryId: string;

  @ApiProperty({ enum: REGISTERED_CHANNELS })
  channel: string;

  @ApiProperty({ description: "True for a viewer: the payer's identifiers (openids, refund account) masked" })
  masked: boolean;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The decrypted resource, as JSON' })
  content: Record<string, unknown>;
}
