import { Injectable } from '@nestjs/common';
import { Propagation, Transactional } from '@nestjs-cls/transactional';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter } from 'prom-client';
import { AnomalyRepository } from '../payments/anomaly/anomaly.repository';
import { classifyRejectedPayment } from '../payments/anomaly/classify-rejected-payment';
import { UnknownOrderError } from '../domain/domain-error';
import { CallbackRecordRepository } from '../payments/idempotency/callback-record.repository';
import { CommittedPayments } from '../payments/idempotency/committed-payments';
import { DeliveryLog } from '../payments/idempotency/delivery-log';
import { NOTIFICATIONS_TOTAL } from '../platform/metrics/metrics.module';
import { TransactionRunner } from '../platform/transaction/transaction.runner';
import { NotificationOutcomeLog } from './notification-outcome.log';
import { PayOutcome, PayProcedure } from './pay-procedure.repository';
import { SPOOL_REPLAYED } from './settlement-metrics';
import { PaymentOrderRepository } from '../order/payment-order.repository';
import { isPayment, PaymentNotification, VerifiedNotification } from '../domain/notification';
import { AnomalyType } from '../payments/anomaly/anomaly.entity';
import { RefundNoticeOutcome, RefundSettlement } from '../refund/refund-settlement';

export const DeliveryOutcome = {
  Paid: 'PAID',
  Duplicate: 'DUPLICATE',
  NotPaying: 'NOT_PAYING',
  ...AnomalyType,
} as const;
export type DeliveryOutcome = (typeof DeliveryOutcome)[keyof typeof DeliveryOutcome] | RefundNoticeOutcome;

/**
 * How a verified notification reached the service. A platform's delivery (at the route, or replayed
 * from the spool) goes into the delivery log with its bytes; a trade query's answer is no delivery.
 * `answerBy` bounds the wait for the delivery log (the route's answer time); unset, the log's own
 * query timeout bounds it.
 */
export interface Arrival {
  source: 'ROUTE' | 'SPOOL' | 'QUERY';
  receivedAt: Date;
  /** The request's correlation id (X-Request-Id), for the outcome line of a delivery on the route. */
  requestId?: string;
  answerBy?: number;
}

/** Claimed, but the order did not move to PAID: the anomaly path decides why. */
const OrderNotMoved = Symbol('order not moved');

/**
 * The one use case for a verified notification, whichever way it arrived (the notify route, the
 * spool replay, the active trade query, reconciliation's recovery through the trade query), and the
 * one way to run a payment's transaction: `settle`, in ONE TransactionRunner transaction.
 * - Inside it (`apply`): for a payment the payment procedure (pay_v1: claim → compare-and-set →
 *   history → outbox → the paying delivery's record, committed inside, in the one round trip that
 *   also begins the transaction); for an order that did not move, its anomaly in the same
 *   transaction, still holding the claim; a refund notice settles its refund once.
 * - After the commit, once (`afterCommit`): mark the payment committed for the fast path, write the
 *   delivery log for every other outcome, count the outcome and log its line.
 */
@Injectable()
export class Settlement {
  private readonly outcomeLog = new NotificationOutcomeLog();

  constructor(
    private readonly callbacks: CallbackRecordRepository,
    private readonly orders: PaymentOrderRepository,
    private readonly anomalies: AnomalyRepository,
    private readonly refunds: RefundSettlement,
    private readonly payProcedure: PayProcedure,
    private readonly transactions: TransactionRunner,
    private readonly committed: CommittedPayments,
    private readonly deliveries: DeliveryLog,
    @InjectMetric(NOTIFICATIONS_TOTAL) private readonly answered: Counter<string>,
    @InjectMetric(SPOOL_REPLAYED) private readonly replayed: Counter<string>,
  ) {}

  /**
   * Applies and commits in ONE transaction (run again after a lock conflict or a Galera certification
   * failure, TransactionRunner), then the after-commit steps. Resolves only once committed.
   */
  async settle(notification: VerifiedNotification, arrival: Arrival): Promise<DeliveryOutcome> {
    const outcome = await this.transactions.run(() => this.apply(notification, arrival));
    await this.afterCommit(notification, outcome, arrival);
    return outcome;
  }

