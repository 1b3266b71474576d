import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { isDuplicateKey, WriteResult } from '../database/sql';
import { OPEN_REFUND_STATUSES, Refund, RefundStatus } from './refund.entity';

export type NewRefund = Omit<
  Refund,
  'id' | 'status' | 'channelRefundId' | 'attempts' | 'lastError' | 'updatedAt' | 'completedAt'
>;

/** What the refunds of one transaction add up to. */
export interface RefundTotals {
  succeeded: number;
  /** Refunds the channel may still move (PENDING, PROCESSING). */
  open: number;
  abnormal: number;
}

@Injectable()
export class RefundRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  private get repo() {
    return this.txHost.tx.getRepository(Refund);
  }

  /** Inserts the refund as PENDING; false when its refund number exists already (the unique key decides). */
  async insertIfAbsent(refund: NewRefund): Promise<boolean> {
    try {
      await this.repo.insert({ ...refund, status: RefundStatus.Pending, attempts: 0, updatedAt: refund.createdAt });
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }

  async findByRefundNo(refundNo: string): Promise<Refund | null> {
    return this.repo.findOneBy({ refundNo });
  }

  async listForOrder(orderNo: string): Promise<Refund[]> {
    return this.repo.find({ where: { orderNo }, order: { id: 'ASC' } });
  }

  async totals(channel: string, transactionId: string): Promise<RefundTotals> {
    const rows: Array<{ status: RefundStatus; total: string; n: string }> = await this.txHost.tx.query(
      `SELECT status, SUM(amount) AS total, COUNT(*) AS n FROM refund
       WHERE channel = ? AND transaction_id = ? GROUP BY status`,
      [channel, transactionId],
    );
    const of = (status: RefundStatus) => rows.find((r) => r.status === status);
    return {
      succeeded: Number(of(RefundStatus.Succeeded)?.total ?? 0),
      open: OPEN_REFUND_STATUSES.reduce((n, status) => n + Number(of(status)?.n ?? 0), 0),
      abnormal: Number(of(RefundStatus.Abnormal)?.n ?? 0),
    };
  }

  /**
   * Refunds whose next channel call is due: PENDING ones to send (again), PROCESSING ones to ask
   * about, in case their notification does not come.
   */
  async due(now: Date, limit: number): Promise<Array<Pick<Refund, 'refundNo' | 'status'>>> {
    const rows: Array<{ refund_no: string; status: RefundStatus }> = await this.txHost.tx.query(
      `SELECT refund_no, status FROM refund WHERE status IN (?) AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?`,
      [OPEN_REFUND_STATUSES, now, limit],
    );
    return rows.map((r) => ({ refundNo: r.refund_no, status: r.status }));
  }

  /**
   * Takes the right to call the channel about the refund now, by compare-and-set on its status and
   * due time: exactly one caller on any replica wins, and holds it until `leaseUntil` (when a
   * crashed attempt is retried).
   */
  async claimAttempt(refundNo: string, status: RefundStatus, now: Date, leaseUntil: Date): Promise<boolean> {
    const result: WriteResult = await this.txHost.tx.query(
      `UPDATE refund SET attempts = attempts + 1, next_attempt_at = ?, updated_at = ?
       WHERE refund_no = ? AND status = ? AND next_attempt_at <= ?`,
      [leaseUntil, now, refundNo, status, now],
    );
    return result.affectedRows === 1;
  }

  /** The channel accepted the refund; its result comes by notification, or is asked for at `queryAt`. */
  async markAccepted(id: string, channelRefundId: string | undefined, queryAt: Date): Promise<void> {
    await this.txHost.tx.query(
      `UPDATE refund SET status = ?, channel_refund_id = COALESCE(?, channel_refund_id), next_attempt_at = ?,
         last_error = NULL, updated_at = ?
       WHERE id = ? AND status = ?`,
      [RefundStatus.Processing, channelRefundId ?? null, queryAt, new Date(), id, RefundStatus.Pending],
    );
  }

  async deferAttempt(id: string, status: RefundStatus, nextAttemptAt: Date, note: string | null): Promise<void> {
    await this.txHost.tx.query(
      `UPDATE refund SET next_attempt_at = ?, last_error = ?, updated_at = ? WHERE id = ? AND status = ?`,
      [nextAttemptAt, note?.slice(0, 500) ?? null, new Date(), id, status],
    );
  }

  /** Compare-and-set to a final status: true for the one caller that settled the refund. */
  async finish(
    refundNo: string,
    status: RefundStatus,
    channelRefundId: string | undefined,
    detail: string | undefined,
  ): Promise<boolean> {
    const now = new Date();
    const result: WriteResult = await this.txHost.tx.query(
      `UPDATE refund SET status = ?, channel_refund_id = COALESCE(?, channel_refund_id),
         last_error = COALESCE(?, last_error), next_attempt_at = NULL, completed_at = ?, updated_at = ?
       WHERE refund_no = ? AND status IN (?)`,
      [status, channelRefundId ?? null, detail?.slice(0, 500) ?? null, now, now, refundNo, OPEN_REFUND_STATUSES],
    );
    return result.affectedRows === 1;
  }
}
