import { Inject, Injectable } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { Propagation, Transactional, TransactionHost } from '@nestjs-cls/transactional';
import { WriteResult } from '../platform/database/sql';
import { eventsConfig, retryDelayMs } from './events.config';
import { errorText } from './subscribers/handler-retry.repository';
import { PaymentEvent } from './payment-events';

export interface ClaimedEvent {
  id: string;
  attempts: number;
  event: PaymentEvent;
}

export interface OutboxBacklog {
  pending: number;
  oldestPendingAgeSeconds: number;
  deadLettered: number;
}

@Injectable()
export class OutboxRepository {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    @Inject(eventsConfig.KEY) private readonly config: ConfigType<typeof eventsConfig>,
  ) {}

  /** The event's payload while the outbox still holds it, in the caller's transaction. */
  async payload(eventId: string): Promise<unknown> {
    const [outbox]: Array<{ payload: unknown }> = await this.txHost.tx.query(
      'SELECT payload FROM outbox_event WHERE event_id = ?',
      [eventId],
    );
    return outbox?.payload;
  }

  /** Appends an event in the caller's transaction; the relay publishes it after commit. */
  async append(event: PaymentEvent): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO outbox_event (event_id, type, order_no, payload, created_at) VALUES (?, ?, ?, ?, ?)`,
      [event.eventId, event.type, event.orderNo, JSON.stringify(event), new Date()],
    );
  }

  /**
   * Locks a batch of due events for this relay; other instances skip the locked rows. An event
   * is due only when no earlier event of the same order is still waiting, so each order's events
   * leave in the order they were written even with several relays. The earlier events are looked
   * up by order: through the unpublished index instead, each check would scan the whole backlog.
   */
  async claimDue(limit: number): Promise<ClaimedEvent[]> {
    const rows: Array<{ id: string; attempts: number; payload: PaymentEvent | string }> = await this.txHost.tx.query(
      `SELECT e.id, e.attempts, e.payload FROM outbox_event e
       WHERE e.published_at IS NULL AND e.dead_lettered_at IS NULL
         AND (e.next_attempt_at IS NULL OR e.next_attempt_at <= ?)
         AND NOT EXISTS (
           SELECT 1 FROM outbox_event earlier FORCE INDEX (ix_outbox_event_order_no)
           WHERE earlier.order_no = e.order_no AND earlier.id < e.id
             AND earlier.published_at IS NULL AND earlier.dead_lettered_at IS NULL)
       ORDER BY e.id LIMIT ?
       FOR UPDATE SKIP LOCKED`,
      [new Date(), limit],
    );
    return rows.map((r) => ({
      id: String(r.id),
      attempts: Number(r.attempts),
      // MariaDB's JSON is LONGTEXT underneath: mysql2 hands it back as text there.
      event: typeof r.payload === 'string' ? (JSON.parse(r.payload) as PaymentEvent) : r.payload,
    }));
  }

  /**
   * Which of the claimed events no enabled webhook endpoint wants (by its event types), read in the
   * relay's transaction after the claim: the webhook fan-out has nothing to write for them, so the
   * relay's own UPDATE marks them fanned out too, and the fan-out never touches them. The events were
   * committed before this read; an endpoint enabled after it was not enabled when they committed.
   */
  async wantedByNoWebhook(claimed: ClaimedEvent[]): Promise<Set<string>> {
    if (claimed.length === 0) return new Set();
    const endpoints: Array<{ event_types: string[] | string | null }> = await this.txHost.tx.query(
      'SELECT event_types FROM webhook_endpoint WHERE enabled = 1',
    );
    // MariaDB's JSON is LONGTEXT underneath: mysql2 hands it back as text there.
    const wanted = endpoints.map((e) =>
      typeof e.event_types === 'string' ? (JSON.parse(e.event_types) as string[] | null) : e.event_types,
    );
    return new Set(
      claimed.filter((c) => !wanted.some((types) => types === null || types.includes(c.event.type))).map((c) => c.id),
    );
  }

  /**
   * Marks the events published, in one UPDATE; those in `fannedOut` (wanted by no webhook endpoint)
   * are marked fanned out by the same UPDATE, unless the fan-out marked them before.
   */
  async markPublished(ids: string[], fannedOut: Set<string> = new Set()): Promise<void> {
    if (ids.length === 0) return;
    const now = new Date();
    const alsoFannedOut = ids.filter((id) => fannedOut.has(id));
    if (alsoFannedOut.length === 0) {
      await this.txHost.tx.query('UPDATE outbox_event SET published_at = ? WHERE id IN (?)', [now, ids]);
    } else if (alsoFannedOut.length === ids.length) {
      await this.txHost.tx.query(
        'UPDATE outbox_event SET published_at = ?, webhooks_fanned_out_at = COALESCE(webhooks_fanned_out_at, ?) WHERE id IN (?)',
        [now, now, ids],
      );
    } else {
      await this.txHost.tx.query(
        `UPDATE outbox_event SET published_at = ?,
           webhooks_fanned_out_at = IF(id IN (?), COALESCE(webhooks_fanned_out_at, ?), webhooks_fanned_out_at)
         WHERE id IN (?)`,
        [now, alsoFannedOut, now, ids],
      );
    }
  }

  /** Counts a failed attempt; an event wanted by no webhook endpoint is marked fanned out by the same UPDATE. */
  async markFailed(claimed: ClaimedEvent, error: unknown, fannedOut = false): Promise<void> {
    const attempts = claimed.attempts + 1;
    const now = new Date();
    const deadLettered = attempts >= this.config.outboxMaxAttempts;
    await this.txHost.tx.query(
      `UPDATE outbox_event SET attempts = ?, last_error = ?, next_attempt_at = ?, dead_lettered_at = ?${
        fannedOut ? ', webhooks_fanned_out_at = COALESCE(webhooks_fanned_out_at, ?)' : ''
      } WHERE id = ?`,
      [
        attempts,
        errorText(error),
        new Date(now.getTime() + retryDelayMs(this.config, attempts)),
        deadLettered ? now : null,
        ...(fannedOut ? [now] : []),
        claimed.id,
      ],
    );
  }

  /** Dead letters were never published: the published_at index serves all three counts. */
  async backlog(): Promise<OutboxBacklog> {
    const [row] = await this.txHost.tx.query<
      Array<{ pending: number | string; oldest: Date | string | null; dead_lettered: number | string }>
    >(
      `SELECT
         (SELECT COUNT(*) FROM outbox_event WHERE published_at IS NULL AND dead_lettered_at IS NULL) AS pending,
         (SELECT MIN(created_at) FROM outbox_event WHERE published_at IS NULL AND dead_lettered_at IS NULL) AS oldest,
         (SELECT COUNT(*) FROM outbox_event WHERE published_at IS NULL AND dead_lettered_at IS NOT NULL) AS dead_lettered`,
    );
    const oldest = row.oldest ? new Date(row.oldest).getTime() : Date.now();
    return {
      pending: Number(row.pending),
      oldestPendingAgeSeconds: Math.max(0, Math.round((Date.now() - oldest) / 1000)),
      deadLettered: Number(row.dead_lettered),
    };
  }

  /**
   * Deletes at most `limit` events published before `before` whose webhook deliveries are written;
   * unpublished and dead-lettered ones stay. Rows another replica has locked are skipped; the
   * caller's transaction keeps the rows locked from the SELECT to the DELETE.
   */
  @Transactional(Propagation.Mandatory)
  async prunePublishedBefore(before: Date, limit: number): Promise<number> {
    const rows: Array<{ id: string }> = await this.txHost.tx.query(
      `SELECT id FROM outbox_event
         WHERE published_at < ? AND dead_lettered_at IS NULL AND webhooks_fanned_out_at IS NOT NULL
         ORDER BY published_at LIMIT ? FOR UPDATE SKIP LOCKED`,
      [before, limit],
    );
    if (rows.length === 0) return 0;
    const ids = rows.map((r) => String(r.id));
    const result: WriteResult = await this.txHost.tx.query('DELETE FROM outbox_event WHERE id IN (?)', [ids]);
    return result.affectedRows;
  }
}
