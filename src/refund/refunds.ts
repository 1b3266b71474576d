import { Injectable } from '@nestjs/common';
import { Propagation, Transactional } from '@nestjs-cls/transactional';
import { TransactionRunner } from '../platform/transaction/transaction.runner';
import { EmergencyRefundRequest, EmergencyRefundService } from './emergency-refund.service';
import { Refund, RefundStatus } from './refund.entity';
import { RefundApproval } from './refund-approval';
import { RefundExecutor } from './refund-executor';
import { RefundSettlement } from './refund-settlement';

/** Who the refunds of the order service (POST /payment-orders/:orderNo/refunds) are requested by. */
export const ORDER_SERVICE = 'order-service';

/** The order service's refund of what paid an order: its own refund number, an amount, a reason. */
export type ShopRefundRequest = Pick<EmergencyRefundRequest, 'amount' | 'reason'> & { refundNo: string };

/** What a caller writes in the same transaction as the refund's change (the admin API's audit row). */
export type InTheSameTransaction<T> = (result: T) => Promise<void>;

/**
 * The one use case for a refund, whichever way it comes (the admin API and the console behind
 * it, the order service's refund API, a test, a script): each method opens ONE transaction of its own, commits it,
 * and only then starts the channel call of a refund that may go (RefundExecutor, whose retry
 * worker covers whatever that start misses). It refuses to run inside a caller's transaction
 * (Propagation.Never): the channel must never be asked to refund what could still roll back.
 */
@Injectable()
export class Refunds {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly emergency: EmergencyRefundService,
    private readonly approval: RefundApproval,
    private readonly settlement: RefundSettlement,
    private readonly executor: RefundExecutor,
  ) {}

  /** Records an emergency refund (idempotent on its refund number) and sends it unless it awaits approval. */
  @Transactional(Propagation.Never)
  async request(
    request: EmergencyRefundRequest,
    operatorId: string,
    alongside?: InTheSameTransaction<{ refund: Refund; created: boolean }>,
  ): Promise<{ refund: Refund; created: boolean }> {
    const answer = await this.commit(() => this.emergency.record(request, operatorId), alongside);
    this.startIfPending(answer.refund);
    return answer;
  }

  /**
   * The order service's refund of the transaction that paid `orderNo` (idempotent on its refund
   * number). Four eyes apply only with SHOP_REFUNDS_NEED_APPROVAL.
   */
  @Transactional(Propagation.Never)
  async requestFromShop(orderNo: string, request: ShopRefundRequest): Promise<{ refund: Refund; created: boolean }> {
    const answer = await this.commit(async () => {
      const transactionId = await this.emergency.payingTransactionOf(orderNo);
      return this.emergency.record({ ...request, orderNo, transactionId, fromShop: true }, ORDER_SERVICE);
    });
    this.startIfPending(answer.refund);
    return answer;
  }

  /** A second admin lets a refund awaiting approval go to the channel. */
  @Transactional(Propagation.Never)
  async approve(refundNo: string, operatorId: string, alongside?: InTheSameTransaction<Refund>): Promise<Refund> {
    const refund = await this.commit(() => this.approval.approve(refundNo, operatorId), alongside);
    this.startIfPending(refund);
    return refund;
  }

  /** Cancels a refund awaiting approval before any channel call; its amount is free again. */
  @Transactional(Propagation.Never)
  reject(
    refundNo: string,
    operatorId: string,
    reason: string,
    alongside?: InTheSameTransaction<Refund>,
  ): Promise<Refund> {
    return this.commit(() => this.approval.reject(refundNo, operatorId, reason), alongside);
  }

  /** The money of an ABNORMAL refund went back outside the channel: settles it as refunded. */
  @Transactional(Propagation.Never)
  resolveOffline(refundNo: string, reason: string, alongside?: InTheSameTransaction<Refund>): Promise<Refund> {
    return this.commit(() => this.settlement.resolveOffline(refundNo, reason), alongside);
  }

  private commit<T>(change: () => Promise<T>, alongside?: InTheSameTransaction<T>): Promise<T> {
    return this.transactions.run(async () => {
      const result = await change();
      await alongside?.(result);
      return result;
    });
  }

  private startIfPending(refund: Refund): void {
    if (refund.status === RefundStatus.Pending) this.executor.start(refund.refundNo);
  }
}
