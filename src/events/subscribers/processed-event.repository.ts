import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { WriteResult } from '../../platform/database/sql';

/** Consumers' dedup rows: one per (consumer, event), written with the handler's effect. */
@Injectable()
export class ProcessedEventRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /** Throws a duplicate-key error when the consumer processed the event before. */
  async insert(consumer: string, eventId: string, processedAt: Date): Promise<void> {
    await this.txHost.tx.query('INSERT INTO processed_event (consumer, event_id, processed_at) VALUES (?, ?, ?)', [
      consumer,
      eventId,
      processedAt,
    ]);
  }

  /** One INSERT for all the events, which fails as a whole when any of them was processed before. */
  async insertAll(consumer: string, eventIds: string[], processedAt: Date): Promise<void> {
    await this.txHost.tx.query('INSERT INTO processed_event (consumer, event_id, processed_at) VALUES ?', [
      eventIds.map((eventId) => [consumer, eventId, processedAt]),
    ]);
  }

  /**
   * Deletes at most `limit` rows processed before `before` whose event is no longer in the outbox.
   * Candidates are read without locks (a locking read could skip a locked outbox row and take its
   * event for gone); the DELETE checks again, and a replica that deleted them first leaves it
   * nothing to count.
   */
  async pruneProcessedBefore(before: Date, limit: number): Promise<number> {
    const rows: Array<{ id: string }> = await this.txHost.tx.query(
      `SELECT p.id FROM processed_event p
       WHERE p.processed_at < ? AND NOT EXISTS (SELECT 1 FROM outbox_event o WHERE o.event_id = p.event_id)
       ORDER BY p.processed_at LIMIT ?`,
      [before, limit],
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
