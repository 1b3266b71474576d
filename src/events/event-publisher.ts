import { PaymentEvent } from './payment-events';

/** Where the outbox relay sends events: RabbitMQ when configured, else the in-process handlers. */
export interface EventPublisher {
  /** False while the destination cannot be reached: the relay then waits, and counts no attempt. */
  isAvailable(): boolean;
  /**
   * For each event, in order: fulfilled once the destination has taken it (broker confirm, or
   * handlers done), rejected with the reason it could not.
   */
  publishAll(events: PaymentEvent[]): Promise<PromiseSettledResult<void>[]>;
}

export const EVENT_PUBLISHER = Symbol('EVENT_PUBLISHER');
