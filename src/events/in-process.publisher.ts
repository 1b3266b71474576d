import { EventDispatcher } from './subscribers/event-dispatcher';
import { EventPublisher } from './event-publisher';
import { PaymentEvent } from './payment-events';

/** The embedded mode, without a broker: the relay hands each event straight to this instance's handlers. */
export class InProcessPublisher implements EventPublisher {
  constructor(private readonly dispatcher: EventDispatcher) {}

  isAvailable(): boolean {
    return true;
  }

  publishAll(events: PaymentEvent[]): Promise<PromiseSettledResult<void>[]> {
    return this.dispatcher.dispatchAll(events);
  }
}
