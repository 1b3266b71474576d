import { Inject, Injectable } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { retentionConfig } from '../config/retention.config';
import { WriteResult } from '../database/sql';

const DAY_MS = 24 * 3600_000;
/** Headers bigger than this (a channel's signature headers) go with the bytes they signed. */
export const KEPT_HEADERS_MAX_BYTES = 256;

export type PrunedTable =
  'callback_delivery' | 'outbox_event' | 'processed_event' | 'refused_notification' | 'refused_notification_hour';

/** What one batch did in each table. */
export type PruneCounts = Record<PrunedTable, number>;

/**
 * One bounded batch per table at a time. Each batch locks only the rows it prunes, by primary key,
 * for one short statement or transaction: rows old enough to prune are never touched by the notify
 * path, so it never waits on the prune. Every count is an affected-row count, so replicas pruning
 * together never count a row twice.
 */
@Injectable()
export class RetentionPruner {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    @Inject(retentionConfig.KEY) private readonly config: ConfigType<typeof retentionConfig>,
  ) {}

  /** One batch of each; `now` decides the horizons. */
  async pruneBatch(now = new Date()): Promise<PruneCounts> {
    const rawHorizon = new Date(now.getTime() - this.config.rawDays * DAY_MS);
    const eventsHorizon = new Date(now.getTime() - this.config.eventsDays * DAY_MS);
    const refusedHorizon = new Date(now.getTime() - this.config.refusedDays * DAY_MS);
    return {
      callback_delivery: await this.pruneRawPayloads(rawHorizon, now),
      outbox_event: await this.prunePublishedEvents(eventsHorizon),
      // After the outbox: a processed_event row goes only once its event can no longer be published again.
      processed_event: await this.pruneProcessedEvents(eventsHorizon),
      refused_notification: await this.pruneRefusedNotifications(refusedHorizon),
      refused_notification_hour: await this.pruneRefusedHours(refusedHorizon),
    };
  }

  /** Empties the bytes (and large headers) of deliveries received before `horizon`; the rows stay. */
  private pruneRawPayloads(horizon: Date, now: Date): Promise<number> {
    return this.txHost.withTransaction(async () => {
      const ids = await this.claim(
        `SELECT id FROM callback_delivery WHERE raw_pruned_at IS NULL AND received_at < ?
         ORDER BY received_at LIMIT ? FOR UPDATE SKIP LOCKED`,
        [horizon, this.config.batchSize],
      );
      if (ids.length === 0) return 0;
      const result: WriteResult = await this.txHost.tx.query(
        `UPDATE callback_delivery
         SET raw_body = '', headers = IF(LENGTH(headers) > ?, JSON_OBJECT(), headers), raw_pruned_at = ?
         WHERE id IN (?) AND raw_pruned_at IS NULL`,
        [KEPT_HEADERS_MAX_BYTES, now, ids],
      );
      return result.affectedRows;
    });
  }

  /**
   * Deletes events published before `horizon` whose webhook deliveries are written (they carry their
   * own copy of the body); unpublished and dead-lettered ones stay whatever their age.
   */
  private prunePublishedEvents(horizon: Date): Promise<number> {
    return this.txHost.withTransaction(async () => {
      const ids = await this.claim(
        `SELECT id FROM outbox_event
         WHERE published_at < ? AND dead_lettered_at IS NULL AND webhooks_fanned_out_at IS NOT NULL
         ORDER BY published_at LIMIT ? FOR UPDATE SKIP LOCKED`,
        [horizon, this.config.batchSize],
      );
      if (ids.length === 0) return 0;
      const result: WriteResult = await this.txHost.tx.query('DELETE FROM outbox_event WHERE id IN (?)', [ids]);
      return result.affectedRows;
    });
  }

  /**
   * Deletes consumers' dedup rows older than `horizon` whose event is no longer in the outbox, so
   * that nothing can deliver the event again. Candidates are read without locks (a locking read
   * could skip a locked outbox row and take its event for gone); the DELETE checks again, and a
   * replica that deleted them first leaves it nothing to count.
   */
  private async pruneProcessedEvents(horizon: Date): Promise<number> {
    const ids = await this.claim(
      `SELECT p.id FROM processed_event p
       WHERE p.processed_at < ? AND NOT EXISTS (SELECT 1 FROM outbox_event o WHERE o.event_id = p.event_id)
       ORDER BY p.processed_at LIMIT ?`,
      [horizon, this.config.batchSize],
    );
    if (ids.length === 0) return 0;
    const result: WriteResult = await this.txHost.tx.query(
      `DELETE FROM processed_event
       WHERE id IN (?) AND NOT EXISTS (SELECT 1 FROM outbox_event o WHERE o.event_id = processed_event.event_id)`,
      [ids],
    );
    return result.affectedRows;
  }

  /**
   * Deletes refused notifications not refused again since `horizon` (a repeat moves last_seen_at,
   * which the DELETE checks again). A kept one is evidence for an operator, not a record of money.
   */
  private async pruneRefusedNotifications(horizon: Date): Promise<number> {
    const ids = await this.claim(
      'SELECT id FROM refused_notification WHERE last_seen_at < ? ORDER BY last_seen_at LIMIT ?',
      [horizon, this.config.batchSize],
    );
    if (ids.length === 0) return 0;
    const result: WriteResult = await this.txHost.tx.query(
      'DELETE FROM refused_notification WHERE id IN (?) AND last_seen_at < ?',
      [ids, horizon],
    );
    return result.affectedRows;
  }

  /** Deletes the cap's hourly counts older than `horizon`: a past hour is never claimed again. */
  private async pruneRefusedHours(horizon: Date): Promise<number> {
    const result: WriteResult = await this.txHost.tx.query(
      'DELETE FROM refused_notification_hour WHERE hour < ? ORDER BY hour LIMIT ?',
      [horizon, this.config.batchSize],
    );
    return result.affectedRows;
  }

  private async claim(sql: string, params: unknown[]): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.txHost.tx.query(sql, params);
    return rows.map((r) => String(r.id));
  }
}
