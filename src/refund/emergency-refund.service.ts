import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { Propagation, Transactional } from '@nestjs-cls/transactional';
import { AnomalyType } from '../payments/anomaly/anomaly.entity';
import { AnomalyRepository } from '../payments/anomaly/anomaly.repository';
import { DomainError } from '../domain/domain-error';
import { fourEyesConfig } from '../operators/four-eyes.config';
import { CallbackRecordRepository } from '../payments/idempotency/callback-record.repository';
import { PaymentCallback } from '../payments/idempotency/payment-callback.entity';
import { OrderEvent, OrderStatus } from '../order/order-status';
import { PaymentOrderRepository } from '../order/payment-order.repository';
import { Refund, RefundPurpose, RefundStatus } from './refund.entity';
import { RefundRepository } from './refund.repository';
import { RefundExecutor } from './refund-executor';

export interface EmergencyRefundRequest {
  orderNo: string;
  transactionId: string;
  /** Minor units; what is left of the transaction (what it paid less what its refunds reserved) when absent. */
  amount?: number;
  reason: string;
  /**
   * The caller's own refund number. When absent it is derived from the request (channel,
   * transaction, purpose, amount) and how many refunds of that request were rejected or closed
   * (deriveRefundNo): the same request while its refund stands is the same refund, and it can be
   * asked again once that refund was rejected or closed.
   */
  refundNo?: string;
  /** The order service's own refund (not an operator's): four eyes apply only with SHOP_REFUNDS_NEED_APPROVAL. */
  fromShop?: boolean;
}

/**
 * Records an emergency refund of one transaction, in the caller's transaction: the refund row
 * under its unique refund number first (a repeat finds it and changes nothing), then the amount
 * taken from what the payment has left by a conditional UPDATE, then the order or the anomaly
 * moved to REFUNDING. The channel is called only after this commits (Refunds, the use case that
 * opens the transaction), and only once another admin approved it when the payment's refunds, this
 * one included, add up to REFUND_APPROVAL_THRESHOLD or more.
 */
@Injectable()
export class EmergencyRefundService {
  constructor(
    private readonly payments: CallbackRecordRepository,
    private readonly orders: PaymentOrderRepository,
    private readonly anomalies: AnomalyRepository,
    private readonly refunds: RefundRepository,
    private readonly executor: RefundExecutor,
    @Inject(fourEyesConfig.KEY) private readonly fourEyes: ConfigType<typeof fourEyesConfig>,
  ) {}

  @Transactional(Propagation.Mandatory)
  async record(request: EmergencyRefundRequest, operatorId: string): Promise<{ refund: Refund; created: boolean }> {
    const payment = await this.findPayment(request);
    const unavailable = this.executor.channel(payment.channel)?.apiUnavailableReason(payment.merchantId ?? undefined);
    if (unavailable) {
      throw new DomainError('RefundChannelUnavailable', `${payment.channel} refunds are unavailable: ${unavailable}`);
    }
    const purpose = await this.purposeOf(payment);
    const refundNo = request.refundNo ?? (await this.derivedRefundNo(payment, purpose, request.amount));
    // Without an amount, what is left: read without a lock, the reservation below still refuses more than is left.
    const amount = request.amount ?? payment.amount - payment.refundReservedAmount;
    const now = new Date();
    // Recorded as awaiting approval until the payment's refund total, read under its lock, says otherwise.
    const created =
      amount > 0 &&
      (await this.refunds.insertIfAbsent(
        {
          refundNo,
          channel: payment.channel,
          transactionId: payment.transactionId,
          orderNo: payment.orderNo,
          purpose,
          amount,
          transactionAmount: payment.amount,
          currency: payment.currency,
          reason: request.reason,
          requestedBy: operatorId,
          nextAttemptAt: null,
          createdAt: now,
        },
        RefundStatus.AwaitingApproval,
      ));
    if (!created) {
      const existing = await this.refunds.findByRefundNo(refundNo);
      if (!existing) throw overRefund(payment, amount);
      return { refund: sameRequestOrConflict(existing, payment, request.amount), created: false };
    }

    const refundTotal = await this.reserve(payment, amount);
    if (!this.needsApproval(refundTotal, request)) await this.refunds.releaseForSending(refundNo, now);
    if (purpose === RefundPurpose.OrderRefund) await this.markOrderRefunding(payment.orderNo, refundNo);
    else await this.markAnomalyRefunding(payment);
    const refund = (await this.refunds.findByRefundNo(refundNo))!;
    return { refund, created: true };
  }

  /** The transaction that paid an order: what the order service's refund of it gives back. */
  @Transactional(Propagation.Mandatory)
  async payingTransactionOf(orderNo: string): Promise<string> {
    const order = await this.orders.find(orderNo);
    if (!order) throw new DomainError('OrderNotFound', `order ${orderNo} not found`);
    if (!order.transactionId) {
      throw new DomainError('OrderConflict', `order ${orderNo} is ${order.status}: no payment of it to refund`);
    }
    return order.transactionId;
  }

  private async findPayment({ orderNo, transactionId }: EmergencyRefundRequest): Promise<PaymentCallback> {
    const payments = await this.payments.findPayments(orderNo, transactionId);
    if (payments.length === 0) {
      throw new DomainError('PaymentNotFound', `no payment with transactionId ${transactionId} for order ${orderNo}`);
    }
    if (payments.length > 1) {
      throw new DomainError('RefundConflict', `transactionId ${transactionId} is ambiguous: two channels used it`);
    }
    return payments[0];
  }

