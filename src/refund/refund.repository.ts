import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { ReportingDatabase } from '../platform/database/reporting-database';
import { isDuplicateKey, WriteResult } from '../platform/database/sql';
import { scrapeQuery } from '../platform/database/scrape-query';
import {
  IN_FLIGHT_REFUND_STATUSES,
  OPEN_REFUND_STATUSES,
  Refund,
  REFUNDED_STATUSES,
  RefundStatus,
  UnconfirmedSend,
} from './refund.entity';

export type NewRefund = Omit<
  Refund,
  | 'id'
  | 'status'
  | 'channelRefundId'
  | 'attempts'
  | 'acceptedAt'
  | 'lastError'
  | 'sendTimes'
  | 'unconfirmedSend'
  | 'reviewedBy'
  | 'reviewedAt'
  | 'updatedAt'
  | 'completedAt'
>;

/** Refunds the channel may still ask about: in flight, or ABNORMAL until the channel's last word. */
const QUERIED_STATUSES: readonly RefundStatus[] = [...OPEN_REFUND_STATUSES, RefundStatus.Abnormal];

/** send_times holds epoch milliseconds (13 digits) and commas: room for one more while at most this long. */
const SEND_TIMES_ROOM = 255 - 14;

/** What the refunds of one transaction add up to. */
export interface RefundTotals {
  /** What is back with the payer: SUCCEEDED, and RESOLVED_OFFLINE by an operator. */
  refunded: number;
  /** Refunds whose money may still go back (AWAITING_APPROVAL, PENDING, PROCESSING). */
  open: number;
  abnormal: number;
}

