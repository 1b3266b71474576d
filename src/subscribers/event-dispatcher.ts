import { Injectable, Logger } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { Propagation, TransactionHost } from '@nestjs-cls/transactional';
import { PaymentEvent } from '../events/payment-events';
import { HandlerRetryRepository } from './handler-retry.repository';
import { HandlerRunner } from './handler-runner';
import { Subscriber, SubscriberRegistry } from './subscriber-registry';

/** Hands an event to a handler; a failure is parked for retry so that it never blocks other events. */
@Injectable()
export class EventDispatcher {
  private readonly logger = new Logger(EventDispatcher.name);

  constructor(
    private readonly registry: SubscriberRegistry,
    private readonly runner: HandlerRunner,
    private readonly retries: HandlerRetryRepository,
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
  ) {}

  /** Every in-process subscriber of the event's type (the embedded mode, without a broker). */
  async dispatchToAll(event: PaymentEvent): Promise<void> {
    for (const subscriber of this.registry.forEvent(event.type)) await this.deliver(subscriber, event);
  }

  /** Resolves once the handler's effect committed or its failure is recorded; rejects only if neither could be. */
  async deliver(subscriber: Subscriber, event: PaymentEvent): Promise<void> {
    try {
      await this.runner.run(subscriber, event);
    } catch (error) {
      this.logger.warn(
        `${subscriber.consumer} failed on ${event.type} ${event.eventId}: ${(error as Error).message}; will retry`,
      );
      await this.txHost.withTransaction(Propagation.RequiresNew, () =>
        this.retries.recordFailure(subscriber.consumer, event, error),
      );
    }
  }
}
