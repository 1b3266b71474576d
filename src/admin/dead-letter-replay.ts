import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { Propagation, Transactional, TransactionHost } from '@nestjs-cls/transactional';
import { DomainError } from '../domain/domain-error';
import { requeueDeadLetters } from '../events/dead-letters.repository';
import { TransactionRunner } from '../platform/transaction/transaction.runner';

const EVENT_ID = /^[\x21-\x7e]{1,64}$/;

export interface Replayed {
  eventId: string;
  replayed: number;
}

/**
 * An operator's replay of one dead-lettered event: put back in line in ONE transaction of its own
 * (Propagation.Never), with the caller's audit row (alongside). Consumers deduplicate by eventId,
 * so a second replay is harmless.
 */
@Injectable()
export class DeadLetterReplay {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
  ) {}

  @Transactional(Propagation.Never)
  replay(eventId: string, alongside?: (result: Replayed) => Promise<void>): Promise<Replayed> {
    return this.transactions.run(async () => {
      const replayed = EVENT_ID.test(eventId) ? await requeueDeadLetters(this.txHost.tx, [eventId]) : 0;
      if (replayed === 0) throw new DomainError('NotFound', `no dead letter ${eventId.slice(0, 64)}`);
      const result = { eventId, replayed };
      await alongside?.(result);
      return result;
    });
  }
}
