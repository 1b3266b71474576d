import { Injectable } from '@nestjs/common';
import { Propagation, TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { isDuplicateKey } from '../../platform/database/sql';
import { PaymentEvent } from '../payment-events';
import { ProcessedEventRepository } from './processed-event.repository';
import { Subscriber } from './subscriber-registry';

export type HandlerResult = 'handled' | 'duplicate';

/** Which event of a batch the handler failed on, and why. */
export class HandlerFailure extends Error {
  constructor(
    readonly event: PaymentEvent,
    readonly reason: unknown,
  ) {
    super((reason as Error)?.message ?? String(reason));
  }
}

/** Runs one handler on one event, exactly once in effect. */
@Injectable()
export class HandlerRunner {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly processed: ProcessedEventRepository,
  ) {}

  /**
   * The processed-event row and the handler's effect commit together, in a transaction of their
   * own (never the caller's): the row's unique key turns every repeat into a no-op, and a
   * concurrent repeat waits on that key until the first one commits or rolls back.
   */
  async run(subscriber: Subscriber, event: PaymentEvent): Promise<HandlerResult> {
    return this.txHost.withTransaction(Propagation.RequiresNew, async () => {
      try {
        await this.processed.insert(subscriber.consumer, event.eventId, new Date());
      } catch (error) {
        if (isDuplicateKey(error)) return 'duplicate';
        throw error;
      }
      await subscriber.handler.handle(event);
      return 'handled';
    });
  }

  /**
   * Runs the handler on a batch of events in one transaction of its own, exactly once in effect:
   * their processed-event rows go in one INSERT, which fails as a whole when any of them was
   * processed before. Any failure rolls everything back; the caller then runs them one by one,
   * except the one the handler failed on (a HandlerFailure), whose attempt this was.
   */
  async runAll(subscriber: Subscriber, events: PaymentEvent[]): Promise<void> {
    await this.txHost.withTransaction(Propagation.RequiresNew, async () => {
      const now = new Date();
      await this.processed.insertAll(
        subscriber.consumer,
        events.map((event) => event.eventId),
        now,
      );
      for (const event of events) {
        try {
          await subscriber.handler.handle(event);
        } catch (error) {
          throw new HandlerFailure(event, error);
        }
      }
    });
  }
}
