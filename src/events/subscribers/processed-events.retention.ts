import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { RetentionConfig } from '../../platform/config/retention.config';
import { WriteResult } from '../../platform/database/sql';
import { daysBefore, RetentionTask } from '../../platform/retention/retention-task';

/**
 * Deletes consumers' dedup rows older than RETENTION_EVENTS_DAYS whose event is no longer in the
 * outbox, so that nothing can deliver the event again: it runs after PublishedEventsRetention.
 * Candidates are read without locks (a locking read could skip a locked outbox row and take its
 * event for gone); the DELETE checks again, and a replica that deleted them first leaves it nothing
 * to count.
 */
@Injectable()
export class ProcessedEventsRetention implements RetentionTask {
  readonly table = 'processed_event';

  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  async pruneBatch(now: Date, retention: RetentionConfig): Promise<number> {
    const rows: Array<{ id: string }> = await this.txHost.tx.query(
      `SELECT p.id FROM processed_event p
       WHERE p.processed_at < ? AND NOT EXISTS (SELECT 1 FROM outbox_event o WHERE o.event_id = p.event_id)
       ORDER BY p.processed_at LIMIT ?`,
      [daysBefore(now, retention.eventsDays), retention.batchSize],
    );
    if (rows.length === 0) return 0;
    const result: WriteResult = await this.txHost.tx.query(
      `DELETE FROM processed_event
       WHERE id IN (?) AND NOT EXISTS (SELECT 1 FROM outbox_event o WHERE o.event_id = processed_event.event_id)`,
      [rows.map((r) => String(r.id))],
    );
    return result.affectedRows;
  }
}
