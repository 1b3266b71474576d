import { randomUUID } from 'node:crypto';
import { PaymentNotification } from '../domain/notification';

export const EventType = {
  PaymentSucceeded: 'payment.succeeded',
  RefundSucceeded: 'refund.succeeded',
  /** A refund that will not happen: the channel closed or refused it, or an admin rejected it. */
  RefundClosed: 'refund.closed',
} as const;
export type EventType = (typeof EventType)[keyof typeof EventType];

/** The message body other services receive; the contract is documented in docs/architecture.md ("Destination: RabbitMQ, or in-process"). */
export interface PaymentEvent {
  eventId: string;
  type: EventType;
  occurredAt: string;
  orderNo: string;
  transactionId: string;
  channel: string;
  /** Minor units: what was paid, for refund.succeeded what was refunded, for refund.closed what was not. */
  amount: number;
  currency: string;
  /** refund.succeeded and refund.closed only. */
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

interface RefundFacts {
  orderNo: string;
  transactionId: string;
  channel: string;
  amount: number;
  currency: string;
  refundNo: string;
}

export function refundSucceeded(refund: RefundFacts): PaymentEvent {
  return refundEvent(EventType.RefundSucceeded, refund);
}

export function refundClosed(refund: RefundFacts): PaymentEvent {
  return refundEvent(EventType.RefundClosed, refund);
}

function refundEvent(type: EventType, refund: RefundFacts): PaymentEvent {
  return {
    eventId: randomUUID(),
    type,
    occurredAt: new Date().toISOString(),
    orderNo: refund.orderNo,
    transactionId: refund.transactionId,
    channel: refund.channel,
    amount: refund.amount,
    currency: refund.currency,
    refundNo: refund.refundNo,
  };
}
