import { Injectable, Logger } from '@nestjs/common';
import { RefundNotice, RefundNoticeStatus } from '../domain/notification';
import { AnomalyStatus } from '../anomaly/anomaly.entity';
import { AnomalyRepository } from '../anomaly/anomaly.repository';
import { OutboxWriter } from '../events/outbox.writer';
import { refundSucceeded } from '../events/payment-events';
import { CallbackRecordRepository } from '../idempotency/callback-record.repository';
import { OrderEvent, OrderStatus } from '../order/order-status';
import { PaymentOrderRepository } from '../order/payment-order.repository';
import { Refund, RefundPurpose, RefundStatus } from './refund.entity';
import { RefundRepository, RefundTotals } from './refund.repository';

export type FinalRefundStatus =
  typeof RefundStatus.Succeeded | typeof RefundStatus.Closed | typeof RefundStatus.Abnormal;

/**
 * Applies a refund's final word from the channel (its API answer or its notification), in the
 * caller's transaction and exactly once: the refund's compare-and-set lets one caller through, and
 * only that one moves the money bookkeeping, the order or the anomaly, and publishes the event.
 * Rows are locked in the order refund → payment → order → anomaly everywhere, so refunds of one
 * order never deadlock one another.
 */
export type RefundNoticeOutcome = `REFUND_${RefundNoticeStatus}` | 'UNKNOWN_REFUND' | 'DUPLICATE';

@Injectable()
export class RefundSettlement {
  private readonly logger = new Logger(RefundSettlement.name);

  constructor(
    private readonly refunds: RefundRepository,
    private readonly payments: CallbackRecordRepository,
    private readonly orders: PaymentOrderRepository,
    private readonly anomalies: AnomalyRepository,
    private readonly outbox: OutboxWriter,
  ) {}

  /**
   * A refund notification: settles the refund it names, once. UNKNOWN_REFUND for a refund this
   * service did not make (one made in the merchant console, say): acked, kept in the delivery log.
   */
  async applyNotice(channel: string, notice: RefundNotice, transactionId?: string): Promise<RefundNoticeOutcome> {
    const refund = await this.refunds.findByRefundNo(notice.refundNo);
    if (!refund || refund.channel !== channel || (transactionId && refund.transactionId !== transactionId)) {
      this.logger.warn(`${channel} notified refund ${notice.refundNo}, which this service did not request`);
      return 'UNKNOWN_REFUND';
    }
    const settled = await this.settle(
      notice.refundNo,
      notice.status,
      notice.channelRefundId,
      `notified ${notice.status}`,
    );
    return settled ? `REFUND_${notice.status}` : 'DUPLICATE';
  }

  /** The settled refund, or undefined when it was unknown or already final (a repeat). */
  async settle(
    refundNo: string,
    status: FinalRefundStatus,
    channelRefundId?: string,
    detail?: string,
  ): Promise<Refund | undefined> {
    if (!(await this.refunds.finish(refundNo, status, channelRefundId, detail))) return undefined;
    const refund = (await this.refunds.findByRefundNo(refundNo))!;
    if (status === RefundStatus.Closed) {
      await this.payments.releaseRefund(refund.channel, refund.transactionId, refund.amount);
    }
    const totals = await this.refunds.totals(refund.channel, refund.transactionId);
    if (refund.purpose === RefundPurpose.OrderRefund) await this.settleOrder(refund, totals);
    else await this.settleAnomaly(refund, totals);
    if (status === RefundStatus.Succeeded) await this.outbox.append(refundSucceeded(refund));
    return refund;
  }

  private async settleOrder(refund: Refund, totals: RefundTotals): Promise<void> {
    const order = await this.orders.findForUpdate(refund.orderNo);
    // A refund still in flight, or one stuck ABNORMAL, keeps the order REFUNDING: money is still on its way.
    if (order?.status !== OrderStatus.Refunding || totals.open > 0 || totals.abnormal > 0) return;
    const event =
      totals.succeeded >= order.amount
        ? OrderEvent.SettleFullRefund
        : totals.succeeded > 0
          ? OrderEvent.SettlePartialRefund
          : OrderEvent.SettleNoRefund;
    await this.orders.moveIf(order.orderNo, event, OrderStatus.Refunding, refund.refundNo);
  }

  private async settleAnomaly(refund: Refund, totals: RefundTotals): Promise<void> {
    const anomaly = await this.anomalies.findByTransaction(refund.channel, refund.transactionId);
    if (!anomaly || totals.open > 0 || totals.abnormal > 0) return;
    const resolved = totals.succeeded >= anomaly.paidAmount;
    await this.anomalies.moveIf(
      anomaly.id,
      [AnomalyStatus.Refunding],
      resolved ? AnomalyStatus.Resolved : AnomalyStatus.Open,
    );
  }
}
