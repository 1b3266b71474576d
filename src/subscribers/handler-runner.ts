import { Injectable } from '@nestjs/common';
import { Propagation, TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { isDuplicateKey } from '../database/sql';
import { PaymentEvent } from '../events/payment-events';
import { Subscriber } from './subscriber-registry';

export type HandlerResult = 'handled' | 'duplicate';

/** Runs one handler on one event, exactly once in effect. */
@Injectable()
export class HandlerRunner {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /**
   * The processed-event row and the handler's effect commit together, in a transaction of their
   * own (never the caller's): the row's unique key turns every repeat into a no-op, and a
   * concurrent repeat waits on that key until the first one commits or rolls back.
   */
  async run(subscriber: Subscriber, event: PaymentEvent): Promise<HandlerResult> {
    const txHost = this.txHost;
    return txHost.withTransaction(Propagation.RequiresNew, async () => {
      try {
        await txHost.tx.query('INSERT INTO processed_event (consumer, event_id, processed_at) VALUES (?, ?, ?)', [
          subscriber.consumer,
          event.eventId,
          new Date(),
        ]);
      } catch (error) {
        if (isDuplicateKey(error)) return 'duplicate';
        throw error;
      }
      await subscriber.handler.handle(event);
      return 'handled';
    });
  }
}