@Injectable()
export class RefundRepository {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly reporting: ReportingDatabase,
  ) {}

  private get repo() {
    return this.txHost.tx.getRepository(Refund);
  }

  /** Inserts the refund (PENDING or AWAITING_APPROVAL); false when its refund number exists already (the unique key decides). */
  async insertIfAbsent(refund: NewRefund, status: RefundStatus): Promise<boolean> {
    try {
      await this.repo.insert({ ...refund, status, attempts: 0, updatedAt: refund.createdAt });
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

  /** Read only under the payment's lock (see RefundSettlement), or the answer is already stale. */
  async totals(channel: string, transactionId: string): Promise<RefundTotals> {
    const rows: Array<{ status: RefundStatus; total: string; n: string }> = await this.txHost.tx.query(
      `SELECT status, SUM(amount) AS total, COUNT(*) AS n FROM refund
       WHERE channel = ? AND transaction_id = ? GROUP BY status`,
      [channel, transactionId],
    );
    const of = (status: RefundStatus) => rows.find((r) => r.status === status);
    return {
      refunded: REFUNDED_STATUSES.reduce((sum, status) => sum + Number(of(status)?.total ?? 0), 0),
      open: IN_FLIGHT_REFUND_STATUSES.reduce((n, status) => n + Number(of(status)?.n ?? 0), 0),
      abnormal: Number(of(RefundStatus.Abnormal)?.n ?? 0),
    };
  }

  /**
   * Refunds whose next channel call is due: PENDING ones to send (again), PROCESSING and ABNORMAL
   * ones to ask about, in case their notification does not come.
   */
  async due(now: Date, limit: number): Promise<Array<Pick<Refund, 'refundNo' | 'status'>>> {
    const rows: Array<{ refund_no: string; status: RefundStatus }> = await this.txHost.tx.query(
      `SELECT refund_no, status FROM refund WHERE status IN (?) AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?`,
      [QUERIED_STATUSES, now, limit],
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
    const now = new Date();
    await this.txHost.tx.query(
      `UPDATE refund SET status = ?, channel_refund_id = COALESCE(?, channel_refund_id), next_attempt_at = ?,
         accepted_at = ?, last_error = NULL, unconfirmed_send = NULL, updated_at = ?
       WHERE id = ? AND status = ?`,
      [RefundStatus.Processing, channelRefundId ?? null, queryAt, now, now, id, RefundStatus.Pending],
    );
  }

  /** AWAITING_APPROVAL → PENDING, due at `now`, without a reviewer: the refund's total stays under the threshold. */
  async releaseForSending(refundNo: string, now: Date): Promise<void> {
    await this.txHost.tx.query(`UPDATE refund SET status = ?, next_attempt_at = ? WHERE refund_no = ? AND status = ?`, [
      RefundStatus.Pending,
      now,
      refundNo,
      RefundStatus.AwaitingApproval,
    ]);
  }

  /**
   * Compare-and-set AWAITING_APPROVAL → PENDING, due now, by an admin other than the requester:
   * true for the one approval that counts, however many arrive at once.
   */
  async approve(refundNo: string, operatorId: string): Promise<boolean> {
    const now = new Date();
    const result: WriteResult = await this.txHost.tx.query(
      `UPDATE refund SET status = ?, next_attempt_at = ?, reviewed_by = ?, reviewed_at = ?, updated_at = ?
       WHERE refund_no = ? AND status = ? AND requested_by <> ?`,
      [RefundStatus.Pending, now, operatorId, now, now, refundNo, RefundStatus.AwaitingApproval, operatorId],
    );
    return result.affectedRows === 1;
  }

  async markReviewed(refundNo: string, operatorId: string): Promise<void> {
    const now = new Date();
    await this.txHost.tx.query(`UPDATE refund SET reviewed_by = ?, reviewed_at = ? WHERE refund_no = ?`, [
      operatorId,
      now,
      refundNo,
    ]);
  }

  /**
   * Back to PENDING, due now, so that the refund is sent again under the same refund number: the
   * channel said, long enough after accepting it, that it has no such refund.
   */
  async markForResend(id: string, note: string): Promise<boolean> {
    const now = new Date();
    const result: WriteResult = await this.txHost.tx.query(
      `UPDATE refund SET status = ?, next_attempt_at = ?, last_error = ?, updated_at = ? WHERE id = ? AND status = ?`,
      [RefundStatus.Pending, now, note.slice(0, 500), now, id, RefundStatus.Processing],
    );
    return result.affectedRows === 1;
  }

  /**
   * Records, BEFORE the request goes out, that the PENDING refund is being sent at `sentAt`, and that
   * until a definite answer comes its outcome is unknown: a crash or a lost answer leaves the refund
   * to be asked about, never simply sent again. False when the refund has been sent as often as
   * send_times can tell (a person must look), or is no longer PENDING.
   */
  async recordSend(id: string, sentAt: Date): Promise<boolean> {
    const result: WriteResult = await this.txHost.tx.query(
      `UPDATE refund SET send_times = CONCAT_WS(',', send_times, ?), unconfirmed_send = ?, updated_at = ?
       WHERE id = ? AND status = ? AND (send_times IS NULL OR CHAR_LENGTH(send_times) <= ?)`,
      [String(sentAt.getTime()), UnconfirmedSend.NoAnswer, sentAt, id, RefundStatus.Pending, SEND_TIMES_ROOM],
    );
    return result.affectedRows === 1;
  }

  /** The channel refused a re-send: that says nothing about the earlier requests, so it is asked before anything else. */
  async markResendRefused(id: string, nextAttemptAt: Date, note: string): Promise<void> {
    await this.txHost.tx.query(
      `UPDATE refund SET unconfirmed_send = ?, next_attempt_at = ?, last_error = ?, updated_at = ? WHERE id = ? AND status = ?`,
      [UnconfirmedSend.Refused, nextAttemptAt, note.slice(0, 500), new Date(), id, RefundStatus.Pending],
    );
  }

  async deferAttempt(id: string, status: RefundStatus, nextAttemptAt: Date, note: string | null): Promise<void> {
    await this.txHost.tx.query(
      `UPDATE refund SET next_attempt_at = ?, last_error = ?, updated_at = ? WHERE id = ? AND status = ?`,
      [nextAttemptAt, note?.slice(0, 500) ?? null, new Date(), id, status],
    );
  }

  /**
   * Compare-and-set from one of `from` to the channel's word: true for the one caller that moved the
   * refund. ABNORMAL keeps its query schedule (the channel may still settle it); the others are final.
   */
  async settle(
    refundNo: string,
    status: RefundStatus,
    from: readonly RefundStatus[],
    channelRefundId: string | undefined,
    detail: string | undefined,
  ): Promise<boolean> {
    const now = new Date();
    const final = status !== RefundStatus.Abnormal;
    // A refund that succeeded has no error left to show; another verdict keeps the last one unless it says why.
    const clearsError = status === RefundStatus.Succeeded;
    const result: WriteResult = await this.txHost.tx.query(
      `UPDATE refund SET status = ?, channel_refund_id = COALESCE(?, channel_refund_id),
         last_error = IF(?, NULL, COALESCE(?, last_error)), next_attempt_at = ${final ? 'NULL' : 'next_attempt_at'},
         unconfirmed_send = NULL, completed_at = ?, updated_at = ?
       WHERE refund_no = ? AND status IN (?)`,
      [
        status,
        channelRefundId ?? null,
        clearsError,
        detail?.slice(0, 500) ?? null,
        final ? now : null,
        now,
        refundNo,
        from,
      ],
    );
    return result.affectedRows === 1;
  }

  /**
   * Refunds that do not settle by themselves, by channel and status: ABNORMAL ones, and those still
   * PENDING or PROCESSING although created before `openSince`. Bounded as a scrape's query.
   */
  async countUnsettled(openSince: Date): Promise<Array<{ channel: string; status: RefundStatus; n: number }>> {
    const rows = await scrapeQuery<{ channel: string; status: RefundStatus; n: string }>(
      this.reporting,
      `SELECT channel, status, COUNT(*) AS n FROM refund
       WHERE status = ? OR (status IN (?) AND created_at < ?)
       GROUP BY channel, status`,
      [RefundStatus.Abnormal, OPEN_REFUND_STATUSES, openSince],
    );
    return rows.map((r) => ({ channel: r.channel, status: r.status, n: Number(r.n) }));
  }
}
