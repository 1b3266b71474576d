import { PaymentEvent } from './payment-events';

/** Where the outbox relay sends events: RabbitMQ when configured, else the in-process handlers. */
export interface EventPublisher {
  /** False while the destination cannot be reached: the relay then waits, and counts no attempt. */
  isAvailable(): boolean;
  /**
   * For each event, in order: fulfilled once the destination has taken it (broker confirm, or
   * handlers done), rejected with the reason it could not: a DestinationUnavailable when the
   * destination did not answer (a stall, a timeout, a lost connection), which is nobody's attempt.
   */
  publishAll(events: PaymentEvent[]): Promise<PromiseSettledResult<void>[]>;
}

export const EVENT_PUBLISHER = Symbol('EVENT_PUBLISHER');

/** The destination could not be reached in time: the event waits, and no attempt is counted. */
export class DestinationUnavailable extends Error {}