  /** The business effect; every write here commits together with the caller's transaction or not at all. */
  @Transactional(Propagation.Mandatory)
  private async apply(notification: VerifiedNotification, arrival: Arrival): Promise<DeliveryOutcome> {
    if (notification.malformed !== undefined) {
      await this.anomalies.recordMalformed(notification);
      return DeliveryOutcome.MalformedNotification;
    }
    if (isPayment(notification)) return this.applyPayment(notification, arrival);
    if (notification.refund) {
      return this.refunds.applyNotice(notification.channel, notification.refund, notification.transactionId);
    }
    // A notification that pays nothing must not take the payment's dedup key.
    return DeliveryOutcome.NotPaying;
  }

  /** Once the transaction has committed: every outcome of a payment means its dedup record is in. */
  private async afterCommit(
    notification: VerifiedNotification,
    outcome: DeliveryOutcome,
    arrival: Arrival,
  ): Promise<void> {
    if (isPayment(notification)) await this.committed.markCommitted(notification);
    await this.recordDelivery(notification, outcome, arrival);
  }

  /** A repeat the fast path answered without a transaction: nothing to mark, the rest as after a commit. */
  async afterKnownRepeat(notification: PaymentNotification, arrival: Arrival): Promise<DeliveryOutcome> {
    await this.recordDelivery(notification, DeliveryOutcome.Duplicate, arrival);
    return DeliveryOutcome.Duplicate;
  }

  /** Counts an outcome and logs its line, for one that is not a commit's (SPOOLED, PARKED). */
  count(notification: VerifiedNotification, outcome: string, arrival: Pick<Arrival, 'source' | 'requestId'>): void {
    const { channel } = notification;
    if (arrival.source === 'ROUTE') this.answered.inc({ channel, outcome, reason: '' });
    else if (arrival.source === 'SPOOL') this.replayed.inc({ channel, outcome });
    this.outcomeLog.committed(notification, outcome, arrival.requestId);
  }

  private async recordDelivery(
    notification: VerifiedNotification,
    outcome: DeliveryOutcome,
    arrival: Arrival,
  ): Promise<void> {
    if (isDelivery(arrival) && !recordedInTransaction(outcome)) {
      await this.deliveries.record(notification, outcome, arrival.receivedAt, arrival.answerBy);
    }
    this.count(notification, outcome, arrival);
  }

  private async applyPayment(payment: PaymentNotification, arrival: Arrival): Promise<DeliveryOutcome> {
    const claimed = await this.claimAndPay(payment, arrival);
    if (claimed !== OrderNotMoved) return claimed;
    const order = await this.orders.findForUpdate(payment.outTradeNo);
    if (!order) {
      // Rolls the claim back with everything else: the platform retries, perhaps after the order exists.
      throw new UnknownOrderError(payment.outTradeNo, payment.transactionId);
    }
    const anomaly = classifyRejectedPayment(order, payment);
    await this.anomalies.record(anomaly, order, payment);
    return anomaly;
  }

  /**
   * The payment procedure (pay_v1) in the caller's transaction: PAID (committed by the procedure),
   * DUPLICATE (claimed before: nothing written), or OrderNotMoved (the claim is in the transaction,
   * still open, for the anomaly path).
   */
  private async claimAndPay(
    payment: PaymentNotification,
    arrival: Arrival,
  ): Promise<DeliveryOutcome | typeof OrderNotMoved> {
    try {
      const paying = isDelivery(arrival) ? { receivedAt: arrival.receivedAt } : undefined;
      const outcome = await this.payProcedure.call(payment, paying);
      return outcome === PayOutcome.Paid ? DeliveryOutcome.Paid : OrderNotMoved;
    } catch (error) {
      if (this.callbacks.isDuplicateClaim(error)) return DeliveryOutcome.Duplicate;
      throw error;
    }
  }
}

/** A platform's delivery (at the route or from the spool) is recorded; a trade query's answer is none. */
function isDelivery(arrival: Arrival): boolean {
  return arrival.source !== 'QUERY';
}

/** A delivery that paid was recorded in the payment's transaction (claimAndPay); every other after it. */
function recordedInTransaction(outcome: DeliveryOutcome): boolean {
  return outcome === DeliveryOutcome.Paid;
}
