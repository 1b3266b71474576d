import { Injectable } from '@nestjs/common';
import { TransactionRunner } from '../platform/transaction/transaction.runner';

/**
 * The notify route's transactional interceptor: the use case's transactional step (Settlement.apply)
 * runs inside it, in ONE transaction that it opens and commits (again after a lock conflict). It
 * returns only once that transaction has committed; everything after it (the delivery log, the
 * ack) comes after the commit. Known repeats never get here.
 */
@Injectable()
export class NotifyTransactionInterceptor {
  constructor(private readonly transactions: TransactionRunner) {}

  intercept<T>(handler: () => Promise<T>): Promise<T> {
    return this.transactions.run(handler);
  }
}
