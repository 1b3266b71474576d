import { randomUUID } from 'node:crypto';
import { PaymentNotification } from '../domain/notification';

export const EventType = { PaymentSucceeded: 'payment.succeeded', RefundSucceeded: 'refund.succeeded' } as const;
export type EventType = (typeof EventType)[keyof typeof EventType];

/** The message body other services receive; the contract is documented in docs/architecture.md ("Destination: RabbitMQ, or in-process"). */
export interface PaymentEvent {
  eventId: string;
  type: EventType;
  occurredAt: string;
  orderNo: string;
  transactionId: string;
  channel: string;
  /** Minor units: what was paid, or for refund.succeeded what was refunded. */
  amount: number;
  currency: string;
  /** refund.succeeded only. */
  refundNo?: string;
}

export function paymentSucceeded(payment: PaymentNotification): PaymentEvent {
  return {
    eventId: randomUUID(),
    type: EventType.PaymentSucceeded,
    occurredAt: payment.paidAt.toISOString(),
    orderNo: payment.outTradeNo,
    transactionId: payment.transactionId,
    channel: payment.channel,
    amount: payment.amount,
    currency: payment.currency,
  };
}

export function refundSucceeded(refund: {
  orderNo: string;
  transactionId: string;
  channel: string;
  amount: number;
  currency: string;
  refundNo: string;
}): PaymentEvent {
  return {
    eventId: randomUUID(),
    type: EventType.RefundSucceeded,
    occurredAt: new Date().toISOString(),
    orderNo: refund.orderNo,
    transactionId: refund.transactionId,
    channel: refund.channel,
    amount: refund.amount,
    currency: refund.currency,
    refundNo: refund.refundNo,
  };
}
