import { Injectable, Logger } from '@nestjs/common';
import { Propagation, Transactional } from '@nestjs-cls/transactional';
import { RefundNotice, RefundNoticeStatus } from '../domain/notification';
import { AnomalyStatus } from '../payments/anomaly/anomaly.entity';
import { AnomalyRepository } from '../payments/anomaly/anomaly.repository';
import { DomainError } from '../domain/domain-error';
import { OutboxRepository } from '../events/outbox.repository';
import { refundClosed, refundSucceeded } from '../events/payment-events';
import { CallbackRecordRepository } from '../payments/idempotency/callback-record.repository';
import { OrderEvent, OrderStatus } from '../order/order-status';
import { PaymentOrderRepository } from '../order/payment-order.repository';
import { Refund, RefundPurpose, RefundStatus } from './refund.entity';
import { RefundRepository, RefundTotals } from './refund.repository';
import { RefundAnomalyRepository } from './refund-anomaly.repository';

/** What can settle a refund: the channel's word (API answer, query or notification), or an operator's. */
export type RefundVerdict =
  | typeof RefundStatus.Succeeded
  | typeof RefundStatus.Closed
  | typeof RefundStatus.Abnormal
  | typeof RefundStatus.ResolvedOffline
  | typeof RefundStatus.Rejected;

/**
 * From which statuses each verdict moves a refund. ABNORMAL is not final: the channel's later
 * SUCCESS or CLOSED still settles it (after a person acted in the merchant platform), or an
 * operator resolves it offline.
 */
const SETTLES_FROM: Record<RefundVerdict, readonly RefundStatus[]> = {
  [RefundStatus.Succeeded]: [RefundStatus.Pending, RefundStatus.Processing, RefundStatus.Abnormal],
  [RefundStatus.Closed]: [RefundStatus.Pending, RefundStatus.Processing, RefundStatus.Abnormal],
  [RefundStatus.Abnormal]: [RefundStatus.Pending, RefundStatus.Processing],
  [RefundStatus.ResolvedOffline]: [RefundStatus.Abnormal],
  [RefundStatus.Rejected]: [RefundStatus.AwaitingApproval],
};

/** Verdicts after which no money moved: the amount the refund reserved is free again. */
const RELEASES: readonly RefundStatus[] = [RefundStatus.Closed, RefundStatus.Rejected];

export type RefundNoticeOutcome = `REFUND_${RefundNoticeStatus}` | 'UNKNOWN_REFUND' | 'DUPLICATE';

/**
 * Applies a refund's verdict in the caller's transaction and exactly once: the refund's
 * compare-and-set lets one caller through, and only that one moves the money bookkeeping, the
 * order or the anomaly, and publishes the event. Rows are locked in the order refund → payment →
 * order → anomaly everywhere, and the refunds' totals are read only under the payment's lock:
 * two refunds of one payment settling at once are serialized there, and the later one sees the
 * earlier one's result.
 */
@Injectable()
export class RefundSettlement {
  private readonly logger = new Logger(RefundSettlement.name);

  constructor(
    private readonly refunds: RefundRepository,
    private readonly payments: CallbackRecordRepository,
    private readonly orders: PaymentOrderRepository,
    private readonly anomalies: AnomalyRepository,
    private readonly outbox: OutboxRepository,
    private readonly refundAnomalies: RefundAnomalyRepository,
  ) {}

