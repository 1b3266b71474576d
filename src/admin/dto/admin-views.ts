import { ChannelCall } from '../../trade/channel-call.entity';
import { PaymentAnomaly } from '../../anomaly/anomaly.entity';
import { CallbackDelivery } from '../../idempotency/callback-delivery.entity';
import { PaymentOrderView, toView } from '../../order/dto/payment-order.view';
import { OrderStatusChange } from '../../order/order-status-change.entity';
import { PaymentOrder } from '../../order/payment-order.entity';
import { Refund } from '../../refund/refund.entity';

const iso = (date: Date | null): string | null => date?.toISOString() ?? null;

export interface AnomalyView {
  id: string;
  type: string;
  orderNo: string;
  transactionId: string;
  channel: string;
  orderAmount: number;
  paidAmount: number;
  currency: string;
  status: string;
  createdAt: string;
  updatedAt: string;
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
  };
}

export interface RefundView {
  refundNo: string;
  orderNo: string;
  channel: string;
  transactionId: string;
  purpose: string;
  amount: number;
  currency: string;
  reason: string;
  status: string;
  channelRefundId: string | null;
  attempts: number;
  lastError: string | null;
  requestedBy: string;
  /** Who approved or rejected it, when it awaited approval. */
  reviewedBy: string | null;
  reviewedAt: string | null;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
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

export interface DeliverySummaryView {
  id: string;
  channel: string;
  eventType: string;
  transactionId: string | null;
  outcome: string;
  receivedAt: string;
  processingMs: number | null;
  /** GET this for the exact bytes received and their signature headers. */
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

export interface DeliveryView extends DeliverySummaryView {
  orderNo: string | null;
  headers: Record<string, string>;
  /** The body as received, decoded as UTF-8; rawBodyBase64 is byte-exact. */
  rawBody: string;
  rawBodyBase64: string;
}

export function toDeliveryView(d: CallbackDelivery): DeliveryView {
  return {
    ...toDeliverySummary(d),
    orderNo: d.orderNo,
    headers: d.headers,
    rawBody: d.rawBody.toString('utf8'),
    rawBodyBase64: d.rawBody.toString('base64'),
  };
}

export interface StatusChangeView {
  fromStatus: string | null;
  toStatus: string;
  event: string;
  cause: string | null;
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

export interface PaymentView {
  channel: string;
  transactionId: string;
  /** The account that took it (WeChat mchid, Alipay app_id); null for payments recorded before accounts. */
  merchantId: string | null;
  amount: number;
  currency: string;
  /** Taken by refunds that are pending, in flight or done. */
  refundReservedAmount: number;
  firstReceivedAt: string;
}

export interface OrderDetailView {
  order: PaymentOrderView & { createdAt: string; updatedAt: string };
  history: StatusChangeView[];
  payments: PaymentView[];
  deliveries: {
    count: number;
    firstReceivedAt: string | null;
    lastReceivedAt: string | null;
    items: DeliverySummaryView[];
  };
  anomalies: AnomalyView[];
  refunds: RefundView[];
  /** Trade queries and closes at the channel, with their answers. */
  channelCalls: ChannelCallView[];
}

export interface ChannelCallView {
  request: string;
  channel: string;
  merchantId: string;
  outcome: string;
  transactionId: string | null;
  detail: string | null;
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

export function toOrderDetailOrder(order: PaymentOrder): OrderDetailView['order'] {
  return { ...toView(order), createdAt: order.createdAt.toISOString(), updatedAt: order.updatedAt.toISOString() };
}
