import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { from, Observable, tap } from 'rxjs';
import { CommittedPaymentsCache } from '../idempotency/committed-payments.cache';
import { DuplicateDeliveryRecorder } from '../idempotency/duplicate-delivery.recorder';
import { isPayment, VerifiedNotification } from '../signature/verified-notification';
import { DeliveryOutcome } from './payment-notification.service';

/**
 * Two thirds of all deliveries repeat a payment that has long committed. When this instance
 * already saw that payment commit, the delivery is recorded in a group write and answered without
 * a transaction of its own; otherwise it takes the full path (TransactionInterceptor, inside this
 * one), and once that has committed, the payment's key is remembered.
 */
@Injectable()
export class DuplicateShortcutInterceptor implements NestInterceptor {
  constructor(
    private readonly committed: CommittedPaymentsCache,
    private readonly recorder: DuplicateDeliveryRecorder,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler<DeliveryOutcome>): Observable<DeliveryOutcome> {
    const notification = context.switchToHttp().getRequest<{ notification: VerifiedNotification }>().notification;
    if (!isPayment(notification)) return next.handle();
    if (this.committed.has(notification)) {
      return from(this.recorder.record(notification).then(() => DeliveryOutcome.Duplicate));
    }
    // Every outcome of a payment (paid, duplicate, anomaly) means its dedup record has committed.
    return next.handle().pipe(tap(() => this.committed.remember(notification)));
  }
}