  /** The transaction that paid the order is an order refund; any other payment is an anomaly's. */
  private async purposeOf(payment: PaymentCallback): Promise<Refund['purpose']> {
    const order = await this.orders.find(payment.orderNo);
    if (order?.channel === payment.channel && order.transactionId === payment.transactionId) {
      return RefundPurpose.OrderRefund;
    }
    const anomaly = await this.anomalies.findByTransaction(payment.channel, payment.transactionId);
    // A malformed notification's anomaly took no payment: there is nothing here to refund.
    if (!anomaly || anomaly.type === AnomalyType.MalformedNotification) {
      throw new DomainError(
        'RefundConflict',
        `payment ${payment.transactionId} neither paid order ${payment.orderNo} nor is an anomaly's: there is nothing of it to refund`,
      );
    }
    return anomaly.type;
  }

  /**
   * Takes `amount` from what the payment has left, and answers what its refunds add up to now (this
   * one, the others awaiting approval or in flight, and those done), read under the payment's lock
   * that the reservation took: concurrent requests each see the ones before them.
   */
  private async reserve(payment: PaymentCallback, amount: number): Promise<number> {
    if (await this.payments.reserveRefund(payment.channel, payment.transactionId, amount)) {
      return this.payments.lockedRefundReserved(payment.channel, payment.transactionId);
    }
    const [current] = await this.payments.findPayments(payment.orderNo, payment.transactionId);
    throw overRefund(current, amount);
  }

  /**
   * The first number of the request's sequence that is free or names a refund still standing
   * (awaiting approval, in flight, ABNORMAL or done): a repeat finds that refund; a request asked
   * again after its refund was rejected or closed gets the next number. Concurrent requests walk
   * the same sequence, and the refund number's unique key lets one of them insert each number.
   */
  private async derivedRefundNo(
    payment: PaymentCallback,
    purpose: string,
    amount: number | undefined,
  ): Promise<string> {
    for (let attempt = 0; attempt < MAX_DERIVED_ATTEMPTS; attempt++) {
      const refundNo = deriveRefundNo(payment, purpose, amount, attempt);
      const existing = await this.refunds.findByRefundNo(refundNo);
      if (!existing || !ASKED_AGAIN_AFTER.includes(existing.status)) return refundNo;
    }
    throw new DomainError(
      'RefundConflict',
      `this refund was rejected or closed ${MAX_DERIVED_ATTEMPTS} times: give a refundNo to ask for it again`,
    );
  }

  /** Four eyes on the payment's refund total, not on the piece: splitting a refund does not escape them. */
  private needsApproval(refundTotal: number, { fromShop }: EmergencyRefundRequest): boolean {
    if (fromShop && !this.fourEyes.shopRefundsNeedApproval) return false;
    return this.fourEyes.approvalThreshold !== undefined && refundTotal >= this.fourEyes.approvalThreshold;
  }

  private async markOrderRefunding(orderNo: string, refundNo: string): Promise<void> {
    const order = (await this.orders.findForUpdate(orderNo))!;
    if (order.status === OrderStatus.Refunding) return;
    if (!(await this.orders.moveIf(orderNo, OrderEvent.RequestRefund, order.status, refundNo))) {
      throw new DomainError('OrderConflict', `order ${orderNo} is ${order.status} and cannot be refunded`);
    }
  }

  private async markAnomalyRefunding(payment: PaymentCallback): Promise<void> {
    const anomaly = (await this.anomalies.findByTransaction(payment.channel, payment.transactionId))!;
    await this.anomalies.moveToRefunding(anomaly.id);
  }
}

/** Final statuses in which no money moved: the same request may ask for the refund again, under the next number. */
const ASKED_AGAIN_AFTER: readonly RefundStatus[] = [RefundStatus.Rejected, RefundStatus.Closed];
/** How often one request may be rejected or closed and asked again under a derived number. */
const MAX_DERIVED_ATTEMPTS = 100;

/**
 * The refund number of a request without one: the same (channel, transaction, purpose, amount,
 * attempt) always gives the same number, so a repeated or concurrent request can only find the
 * first refund. `amount` is the request's (undefined: what is left); `attempt` counts that
 * request's refunds rejected or closed before. 34 characters, within every channel's 64.
 */
export function deriveRefundNo(
  payment: Pick<PaymentCallback, 'channel' | 'transactionId'>,
  purpose: string,
  amount: number | undefined,
  attempt: number,
): string {
  // JSON keeps the parts apart: a transaction id may itself contain any separator.
  const identity = JSON.stringify([payment.channel, payment.transactionId, purpose, amount ?? 'REST', attempt]);
  const digest = createHash('sha256').update(identity).digest('hex');
  return `ER${digest.slice(0, 32).toUpperCase()}`;
}

/**
 * The existing refund when the request is the same (the same transaction and amount; without an
 * amount, any amount); otherwise a conflict that says only that the number is taken: the refund
 * under it may be another order's, and its transaction and amount are not the caller's to read.
 */
function sameRequestOrConflict(existing: Refund, payment: PaymentCallback, amount: number | undefined): Refund {
  if (
    existing.channel === payment.channel &&
    existing.transactionId === payment.transactionId &&
    (amount === undefined || existing.amount === amount)
  ) {
    return existing;
  }
  throw new DomainError(
    'RefundConflict',
    `refund number ${existing.refundNo} is taken by another refund; give a new refundNo for this one`,
  );
}

function overRefund(
  payment: Pick<PaymentCallback, 'transactionId' | 'amount' | 'refundReservedAmount'>,
  amount: number,
): DomainError {
  return new DomainError(
    'OverRefund',
    `refunding ${amount > 0 ? amount : 'what is left'} would exceed what transaction ${payment.transactionId} paid (${payment.amount}) ` +
      `minus what is refunded or being refunded already (${payment.refundReservedAmount}); ` +
      `at most ${payment.amount - payment.refundReservedAmount} can still be refunded`,
  );
}
