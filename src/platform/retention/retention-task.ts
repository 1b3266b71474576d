import { RetentionConfig } from '../config/retention.config';

/**
 * One table's pruning, owned by the feature that owns the table (its SQL lives there): one bounded
 * batch of at most `retention.batchSize` rows, locking only those rows, answering how many it
 * pruned by affected-row count (so that replicas pruning together never count a row twice).
 */
export interface RetentionTask {
  /** The table, as `retention_pruned_rows_total{table}` names it. */
  readonly table: string;
  pruneBatch(now: Date, retention: RetentionConfig): Promise<number>;
}

export const RETENTION_TASKS = Symbol('RETENTION_TASKS');

export const DAY_MS = 24 * 3600_000;

/** The moment `days` before `now`. */
export function daysBefore(now: Date, days: number): Date {
  return new Date(now.getTime() - days * DAY_MS);
}
