import { Injectable, Logger } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { Propagation, TransactionHost } from '@nestjs-cls/transactional';
import { PaymentEvent } from '../payment-events';
import { HandlerRetryRepository } from './handler-retry.repository';
import { HandlerFailure, HandlerRunner } from './handler-runner';
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

  /**
   * The embedded mode, without a broker: every in-process subscriber gets its events of the batch
   * in one transaction (a few round trips for the batch instead of four per event). When that
   * fails (a handler's error, an event already processed), its events are delivered one by one,
   * so that only the failing one is parked for retry. An event is rejected only if its failure
   * could not even be recorded.
   */
  async dispatchAll(events: PaymentEvent[]): Promise<PromiseSettledResult<void>[]> {
    const unrecorded = new Map<PaymentEvent, unknown>();
    await Promise.all(
      this.registry.all().map(async (subscriber) => {
        const its = events.filter((event) => subscriber.events.includes(event.type));
        if (its.length === 0) return;
        try {
          await this.runner.runAll(subscriber, its);
        } catch (error) {
          for (const event of its) {
            const failedOnThis = error instanceof HandlerFailure && error.event === event;
            await (
              failedOnThis ? this.parkFailure(subscriber, event, error.reason) : this.deliver(subscriber, event)
            ).catch((unrecordable) => unrecorded.set(event, unrecordable));
          }
        }
      }),
    );
    return events.map((event) =>
      unrecorded.has(event)
        ? { status: 'rejected', reason: unrecorded.get(event) }
        : { status: 'fulfilled', value: undefined },
    );
  }

  /** Resolves once the handler's effect committed or its failure is recorded; rejects only if neither could be. */
  async deliver(subscriber: Subscriber, event: PaymentEvent): Promise<void> {
    try {
      await this.runner.run(subscriber, event);
    } catch (error) {
      await this.parkFailure(subscriber, event, error);
    }
  }

  private async parkFailure(subscriber: Subscriber, event: PaymentEvent, error: unknown): Promise<void> {
    this.logger.warn(
      `${subscriber.consumer} failed on ${event.type} ${event.eventId}: ${(error as Error)?.message}; will retry`,
    );
    await this.txHost.withTransaction(Propagation.RequiresNew, () =>
      this.retries.recordFailure(subscriber.consumer, event, error),
    );
  }
}
