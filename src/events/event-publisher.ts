import { PaymentEvent } from './payment-events';

/** Where the outbox relay sends events: RabbitMQ when configured, else the in-process handlers. */
export interface EventPublisher {
  /** False while the destination cannot be reached: the relay then waits, and counts no attempt. */
  isAvailable(): boolean;
  /** Resolves once the destination has taken the event (broker confirm, or handlers done). */
  publish(event: PaymentEvent): Promise<void>;
}

export const EVENT_PUBLISHER = Symbol('EVENT_PUBLISHER');
