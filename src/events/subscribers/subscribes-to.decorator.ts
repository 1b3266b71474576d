import { DiscoveryService } from '@nestjs/core';
import { EventType, PaymentEvent } from '../payment-events';

/** An after-payment handler: its effect runs in the transaction that records the event as processed. */
export interface PaymentEventHandler {
  handle(event: PaymentEvent): Promise<void>;
}

export interface Subscription {
  /** Stable name: the processed-event key, the RabbitMQ queue `payments.<consumer>`, the retry owner. */
  consumer: string;
  events: EventType[];
}

/** Marks a provider as a handler of `events`; SubscriberRegistry finds it at start. */
export const SubscribesTo = DiscoveryService.createDecorator<Subscription>();
