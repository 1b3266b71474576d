import { Injectable } from '@nestjs/common';
import { AnomalyRepository } from '../anomaly/anomaly.repository';
import { classifyRejectedPayment } from '../anomaly/classify-rejected-payment';
import { changedOneRow } from '../database/sql';
import { StatementBatch } from '../database/statement-batch';
import { DomainError } from '../domain/domain-error';
import { OutboxWriter } from '../events/outbox.writer';
import { paymentSucceeded } from '../events/payment-events';
import { CallbackRecordRepository } from '../idempotency/callback-record.repository';
import { PaymentOrderRepository } from '../order/payment-order.repository';
import { isPayment, PaymentNotification, VerifiedNotification } from '../domain/notification';
import { AnomalyType } from '../anomaly/anomaly.entity';
import { RefundNoticeOutcome, RefundSettlement } from '../refund/refund-settlement';

export const DeliveryOutcome = {
  Paid: 'PAID',
  Duplicate: 'DUPLICATE',
  NotPaying: 'NOT_PAYING',
  ...AnomalyType,
} as const;
export type DeliveryOutcome = (typeof DeliveryOutcome)[keyof typeof DeliveryOutcome] | RefundNoticeOutcome;

/** Claimed, but the order did not move to PAID: the anomaly path decides why. */
const OrderNotMoved = Symbol('order not moved');

/**
 * A verified notification's effect: claim → transition → outbox for a payment; a refund notification
 * settles its refund once. Runs inside the one transaction its caller opened (NotificationInterceptor
 * for the notify route, TransactionRunner for the query worker and the spool), so every write here
 * commits together or not at all.
 */
@Injectable()
export class PaymentNotificationService {
  constructor(
    private readonly callbacks: CallbackRecordRepository,
    private readonly orders: PaymentOrderRepository,
    private readonly anomalies: AnomalyRepository,
    private readonly outbox: OutboxWriter,
    private readonly refunds: RefundSettlement,
    private readonly batch: StatementBatch,
  ) {}

  async apply(notification: VerifiedNotification): Promise<DeliveryOutcome> {
    if (isPayment(notification)) return this.applyPayment(notification);
    if (notification.refund) {
      return this.refunds.applyNotice(notification.channel, notification.refund, notification.transactionId);
    }
    // A notification that pays nothing must not take the payment's dedup key.
    return DeliveryOutcome.NotPaying;
  }

  private async applyPayment(payment: PaymentNotification): Promise<DeliveryOutcome> {
    const claimed = await this.claimAndPay(payment);
    if (claimed !== OrderNotMoved) return claimed;
    const order = await this.orders.findForUpdate(payment.outTradeNo);
    if (!order) {
      // Rolls the claim back with everything else: the platform retries, perhaps after the order exists.
      throw new DomainError(
        'OrderNotFound',
        `order ${payment.outTradeNo} is not registered; the platform should retry`,
      );
    }
    const anomaly = classifyRejectedPayment(order);
    await this.anomalies.record(anomaly, order, payment);
    return anomaly;
  }

  /**
   * claim → compare-and-set → history → outbox in ONE round trip. The server stops at the first
   * statement that fails: a duplicate claim leaves nothing else done. The history and outbox rows
   * are each written only if the statement before them changed one row, i.e. only if the order moved.
   */
  private async claimAndPay(payment: PaymentNotification): Promise<DeliveryOutcome | typeof OrderNotMoved> {
    const pay = this.orders.markPaidIfWaitingStatements(payment);
    try {
      const [, compareAndSet] = await this.batch.run([
        this.callbacks.claimPaymentStatement(payment, new Date()),
        pay.compareAndSet,
        pay.history,
        this.outbox.appendIfPreviousChangedOneRow(paymentSucceeded(payment)),
      ]);
      return changedOneRow(compareAndSet) ? DeliveryOutcome.Paid : OrderNotMoved;
    } catch (error) {
      if (this.callbacks.isDuplicateClaim(error)) return DeliveryOutcome.Duplicate;
      throw error;
    }
  }
}
