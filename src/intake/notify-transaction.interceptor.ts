import { Injectable } from '@nestjs/common';
import { isPayment, PaymentNotification, VerifiedNotification } from '../domain/notification';
import { StatementBatch } from '../platform/database/statement-batch';
import { isRetryableLockConflict, TransactionRunner } from '../platform/transaction/transaction.runner';
import { Arrival, DeliveryOutcome, Settlement } from '../settlement/settlement.service';

/**
 * The notify route's transactional interceptor: a delivery's effect runs inside it, in ONE
 * transaction that it opens and commits. It returns only once that transaction has committed;
 * everything after it (the delivery log, the ack) comes after the commit. Known repeats never get here.
 * - A payment: Settlement.paymentBatch in a transaction passed explicitly (no async context, no
 *   ORM): START TRANSACTION with the batch, then COMMIT. A payment whose order did not move, or
 *   that met a lock conflict, is rolled back and goes on as below.
 * - Anything else: Settlement.apply in a transaction of TransactionRunner's (again after a lock
 *   conflict).
 */
@Injectable()
export class NotifyTransactionInterceptor {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly batch: StatementBatch,
    private readonly settlement: Settlement,
  ) {}

  async intercept(notification: VerifiedNotification, arrival: Arrival): Promise<DeliveryOutcome> {
    const paying = isPayment(notification) && notification.malformed === undefined;
    const outcome = paying ? await this.pay(notification, arrival) : undefined;
    return outcome ?? this.transactions.run(() => this.settlement.apply(notification, arrival));
  }

  /** PAID or DUPLICATE, committed; undefined once rolled back, for `apply` to decide. */
  private async pay(payment: PaymentNotification, arrival: Arrival): Promise<DeliveryOutcome | undefined> {
    const { statements, paid } = this.settlement.paymentBatch(payment, arrival);
    const transaction = await this.batch.begin();
    try {
      if (!paid(await transaction.run(statements))) {
        await transaction.rollBack();
        return undefined;
      }
      await transaction.commit();
      return DeliveryOutcome.Paid;
    } catch (error) {
      // The claim is the batch's first statement: a duplicate leaves nothing done, as in `apply`.
      if (this.settlement.isDuplicateClaim(error)) {
        await transaction.commit();
        return DeliveryOutcome.Duplicate;
      }
      await transaction.rollBack();
      // A deadlock, or a Galera certification conflict at COMMIT: rolled back, and run again below.
      if (isRetryableLockConflict(error)) return undefined;
      throw error;
    }
  }
}
