import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { RetentionConfig } from '../platform/config/retention.config';
import { WriteResult } from '../platform/database/sql';
import { daysBefore, RetentionTask } from '../platform/retention/retention-task';

/**
 * Deletes events published RETENTION_EVENTS_DAYS ago whose webhook deliveries are written (they
 * carry their own copy of the body); unpublished and dead-lettered ones stay whatever their age.
 */
@Injectable()
export class PublishedEventsRetention implements RetentionTask {
  readonly table = 'outbox_event';

  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  pruneBatch(now: Date, retention: RetentionConfig): Promise<number> {
    return this.txHost.withTransaction(async () => {
      const rows: Array<{ id: string }> = await this.txHost.tx.query(
        `SELECT id FROM outbox_event
         WHERE published_at < ? AND dead_lettered_at IS NULL AND webhooks_fanned_out_at IS NOT NULL
         ORDER BY published_at LIMIT ? FOR UPDATE SKIP LOCKED`,
        [daysBefore(now, retention.eventsDays), retention.batchSize],
      );
      if (rows.length === 0) return 0;
      const ids = rows.map((r) => String(r.id));
      const result: WriteResult = await this.txHost.tx.query('DELETE FROM outbox_event WHERE id IN (?)', [ids]);
      return result.affectedRows;
    });
  }
}
