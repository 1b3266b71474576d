import { Injectable } from '@nestjs/common';
import { PaymentNotification } from '../domain/notification';
import { CommittedPayments } from '../payments/idempotency/committed-payments';

/**
 * The step before any transaction: a repeat of a payment known to have committed (on this replica,
 * or with REDIS_URL on any) is answered without one. Two thirds of all deliveries are such repeats.
 * A repeat arriving while its first delivery is in flight here, or on another replica, waits for
 * it instead of queueing on the database's lock; everything CommittedPayments does not know goes
 * on to the transaction, and the database alone decides.
 */
@Injectable()
export class CommittedRepeatFastPath {
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(private readonly committed: CommittedPayments) {}

  /**
   * `knownRepeat` when the payment is known committed; otherwise `commit` (which must mark it
   * committed once its transaction has), as the only one in flight for this payment here.
   */
  async skipTransactionIfCommitted<T>(
    payment: PaymentNotification,
    commit: () => Promise<T>,
    knownRepeat: () => Promise<T>,
  ): Promise<T> {
    const key = CommittedPayments.keyOf(payment);
    await this.inFlight.get(key)?.catch(() => undefined);
    if (await this.committed.isCommitted(payment)) return knownRepeat();
    // Another delivery of it got ahead here while Redis answered: wait for that one instead.
    if (this.inFlight.has(key)) return this.skipTransactionIfCommitted(payment, commit, knownRepeat);
    const first = this.commitFirst(payment, commit, knownRepeat);
    this.inFlight.set(key, first);
    try {
      return await first;
    } finally {
      if (this.inFlight.get(key) === first) this.inFlight.delete(key);
    }
  }

  private async commitFirst<T>(
    payment: PaymentNotification,
    commit: () => Promise<T>,
    knownRepeat: () => Promise<T>,
  ): Promise<T> {
    const claim = await this.committed.claimFirst(payment);
    if (claim.heldElsewhere && (await this.committed.waitForFirst(payment))) return knownRepeat();
    try {
      return await commit();
    } finally {
      await claim.release();
    }
  }
}
