import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { Propagation, Transactional, TransactionHost } from '@nestjs-cls/transactional';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ReportingDatabase } from '../platform/database/reporting-database';
import { WriteResult } from '../platform/database/sql';
import { BillLine, MalformedBillLine } from '../domain/bill';
import { scrapeQuery } from '../platform/database/scrape-query';
import { ItemOutcome } from './reconciliation-item.entity';
import { ReconciliationRun, RunStatus } from './reconciliation-run.entity';
import { RefundStatus } from '../refund/refund.entity';

/** A run this instance holds: only its token may renew or finish it. */
export interface RunClaim {
  runId: string;
  token: string;
  channel: string;
  merchantId: string;
  /** The sub-merchant of a service provider's account whose bill it is; '' for the account's own bill. */
  subMerchantId: string;
  billDate: string;
}

/** Where a run's local records are looked for: the channel, one account, and a time window. */
export interface LocalScope {
  runId: string;
  channel: string;
  merchantId: string;
  /** '' for the account's own records; a sub-merchant's only otherwise. */
  subMerchantId: string;
  /** Records without an account (kept before accounts were) belong to the only account there is. */
  includeUnattributed: boolean;
  from: Date;
  to: Date;
}

/** A local payment or refund the bill does not have. */
export interface LocalRecord {
  kind: 'PAYMENT' | 'REFUND';
  transactionId: string;
  orderNo: string;
  refundNo: string | null;
  amount: number;
  at: Date;
}

/** The counts of an account's latest completed run. */
export interface LatestCounts {
  channel: string;
  merchantId: string;
  subMerchantId: string;
  counts: Record<string, number>;
}

export interface NewItem {
  outcome: ItemOutcome;
  kind: 'PAYMENT' | 'REFUND' | 'LINE';
  transactionId?: string | null;
  orderNo?: string | null;
  refundNo?: string | null;
  channelAmount?: number | null;
  localAmount?: number | null;
  billLine?: number | null;
  resolution?: string | null;
  detail?: string | null;
}

/** The lease of a RUNNING run: another instance may take it over once it has expired. */
export const LEASE_MS = 10 * 60 * 1000;
const ITEM_BATCH = 1000;

/** Runs, their items and the bill lines of a run being compared; every comparison is one set-based statement. */
@Injectable()
export class ReconciliationRepository {
  constructor(
    private readonly db: DataSource,
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly reporting: ReportingDatabase,
  ) {}

  /** The day's run, created once (the unique key decides across replicas); an existing one is left as it is. */
  async ensureRun(channel: string, merchantId: string, billDate: string, now: Date, subMerchantId = ''): Promise<void> {
    await this.db.query(
      `INSERT INTO reconciliation_run (channel, merchant_id, sub_merchant_id, bill_date, status, attempts, bill_lines, created_at)
       VALUES (?, ?, ?, ?, 'PENDING', 0, 0, ?) ON DUPLICATE KEY UPDATE id = id`,
      [channel, merchantId, subMerchantId, billDate, now],
    );
  }

  /**
   * Takes the run by compare-and-set: one instance wins, whatever the number of replicas. A
   * scheduled claim takes only runs that are due (never a COMPLETED one); a manual one any run
   * that is not RUNNING under a live lease.
   */
  @Transactional(Propagation.Mandatory)
  async claim(
    channel: string,
    merchantId: string,
    billDate: string,
    now: Date,
    mode: 'SCHEDULED' | 'MANUAL',
    subMerchantId = '',
  ): Promise<RunClaim | undefined> {
    const token = randomUUID();
    const due =
      mode === 'MANUAL'
        ? `(status <> 'RUNNING' OR lease_until < ?)`
        : `((status IN ('PENDING', 'NOT_READY', 'FAILED') AND (next_attempt_at IS NULL OR next_attempt_at <= ?))
            OR (status = 'RUNNING' AND lease_until < ?))`;
    const result: WriteResult = await this.txHost.tx.query(
      `UPDATE reconciliation_run
       SET status = 'RUNNING', claim_token = ?, lease_until = ?, attempts = attempts + 1, started_at = ?,
           finished_at = NULL, next_attempt_at = NULL, detail = NULL
       WHERE channel = ? AND merchant_id = ? AND sub_merchant_id = ? AND bill_date = ? AND ${due}`,
      [
        token,
        new Date(now.getTime() + LEASE_MS),
        now,
        channel,
        merchantId,
        subMerchantId,
        billDate,
        now,
        ...(mode === 'MANUAL' ? [] : [now]),
      ],
    );
    if (result.affectedRows !== 1) return undefined;
    const [run]: Array<{ id: string }> = await this.txHost.tx.query(
      `SELECT id FROM reconciliation_run WHERE channel = ? AND merchant_id = ? AND sub_merchant_id = ? AND bill_date = ?`,
      [channel, merchantId, subMerchantId, billDate],
    );
    return { runId: String(run.id), token, channel, merchantId, subMerchantId, billDate };
  }