  /**
   * A refund notification: settles the refund it names, once. UNKNOWN_REFUND for a refund this
   * service did not make (one made in the merchant console, say): acked, kept in the delivery log.
   */
  @Transactional(Propagation.Mandatory)
  async applyNotice(channel: string, notice: RefundNotice, transactionId?: string): Promise<RefundNoticeOutcome> {
    const refund = await this.refunds.findByRefundNo(notice.refundNo);
    const otherAmount = notice.amount !== undefined && notice.amount !== refund?.amount;
    if (
      !refund ||
      refund.channel !== channel ||
      (transactionId && refund.transactionId !== transactionId) ||
      otherAmount
    ) {
      this.logger.warn(`${channel} notified refund ${notice.refundNo}, which this service did not request`);
      return 'UNKNOWN_REFUND';
    }
    const why = notice.status === RefundStatus.Succeeded ? undefined : `notified ${notice.status}`;
    const settled = await this.settle(notice.refundNo, notice.status, notice.channelRefundId, why);
    if (!settled && refund.status === RefundStatus.ResolvedOffline && notice.status === RefundStatus.Succeeded) {
      this.logger.error(`${channel} refunded ${notice.refundNo}, which an operator had resolved offline: paid twice`);
    }
    return settled ? `REFUND_${notice.status}` : 'DUPLICATE';
  }

  /** An operator gave the money of an ABNORMAL refund back outside the channel. */
  @Transactional(Propagation.Mandatory)
  async resolveOffline(refundNo: string, reason: string): Promise<Refund> {
    const settled = await this.settle(refundNo, RefundStatus.ResolvedOffline, undefined, `resolved offline: ${reason}`);
    if (settled) return settled;
    throw await this.notIn(refundNo, RefundStatus.Abnormal, 'resolved offline');
  }

  /** Why an operator's action on a refund did not apply: unknown (404), or in another status (409). */
  async notIn(refundNo: string, expected: RefundStatus, action: string): Promise<DomainError> {
    const refund = await this.refunds.findByRefundNo(refundNo);
    if (!refund) return new DomainError('RefundNotFound', `refund ${refundNo.slice(0, 64)} not found`);
    return new DomainError(
      'RefundConflict',
      `refund ${refundNo} is ${refund.status}; only a refund that is ${expected} can be ${action}`,
    );
  }

  /** An admin rejected a refund that awaited approval: it is cancelled before any channel call. */
  @Transactional(Propagation.Mandatory)
  async reject(refundNo: string, operatorId: string, reason: string): Promise<Refund> {
    const rejected = await this.settle(refundNo, RefundStatus.Rejected, undefined, `rejected: ${reason}`);
    if (!rejected) throw await this.notIn(refundNo, RefundStatus.AwaitingApproval, 'rejected');
    await this.refunds.markReviewed(refundNo, operatorId);
    return (await this.refunds.findByRefundNo(refundNo))!;
  }

  /** The settled refund, or undefined when it was unknown or its status does not take this verdict (a repeat). */
  @Transactional(Propagation.Mandatory)
  async settle(
    refundNo: string,
    status: RefundVerdict,
    channelRefundId?: string,
    detail?: string,
  ): Promise<Refund | undefined> {
    if (await this.refunds.settle(refundNo, status, SETTLES_FROM[status], channelRefundId, detail)) {
      return this.afterSettling(refundNo, status);
    }
    return status === RefundStatus.Succeeded ? this.settleLateSuccess(refundNo, channelRefundId) : undefined;
  }

  private async afterSettling(refundNo: string, status: RefundVerdict): Promise<Refund> {
    const refund = (await this.refunds.findByRefundNo(refundNo))!;
    await this.payments.lockPayment(refund.channel, refund.transactionId);
    if (RELEASES.includes(status)) {
      await this.payments.releaseRefund(refund.channel, refund.transactionId, refund.amount);
    }
    const totals = await this.refunds.totals(refund.channel, refund.transactionId);
    if (refund.purpose === RefundPurpose.OrderRefund) await this.settleOrder(refund, totals);
    else await this.settleAnomaly(refund, totals);
    if (status === RefundStatus.Succeeded || status === RefundStatus.ResolvedOffline) {
      await this.outbox.append(refundSucceeded(refund));
    } else if (status === RefundStatus.Closed || status === RefundStatus.Rejected) {
      await this.outbox.append(refundClosed(refund));
    }
    return refund;
  }

