import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { from, lastValueFrom, Observable } from 'rxjs';
import { CommittedPayments } from '../idempotency/committed-payments';
import { DeliveryLog } from '../idempotency/delivery-log';
import { isPayment, PaymentNotification, VerifiedNotification } from '../domain/notification';
import { DeliveryOutcome } from './payment-notification.service';

/**
 * Sits between AckInterceptor and TransactionInterceptor. Every delivery is written to the
 * delivery log after its transaction committed and before it is acked. Two thirds of all
 * deliveries repeat a payment that this instance (or, with REDIS_URL, any replica) has already seen
 * commit: those skip the transaction altogether. A repeat arriving while its first delivery is
 * still in flight here, or on another replica, waits for it instead of queueing on the database's
 * lock; everything CommittedPayments does not know falls through to the database, which alone decides.
 */
@Injectable()
export class DeliveryRecordingInterceptor implements NestInterceptor {
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(
    private readonly committed: CommittedPayments,
    private readonly deliveries: DeliveryLog,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler<DeliveryOutcome>): Observable<DeliveryOutcome> {
    const notification = context.switchToHttp().getRequest<{ notification: VerifiedNotification }>().notification;
    const receivedAt = new Date();
    return from(this.handle(notification, receivedAt, () => lastValueFrom(next.handle())));
  }

  private async handle(
    notification: VerifiedNotification,
    receivedAt: Date,
    apply: () => Promise<DeliveryOutcome>,
  ): Promise<DeliveryOutcome> {
    if (!isPayment(notification)) return this.record(notification, await apply(), receivedAt);
    const key = CommittedPayments.keyOf(notification);
    await this.inFlight.get(key)?.catch(() => undefined);
    if (await this.committed.isCommitted(notification))
      return this.record(notification, DeliveryOutcome.Duplicate, receivedAt);
    // Another delivery of it got ahead here while Redis answered: wait for that one instead.
    if (this.inFlight.has(key)) return this.handle(notification, receivedAt, apply);

    const applied = this.applyPayment(notification, apply);
    this.inFlight.set(key, applied);
    try {
      return this.record(notification, await applied, receivedAt);
    } finally {
      if (this.inFlight.get(key) === applied) this.inFlight.delete(key);
    }
  }

  private async applyPayment(
    payment: PaymentNotification,
    apply: () => Promise<DeliveryOutcome>,
  ): Promise<DeliveryOutcome> {
    const claim = await this.committed.claimFirst(payment);
    if (claim.heldElsewhere && (await this.committed.waitForFirst(payment))) return DeliveryOutcome.Duplicate;
    try {
      const outcome = await apply();
      // Every outcome of a payment (paid, duplicate, anomaly) means its dedup record has committed.
      await this.committed.markCommitted(payment);
      return outcome;
    } finally {
      await claim.release();
    }
  }

  private async record(
    notification: VerifiedNotification,
    outcome: DeliveryOutcome,
    receivedAt: Date,
  ): Promise<DeliveryOutcome> {
    await this.deliveries.record(notification, outcome, receivedAt);
    return outcome;
  }
}
