import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AnomalyStatus } from '../payments/anomaly/anomaly.entity';
import { countDeadLetters } from '../events/dead-letters.queries';
import { RefundStatus } from '../refund/refund.entity';
import { DeliverySpool, SpoolStats } from '../intake/spool/delivery-spool';
import { ChannelKeyFiles } from '../payments/credentials/channel-key-files';

/** How many of the certificates held the overview lists, those that expire first. */
const EXPIRING_LISTED = 10;

/** The window the latency percentiles are computed over. */
const LATENCY_WINDOW_MS = 24 * 3600_000;

const UNSETTLED: readonly RefundStatus[] = [RefundStatus.Pending, RefundStatus.Processing, RefundStatus.Abnormal];

export interface CountByKey {
  key: string;
  count: number;
}

export interface LatestReconciliation {
  channel: string;
  merchantId: string;
  date: string;
  status: string;
  counts: Record<string, number> | null;
  finishedAt: string | null;
}

export interface ExpiringCredential {
  channel: string;
  /** The merchant or app id; '' for a channel-wide chain (UnionPay's root and middle certificates). */
  account: string;
  /** The option naming the file: platformCert, publicCert, rootCert, appCert, signCert, middleCert. */
  kind: string;
  validTo: string;
}

export interface OperationsOverview {
  at: string;
  latency: { from: string; deliveries: number; p50Ms: number | null; p99Ms: number | null };
  openAnomalies: CountByKey[];
  refundsAwaitingApproval: number;
  unsettledRefunds: CountByKey[];
  deadLetters: number;
  spool: (SpoolStats & { enabled: true }) | { enabled: false };
  reconciliations: LatestReconciliation[];
  /** The certificates the channels hold that expire first (as payment_credential_expiry_seconds), soonest first. */
  expiringCredentials: ExpiringCredential[];
}

/** What the console's overview shows in one answer: counts of what needs a person, and how fast deliveries go. */
@Injectable()
export class OperationsOverviewQuery {
  constructor(
    private readonly db: DataSource,
    private readonly spool: DeliverySpool,
    private readonly keyFiles: ChannelKeyFiles,
  ) {}

  async read(now = new Date()): Promise<OperationsOverview> {
    const since = new Date(now.getTime() - LATENCY_WINDOW_MS);
    const [latency, openAnomalies, awaiting, unsettled, deadLetters, reconciliations] = await Promise.all([
      this.latency(since),
      this.countBy(
        'SELECT type AS k, COUNT(*) AS n FROM payment_anomaly WHERE status <> ? GROUP BY type ORDER BY type',
        [AnomalyStatus.Resolved],
      ),
      this.countBy('SELECT status AS k, COUNT(*) AS n FROM refund WHERE status = ? GROUP BY status', [
        RefundStatus.AwaitingApproval,
      ]),
      this.countBy(
        'SELECT status AS k, COUNT(*) AS n FROM refund WHERE status IN (?) GROUP BY status ORDER BY status',
        [UNSETTLED],
      ),
      countDeadLetters(this.db),
      this.latestReconciliations(),
    ]);
    return {
      at: now.toISOString(),
      latency: { from: since.toISOString(), ...latency },
      openAnomalies,
      refundsAwaitingApproval: awaiting[0]?.count ?? 0,
      unsettledRefunds: unsettled,
      deadLetters,
      spool: this.spool.enabled ? { enabled: true, ...this.spool.stats() } : { enabled: false },
      reconciliations,
      expiringCredentials: this.keyFiles
        .soonestExpiries()
        .slice(0, EXPIRING_LISTED)
        .map((c) => ({ channel: c.channel, account: c.account, kind: c.kind, validTo: c.validTo.toISOString() })),
    };
  }

  private async countBy(sql: string, params: unknown[]): Promise<CountByKey[]> {
    const rows: Array<{ k: string; n: string }> = await this.db.query(sql, params);
    return rows.map((r) => ({ key: r.k, count: Number(r.n) }));
  }

  /** Nearest-rank percentiles of processing_ms since `since`, read by offset on the sorted column. */
  private async latency(since: Date): Promise<{ deliveries: number; p50Ms: number | null; p99Ms: number | null }> {
    const where = 'FROM callback_delivery WHERE received_at >= ? AND processing_ms IS NOT NULL';
    const [{ n }]: Array<{ n: string }> = await this.db.query(`SELECT COUNT(*) AS n ${where}`, [since]);
    const deliveries = Number(n);
    if (deliveries === 0) return { deliveries, p50Ms: null, p99Ms: null };
    const at = async (quantile: number) => {
      const offset = Math.max(0, Math.ceil(quantile * deliveries) - 1);
      const rows: Array<{ ms: number }> = await this.db.query(
        `SELECT processing_ms AS ms ${where} ORDER BY processing_ms LIMIT 1 OFFSET ?`,
        [since, offset],
      );
      return rows[0] ? Number(rows[0].ms) : null;
    };
    return { deliveries, p50Ms: await at(0.5), p99Ms: await at(0.99) };
  }

  /** The newest run of each channel and account. */
  private async latestReconciliations(): Promise<LatestReconciliation[]> {
    const rows: Array<Record<string, string | Date | null>> = await this.db.query(
      `SELECT r.channel, r.merchant_id, r.bill_date, r.status, r.counts, r.finished_at FROM reconciliation_run r
       JOIN (SELECT channel, merchant_id, MAX(bill_date) AS bill_date FROM reconciliation_run GROUP BY channel, merchant_id) latest
         ON latest.channel = r.channel AND latest.merchant_id = r.merchant_id AND latest.bill_date = r.bill_date
       ORDER BY r.channel, r.merchant_id`,
    );
    return rows.map((r) => ({
      channel: String(r.channel),
      merchantId: String(r.merchant_id),
      date: String(r.bill_date),
      status: String(r.status),
      counts: r.counts ? (JSON.parse(String(r.counts)) as Record<string, number>) : null,
      finishedAt: r.finished_at instanceof Date ? r.finished_at.toISOString() : null,
    }));
  }
}
