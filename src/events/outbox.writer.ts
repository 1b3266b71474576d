import { Injectable } from '@nestjs/common';
import { OutboxRepository } from './outbox.repository';
import { PaymentEvent } from './payment-events';

/** Appends an event to the outbox in the caller's transaction; the relay publishes it after commit. */
@Injectable()
export class OutboxWriter {
  constructor(private readonly outbox: OutboxRepository) {}

  append(event: PaymentEvent): Promise<void> {
    return this.outbox.append(event);
  }
}
