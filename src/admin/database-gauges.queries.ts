import { ReportingDatabase } from '../platform/database/reporting-database';
import { scrapeQuery } from '../platform/database/scrape-query';
import { AnomalyStatus } from '../payments/anomaly/anomaly.entity';
import { OPEN_REFUND_STATUSES } from '../refund/refund.entity';

/** One row of the gauges' snapshot: a metric, its label, a count and the oldest row's time where it has one. */
export interface SnapshotRow {
  metric: string;
  label: string | null;
  value: string | number;
  oldest: Date | string | null;
}

// Each branch is served by an index: ix_outbox_event_unpublished (dead letters are never published),
// ix_handler_retry_due, ix_payment_anomaly_status, ix_refund_due
// (refunds are few: one per emergency or order refund).
const SNAPSHOT_SQL = `
  SELECT 'outbox_pending' AS metric, NULL AS label, COUNT(*) AS value, MIN(created_at) AS oldest
    FROM outbox_event WHERE published_at IS NULL AND dead_lettered_at IS NULL
  UNION ALL SELECT 'dead_letters', 'outbox', COUNT(*), NULL
    FROM outbox_event WHERE published_at IS NULL AND dead_lettered_at IS NOT NULL
  UNION ALL SELECT 'dead_letters', 'handler', COUNT(*), NULL
    FROM handler_retry WHERE dead_lettered_at IS NOT NULL
  UNION ALL SELECT 'open_anomalies', type, COUNT(*), NULL
    FROM payment_anomaly WHERE status = '${AnomalyStatus.Open}' GROUP BY type
  UNION ALL SELECT 'refunds', status, COUNT(*), NULL
    FROM refund GROUP BY status
  UNION ALL SELECT 'refund_oldest_open', NULL, COUNT(*), MIN(created_at)
    FROM refund WHERE status IN (${OPEN_REFUND_STATUSES.map((s) => `'${s}'`).join(', ')})`;

/** Every row of the database gauges' snapshot, in one scrape query on the reporting database. */
export function snapshotRows(reporting: ReportingDatabase): Promise<SnapshotRow[]> {
  return scrapeQuery<SnapshotRow>(reporting, SNAPSHOT_SQL);
}
