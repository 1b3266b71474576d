import { Injectable } from '@nestjs/common';
import { PaymentNotification } from '../../domain/notification';

const CAPACITY = 200_000;

/**
 * Idempotency keys of payments known to be committed, filled only after a commit (or after the
 * database answered "duplicate"). A hit lets a repeated delivery skip the write transaction; a
 * miss, or a key evicted, simply falls through to the database, so correctness never depends on
 * this memory. Each replica keeps its own; nothing here is shared or authoritative.
 */
@Injectable()
export class CommittedPaymentsCache {
  private readonly keys = new Set<string>();

  static keyOf(payment: PaymentNotification): string {
    return `${payment.channel}:${payment.transactionId}`;
  }

  has(payment: PaymentNotification): boolean {
    return this.keys.has(CommittedPaymentsCache.keyOf(payment));
  }

  remember(payment: PaymentNotification): void {
    const key = CommittedPaymentsCache.keyOf(payment);
    if (this.keys.has(key)) return;
    this.keys.add(key);
    // A Set iterates in insertion order: dropping the first entry evicts the oldest key.
    if (this.keys.size > CAPACITY) this.keys.delete(this.keys.values().next().value!);
  }
}