  /** Extends the lease; false when the run is no longer ours (it expired and was taken over). */
  async renew(claim: RunClaim): Promise<boolean> {
    const result: WriteResult = await this.db.query(
      `UPDATE reconciliation_run SET lease_until = ? WHERE id = ? AND claim_token = ? AND status = 'RUNNING'`,
      [new Date(Date.now() + LEASE_MS), claim.runId, claim.token],
    );
    return result.affectedRows === 1;
  }

  /** A re-run starts from nothing: the previous items and any lines a dead run left. */
  async clear(runId: string): Promise<void> {
    await this.db.query(`DELETE FROM reconciliation_item WHERE run_id = ?`, [runId]);
    await this.db.query(`DELETE FROM reconciliation_bill_line WHERE run_id = ?`, [runId]);
  }

  /** The run's staged lines, unless another instance has taken the run over (its lines, then). */
  async dropLines(claim: RunClaim): Promise<void> {
    await this.db.query(
      `DELETE FROM reconciliation_bill_line
       WHERE run_id = ? AND NOT EXISTS (SELECT 1 FROM reconciliation_run r
                                        WHERE r.id = ? AND r.status = 'RUNNING' AND r.claim_token <> ?)`,
      [claim.runId, claim.runId, claim.token],
    );
  }

  async insertLines(runId: string, lines: BillLine[]): Promise<void> {
    if (lines.length === 0) return;
    await this.db.query(
      `INSERT INTO reconciliation_bill_line (run_id, line, kind, transaction_id, order_no, refund_no, amount, occurred_at)
       VALUES ${lines.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
      lines.flatMap((l) => [runId, l.line, l.kind, l.transactionId, l.orderNo, l.refundNo ?? null, l.amount, l.at]),
    );
  }

  /** In statements of ITEM_BATCH rows: a bad day may have many, and a statement has at most 65,535 placeholders. */
  async insertItems(runId: string, items: NewItem[]): Promise<void> {
    for (let i = 0; i < items.length; i += ITEM_BATCH)
      await this.insertItemBatch(runId, items.slice(i, i + ITEM_BATCH));
  }

  private async insertItemBatch(runId: string, items: NewItem[]): Promise<void> {
    if (items.length === 0) return;
    const now = new Date();
    await this.db.query(
      `INSERT INTO reconciliation_item (run_id, outcome, kind, transaction_id, order_no, refund_no, channel_amount,
         local_amount, bill_line, resolution, detail, created_at)
       VALUES ${items.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
      items.flatMap((i) => [
        runId,
        i.outcome,
        i.kind,
        i.transactionId ?? null,
        i.orderNo ?? null,
        i.refundNo ?? null,
        i.channelAmount ?? null,
        i.localAmount ?? null,
        i.billLine ?? null,
        i.resolution ?? null,
        i.detail?.slice(0, 500) ?? null,
        now,
      ]),
    );
  }

  malformedItem(line: MalformedBillLine): NewItem {
    return { outcome: ItemOutcome.Malformed, kind: 'LINE', billLine: line.line, detail: line.detail };
  }

  /** Bill payments and refunds that agree with ours: counted, not listed. */
  async countMatched(runId: string, channel: string): Promise<number> {
    const [row]: Array<{ n: string }> = await this.db.query(
      `SELECT
         (SELECT COUNT(*) FROM reconciliation_bill_line l
            JOIN payment_callback c ON c.channel = ? AND c.transaction_id = l.transaction_id
           WHERE l.run_id = ? AND l.kind = 'PAYMENT' AND c.amount = l.amount)
       + (SELECT COUNT(*) FROM reconciliation_bill_line l
            JOIN refund r ON r.refund_no = l.refund_no AND r.channel = ?
           WHERE l.run_id = ? AND l.kind = 'REFUND' AND r.amount = l.amount) AS n`,
      [channel, runId, channel, runId],
    );
    return Number(row.n);
  }

  /** AMOUNT_DIFFERS (payments and refunds) and REFUND_MISSING_LOCAL, written straight from the joins. */
  async insertAmountAndRefundDifferences(runId: string, channel: string): Promise<void> {
    const now = new Date();
    await this.db.query(
      `INSERT INTO reconciliation_item (run_id, outcome, kind, transaction_id, order_no, refund_no, channel_amount,
         local_amount, bill_line, created_at)
       SELECT l.run_id, 'AMOUNT_DIFFERS', 'PAYMENT', l.transaction_id, l.order_no, NULL, l.amount, c.amount, l.line, ?
       FROM reconciliation_bill_line l
       JOIN payment_callback c ON c.channel = ? AND c.transaction_id = l.transaction_id
       WHERE l.run_id = ? AND l.kind = 'PAYMENT' AND c.amount <> l.amount`,
      [now, channel, runId],
    );
    await this.db.query(
      `INSERT INTO reconciliation_item (run_id, outcome, kind, transaction_id, order_no, refund_no, channel_amount,
         local_amount, bill_line, created_at)
       SELECT l.run_id, IF(r.id IS NULL, 'REFUND_MISSING_LOCAL', 'AMOUNT_DIFFERS'), 'REFUND', l.transaction_id,
              l.order_no, l.refund_no, l.amount, r.amount, l.line, ?
       FROM reconciliation_bill_line l
       LEFT JOIN refund r ON r.refund_no = l.refund_no AND r.channel = ?
       WHERE l.run_id = ? AND l.kind = 'REFUND' AND (r.id IS NULL OR r.amount <> l.amount)`,
      [now, channel, runId],
    );
  }

  /**
   * Refunds the bill shows made (same number, same amount) that are recorded CLOSED or REJECTED here:
   * the channel's word that their money left, which settles them.
   */
  async refundsMadeButRecordedClosed(runId: string, channel: string): Promise<string[]> {
    const rows: Array<{ refund_no: string }> = await this.db.query(
      `SELECT DISTINCT l.refund_no FROM reconciliation_bill_line l
       JOIN refund r ON r.refund_no = l.refund_no AND r.channel = ?
       WHERE l.run_id = ? AND l.kind = 'REFUND' AND r.amount = l.amount AND r.status IN (?)`,
      [channel, runId, [RefundStatus.Closed, RefundStatus.Rejected]],
    );
    return rows.map((r) => r.refund_no);
  }

  /** Bill payments we have no record of, a page at a time (by line number). */
  async missingLocally(runId: string, channel: string, afterLine: number, limit: number): Promise<BillLine[]> {
    const rows: Array<Record<string, string>> = await this.db.query(
      `SELECT l.line, l.transaction_id, l.order_no, l.amount, l.occurred_at
       FROM reconciliation_bill_line l
       LEFT JOIN payment_callback c ON c.channel = ? AND c.transaction_id = l.transaction_id
       WHERE l.run_id = ? AND l.kind = 'PAYMENT' AND c.id IS NULL AND l.line > ?
       ORDER BY l.line LIMIT ?`,
      [channel, runId, afterLine, limit],
    );
    return rows.map((r) => ({
      kind: 'PAYMENT',
      line: Number(r.line),
      transactionId: r.transaction_id,
      orderNo: r.order_no,
      amount: Number(r.amount),
      at: new Date(r.occurred_at),
    }));
  }

  /** The time an order was sent to its channel, as registered; undefined when unknown. */
  async channelOrderTimeOf(orderNo: string): Promise<string | undefined> {
    const rows: Array<{ channel_order_time: string | null }> = await this.db.query(
      'SELECT channel_order_time FROM payment_order WHERE order_no = ?',
      [orderNo],
    );
    return rows[0]?.channel_order_time ?? undefined;
  }

  /** Our payments and succeeded refunds of the window that the run's bill lines do not have. */
  async missingAtChannel(scope: LocalScope): Promise<LocalRecord[]> {
    const merchant = scope.includeUnattributed ? '(c.merchant_id = ? OR c.merchant_id IS NULL)' : 'c.merchant_id = ?';
    // A sub-merchant's bill has its payments only; the account's own bill those of no sub-merchant.
    const account = `${merchant} AND ${scope.subMerchantId ? 'c.sub_merchant_id = ?' : 'c.sub_merchant_id IS NULL'}`;
    const accountParams = scope.subMerchantId ? [scope.merchantId, scope.subMerchantId] : [scope.merchantId];
    const payments: Array<Record<string, string>> = await this.db.query(
      `SELECT c.transaction_id, c.order_no, c.amount, c.paid_at AS at
       FROM payment_callback c
       WHERE c.channel = ? AND c.paid_at >= ? AND c.paid_at < ? AND ${account}
         AND NOT EXISTS (SELECT 1 FROM reconciliation_bill_line l
                         WHERE l.run_id = ? AND l.transaction_id = c.transaction_id AND l.kind = 'PAYMENT')`,
      [scope.channel, scope.from, scope.to, ...accountParams, scope.runId],
    );
    const refunds: Array<Record<string, string>> = await this.db.query(
      `SELECT r.transaction_id, r.order_no, r.refund_no, r.amount, r.completed_at AS at
       FROM refund r
       JOIN payment_callback c ON c.channel = r.channel AND c.transaction_id = r.transaction_id
       WHERE r.channel = ? AND r.status = 'SUCCEEDED' AND r.completed_at >= ? AND r.completed_at < ? AND ${account}
         AND NOT EXISTS (SELECT 1 FROM reconciliation_bill_line l
                         WHERE l.run_id = ? AND l.refund_no = r.refund_no AND l.kind = 'REFUND')`,
      [scope.channel, scope.from, scope.to, ...accountParams, scope.runId],
    );
    const record = (kind: LocalRecord['kind'], r: Record<string, string>): LocalRecord => ({
      kind,
      transactionId: r.transaction_id,
      orderNo: r.order_no,
      refundNo: r.refund_no ?? null,
      amount: Number(r.amount),
      at: new Date(r.at),
    });
    return [...payments.map((r) => record('PAYMENT', r)), ...refunds.map((r) => record('REFUND', r))];
  }

  async finish(
    claim: RunClaim,
    outcome: {
      status: RunStatus;
      billLines?: number;
      counts?: Record<string, number>;
      detail?: string;
      retryAt?: Date;
    },
  ): Promise<void> {
    await this.db.query(
      `UPDATE reconciliation_run
       SET status = ?, bill_lines = COALESCE(?, bill_lines), counts = COALESCE(?, counts), detail = ?,
           next_attempt_at = ?, finished_at = ?, claim_token = NULL, lease_until = NULL
       WHERE id = ? AND claim_token = ?`,
      [
        outcome.status,
        outcome.billLines ?? null,
        outcome.counts ? JSON.stringify(outcome.counts) : null,
        outcome.detail?.slice(0, 500) ?? null,
        outcome.retryAt ?? null,
        new Date(),
        claim.runId,
        claim.token,
      ],
    );
  }

  async itemCounts(runId: string): Promise<Record<string, number>> {
    const rows: Array<{ outcome: string; n: string }> = await this.db.query(
      `SELECT outcome, COUNT(*) AS n FROM reconciliation_item WHERE run_id = ? GROUP BY outcome`,
      [runId],
    );
    return Object.fromEntries(rows.map((r) => [r.outcome, Number(r.n)]));
  }

  /** Runs that are due again (NOT_READY, FAILED) or whose instance died, bill dates from `since` on. */
  async dueRuns(now: Date, since: string): Promise<ReconciliationRun[]> {
    return this.db
      .getRepository(ReconciliationRun)
      .createQueryBuilder('r')
      .where(`r.billDate >= :since`, { since })
      .andWhere(
        `((r.status IN ('PENDING', 'NOT_READY', 'FAILED') AND (r.nextAttemptAt IS NULL OR r.nextAttemptAt <= :now))
          OR (r.status = 'RUNNING' AND r.leaseUntil < :now))`,
        { now },
      )
      .orderBy('r.billDate')
      .limit(50)
      .getMany();
  }

  /**
   * Per account, the counts of the run of its latest bill date among the COMPLETED ones, bounded as a
   * scrape's query. Both steps walk uq_reconciliation_run_day: the accounts by a loose index scan,
   * then each account's runs backwards from its latest bill date to the first COMPLETED one.
   */
  async latestCompletedCounts(): Promise<LatestCounts[]> {
    const rows = await scrapeQuery<{
      channel: string;
      merchant_id: string;
      sub_merchant_id: string;
      counts: string | null;
    }>(
      this.reporting,
      `SELECT a.channel, a.merchant_id, a.sub_merchant_id,
              (SELECT r.counts FROM reconciliation_run r
                WHERE r.channel = a.channel AND r.merchant_id = a.merchant_id
                  AND r.sub_merchant_id = a.sub_merchant_id AND r.status = ?
                ORDER BY r.bill_date DESC LIMIT 1) AS counts
         FROM (SELECT channel, merchant_id, sub_merchant_id FROM reconciliation_run
                GROUP BY channel, merchant_id, sub_merchant_id) a`,
      [RunStatus.Completed],
    );
    // An account none of whose runs has completed yet has no figures.
    return rows.flatMap((r) =>
      r.counts === null
        ? []
        : [
            {
              channel: r.channel,
              merchantId: r.merchant_id,
              subMerchantId: r.sub_merchant_id,
              counts: JSON.parse(r.counts) as Record<string, number>,
            },
          ],
    );
  }
}