  /**
   * The channel says the money of a refund recorded CLOSED or REJECTED left: its word wins. The
   * refund becomes SUCCEEDED (compare-and-set from the status it was in, so that status is known),
   * its amount is reserved again, and a refund anomaly with the figures is opened for a person.
   */
  private async settleLateSuccess(refundNo: string, channelRefundId?: string): Promise<Refund | undefined> {
    for (const wasStatus of RELEASES) {
      if (await this.refunds.settle(refundNo, RefundStatus.Succeeded, [wasStatus], channelRefundId, undefined)) {
        return this.afterLateSuccess(refundNo, wasStatus);
      }
    }
    return undefined;
  }

  private async afterLateSuccess(refundNo: string, wasStatus: RefundStatus): Promise<Refund> {
    const refund = (await this.refunds.findByRefundNo(refundNo))!;
    const { channel, transactionId, amount, transactionAmount: paidAmount } = refund;
    await this.payments.lockPayment(channel, transactionId);
    await this.payments.reserveRefundAgain(channel, transactionId, amount);
    const totals = await this.refunds.totals(channel, transactionId);
    const { orderNo, currency } = refund;
    await this.refundAnomalies.record({
      ...{ refundNo, channel, transactionId, orderNo, wasStatus, amount, paidAmount, currency },
      refundedAmount: totals.refunded,
    });
    const twice =
      totals.refunded > paidAmount ? `; money left twice: ${totals.refunded} refunded of ${paidAmount}` : '';
    this.logger.error(`${channel} refunded ${amount} of ${refundNo} after it was recorded ${wasStatus}${twice}`);
    if (refund.purpose === RefundPurpose.OrderRefund) await this.settleOrderAfterLateSuccess(refund, totals);
    else await this.settleAnomaly(refund, totals, [AnomalyStatus.Open, AnomalyStatus.Refunding]);
    await this.outbox.append(refundSucceeded(refund));
    return refund;
  }

  /** An order that no refund holds REFUNDING any more goes through REFUNDING again, to what its refunds now add up to. */
  private async settleOrderAfterLateSuccess(refund: Refund, totals: RefundTotals): Promise<void> {
    const order = await this.orders.findForUpdate(refund.orderNo);
    if (!order || totals.open > 0 || totals.abnormal > 0) return;
    if (order.status === OrderStatus.Paid || order.status === OrderStatus.PartiallyRefunded) {
      await this.orders.moveIf(order.orderNo, OrderEvent.RequestRefund, order.status, refund.refundNo);
    }
    await this.settleOrder(refund, totals);
  }

  private async settleOrder(refund: Refund, totals: RefundTotals): Promise<void> {
    const order = await this.orders.findForUpdate(refund.orderNo);
    // A refund still in flight, or one stuck ABNORMAL, keeps the order REFUNDING: money is still on its way.
    if (order?.status !== OrderStatus.Refunding || totals.open > 0 || totals.abnormal > 0) return;
    const event =
      totals.refunded >= order.amount
        ? OrderEvent.SettleFullRefund
        : totals.refunded > 0
          ? OrderEvent.SettlePartialRefund
          : OrderEvent.SettleNoRefund;
    await this.orders.moveIf(order.orderNo, event, OrderStatus.Refunding, refund.refundNo);
  }

  private async settleAnomaly(
    refund: Refund,
    totals: RefundTotals,
    from: readonly AnomalyStatus[] = [AnomalyStatus.Refunding],
  ): Promise<void> {
    if (totals.open > 0 || totals.abnormal > 0) return;
    const anomaly = await this.anomalies.findByTransaction(refund.channel, refund.transactionId);
    if (!anomaly) return;
    const resolved = totals.refunded >= anomaly.paidAmount;
    await this.anomalies.moveIf(anomaly.id, from, resolved ? AnomalyStatus.Resolved : AnomalyStatus.Open);
  }
}
