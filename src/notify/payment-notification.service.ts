import { Injectable } from '@nestjs/common';
import { AnomalyRepository } from '../anomaly/anomaly.repository';
import { classifyRejectedPayment } from '../anomaly/classify-rejected-payment';
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

/**
 * verify → claim → transition → outbox → ack; refund notifications settle their refund once. Runs inside the transaction TransactionInterceptor
 * opened, so every write here commits together or not at all.
 */
@Injectable()
export class PaymentNotificationService {
  constructor(
    private readonly callbacks: CallbackRecordRepository,
    private readonly orders: PaymentOrderRepository,
    private readonly anomalies: AnomalyRepository,
    private readonly outbox: OutboxWriter,
    private readonly refunds: RefundSettlement,
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
    if (!(await this.callbacks.claimPayment(payment, new Date()))) return DeliveryOutcome.Duplicate;
    if (await this.orders.markPaidIfWaiting(payment)) {
      await this.outbox.append(paymentSucceeded(payment));
      return DeliveryOutcome.Paid;
    }
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
}
