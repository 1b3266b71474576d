import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Gauge, register } from 'prom-client';
import { ReportingDatabase } from '../platform/database/reporting-database';
import { AnomalyType } from '../payments/anomaly/anomaly.entity';
import { RefundStatus } from '../refund/refund.entity';
import { SnapshotRow, snapshotRows } from './database-gauges.queries';

export interface OperationsSnapshot {
  outboxPending: number;
  outboxOldestPendingAgeSeconds: number;
  deadLetters: { outbox: number; handler: number };
  openAnomalies: Record<AnomalyType, number>;
  refunds: Record<RefundStatus, number>;
  refundOldestOpenAgeSeconds: number;
}

function ageSeconds(oldest: Date | string | null, now: number): number {
  return oldest === null ? 0 : Math.max(0, Math.round((now - new Date(oldest).getTime()) / 1000));
}

function setAll(gauge: Gauge, label: string, values: Record<string, number>): void {
  for (const [key, value] of Object.entries(values)) gauge.set({ [label]: key }, value);
}

function zeroes<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
}

/** Reads the snapshot's rows; pure, so that it can be unit-tested. */
export function toSnapshot(rows: SnapshotRow[], now: number): OperationsSnapshot {
  const snapshot: OperationsSnapshot = {
    outboxPending: 0,
    outboxOldestPendingAgeSeconds: 0,
    deadLetters: { outbox: 0, handler: 0 },
    openAnomalies: zeroes(Object.values(AnomalyType)),
    refunds: zeroes(Object.values(RefundStatus)),
    refundOldestOpenAgeSeconds: 0,
  };
  for (const row of rows) {
    const value = Number(row.value);
    if (row.metric === 'outbox_pending') {
      snapshot.outboxPending = value;
      snapshot.outboxOldestPendingAgeSeconds = ageSeconds(row.oldest, now);
    } else if (row.metric === 'dead_letters') {
      snapshot.deadLetters[row.label as 'outbox' | 'handler'] = value;
    } else if (row.metric === 'open_anomalies') {
      snapshot.openAnomalies[row.label as AnomalyType] = value;
    } else if (row.metric === 'refunds') {
      snapshot.refunds[row.label as RefundStatus] = value;
    } else if (row.metric === 'refund_oldest_open') {
      snapshot.refundOldestOpenAgeSeconds = ageSeconds(row.oldest, now);
    }
  }
  return snapshot;
}

/**
 * Gauges of the state every replica shares, read from the database when Prometheus scrapes (one
 * bounded query per scrape), so that all replicas report the same figures: alert on their max().
 * When the database does not answer in time the gauges are NaN or absent in that scrape and
 * `operations_gauges_up` is 0; /metrics itself still answers.
 */
@Injectable()
export class DatabaseGauges implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(DatabaseGauges.name);
  private readonly gauges: Gauge[] = [];
  private inFlight?: Promise<OperationsSnapshot | undefined>;

  constructor(private readonly reporting: ReportingDatabase) {}

  onModuleInit(): void {
    this.gauge(
      'operations_gauges_up',
      "Whether the database answered the gauges' scrape-time query in time (1) or not (0)",
      [],
      (g, s) => g.set(s ? 1 : 0),
    );
    const gauges: Array<[string, string, string[], (g: Gauge, s: OperationsSnapshot) => void]> = [
      [
        'outbox_pending_events',
        'Events written and not yet published (dead letters excluded)',
        [],
        (g, s) => g.set(s.outboxPending),
      ],
      [
        'outbox_oldest_pending_age_seconds',
        'Age of the oldest unpublished event (0 when none)',
        [],
        (g, s) => g.set(s.outboxOldestPendingAgeSeconds),
      ],
      [
        'event_dead_letters',
        'Dead-lettered events, by stage (outbox, handler)',
        ['stage'],
        (g, s) => setAll(g, 'stage', s.deadLetters),
      ],
      [
        'payment_anomalies_open',
        'Anomalies with status OPEN, by type',
        ['type'],
        (g, s) => setAll(g, 'type', s.openAnomalies),
      ],
      ['refunds_by_status', 'Refunds by status', ['status'], (g, s) => setAll(g, 'status', s.refunds)],
      [
        'refund_oldest_open_age_seconds',
        'Age of the oldest refund still PENDING or PROCESSING (0 when none)',
        [],
        (g, s) => g.set(s.refundOldestOpenAgeSeconds),
      ],
    ];
    for (const [name, help, labelNames, set] of gauges) {
      // Unknown is not zero: a gauge without labels says NaN, which no alert threshold matches.
      this.gauge(name, help, labelNames, (g, s) => (s ? set(g, s) : labelNames.length === 0 && g.set(NaN)));
    }
  }

  onModuleDestroy(): void {
    // Tests run several apps in one process: only the registry's current owner of a name removes it.
    for (const gauge of this.gauges) {
      const name = (gauge as unknown as { name: string }).name;
      if (register.getSingleMetric(name) === gauge) register.removeSingleMetric(name);
    }
  }

  /** One query for all gauges of a scrape: their collect() calls start together and share it. */
  snapshot(): Promise<OperationsSnapshot | undefined> {
    this.inFlight ??= this.readSnapshot()
      .catch((error: Error) => {
        this.logger.warn(`gauges not read: ${error.message}`);
        return undefined;
      })
      .finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  private async readSnapshot(): Promise<OperationsSnapshot> {
    return toSnapshot(await snapshotRows(this.reporting), Date.now());
  }

  private gauge(
    name: string,
    help: string,
    labelNames: string[],
    read: (gauge: Gauge, snapshot: OperationsSnapshot | undefined) => unknown,
  ): void {
    const existing = register.getSingleMetric(name);
    if (existing) register.removeSingleMetric(name);
    const snapshot = () => this.snapshot();
    const gauge: Gauge = new Gauge({
      name,
      help,
      labelNames,
      async collect() {
        const taken = await snapshot();
        gauge.reset();
        read(gauge, taken);
      },
    });
    this.gauges.push(gauge);
  }
}
