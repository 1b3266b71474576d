import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { WriteResult } from '../../platform/database/sql';
import { DeliveryStatus } from './webhook-delivery.entity';

export type Row = Record<string, unknown>;

/** An endpoint as registered: its URL and what it wants, with its first secret. */
export interface NewEndpoint {
  url: string;
  description: string | null;
  /** JSON text of the event types, or null for every type. */
  eventTypes: string | null;
  secret: string;
}

/** What an update changes; absent, it stays. */
export interface EndpointPatch {
  enabled?: boolean;
  /** JSON text of the event types, or null for every type. */
  eventTypes?: string | null;
  description?: string;
}

/** The attempts page's filters, each optional; `cursor` is the last attempt id of the previous page. */
export interface AttemptFilter {
  eventId?: string;
  orderNo?: string;
  succeeded?: boolean;
  from?: Date;
  to?: Date;
  cursor?: string;
}

/** A delivery to write for an endpoint that never had the event (a resend). */
export interface NewDelivery {
  endpointId: string;
  eventId: string;
  eventType: string;
  orderNo: string;
  body: string;
}

/**
 * webhook_endpoint as operators change it, and what an operator does to an endpoint's deliveries
 * and attempts (resend, recover, delete): in the caller's transaction.
 */
@Injectable()
export class WebhookEndpointRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /** The new endpoint's id. */
  async insert(endpoint: NewEndpoint, now: Date): Promise<string> {
    const result: WriteResult = await this.txHost.tx.query(
      `INSERT INTO webhook_endpoint (url, description, event_types, enabled, secret, created_at, updated_at)
       VALUES (?, ?, ?, 1, ?, ?, ?)`,
      [endpoint.url, endpoint.description, endpoint.eventTypes, endpoint.secret, now, now],
    );
    return String(result.insertId);
  }

  all(): Promise<Row[]> {
    return this.txHost.tx.query('SELECT * FROM webhook_endpoint ORDER BY id');
  }

  async byId(id: string): Promise<Row | undefined> {
    const [row]: Row[] = await this.txHost.tx.query('SELECT * FROM webhook_endpoint WHERE id = ?', [id]);
    return row;
  }

  /** Locks the endpoint's row, serialising the writes to it; false when there is none. */
  async lock(id: string): Promise<boolean> {
    const rows: Row[] = await this.txHost.tx.query('SELECT id FROM webhook_endpoint WHERE id = ? FOR UPDATE', [id]);
    return rows.length > 0;
  }

  /** Changes what `patch` names, and updated_at; enabling or disabling clears the failing streak and its reason. */
  async update(id: string, patch: EndpointPatch, now: Date): Promise<void> {
    const sets: string[] = ['updated_at = ?'];
    const params: unknown[] = [now];
    if (patch.enabled !== undefined) {
      sets.push('enabled = ?', 'disabled_reason = NULL', 'failing_since = NULL');
      params.push(patch.enabled);
    }
    if (patch.eventTypes !== undefined) {
      sets.push('event_types = ?');
      params.push(patch.eventTypes);
    }
    if (patch.description !== undefined) {
      sets.push('description = ?');
      params.push(patch.description);
    }
    await this.txHost.tx.query(`UPDATE webhook_endpoint SET ${sets.join(', ')} WHERE id = ?`, [...params, id]);
  }

  /** The new secret signs; the current one goes on signing beside it until `previousUntil`. */
  async rotateSecret(id: string, secret: string, previousUntil: Date, now: Date): Promise<void> {
    await this.txHost.tx.query(
      `UPDATE webhook_endpoint SET previous_secret = secret, previous_secret_until = ?, secret = ?, updated_at = ?
       WHERE id = ?`,
      [previousUntil, secret, now, id],
    );
  }

  /** The endpoint with its attempts and deliveries. */
  async delete(id: string): Promise<void> {
    await this.txHost.tx.query('DELETE FROM webhook_attempt WHERE endpoint_id = ?', [id]);
    await this.txHost.tx.query('DELETE FROM webhook_delivery WHERE endpoint_id = ?', [id]);
    await this.txHost.tx.query('DELETE FROM webhook_endpoint WHERE id = ?', [id]);
  }

  /** The endpoint's attempts matching `filter`, newest first, at most `limit`, with their delivery's order, type and status. */
  attempts(id: string, filter: AttemptFilter, limit: number): Promise<Row[]> {
    const where = ['a.endpoint_id = ?'];
    const params: unknown[] = [id];
    const add = (condition: string, value: unknown) => {
      where.push(condition);
      params.push(value);
    };
    if (filter.eventId) add('a.event_id = ?', filter.eventId);
    if (filter.orderNo) add('d.order_no = ?', filter.orderNo);
    if (filter.succeeded !== undefined) add('a.succeeded = ?', filter.succeeded);
    if (filter.from) add('a.started_at >= ?', filter.from);
    if (filter.to) add('a.started_at < ?', filter.to);
    if (filter.cursor) add('a.id < ?', filter.cursor);
    return this.txHost.tx.query(
      `SELECT a.*, d.order_no, d.event_type, d.status AS delivery_status
       FROM webhook_attempt a JOIN webhook_delivery d ON d.id = a.delivery_id
       WHERE ${where.join(' AND ')} ORDER BY a.id DESC LIMIT ?`,
      [...params, limit],
    );
  }

  /** The endpoint's delivery of the event back to PENDING, due now, with a fresh round of the schedule; false when it has none, or it is PENDING already. */
  async requeue(id: string, eventId: string, now: Date): Promise<boolean> {
    const requeued: WriteResult = await this.txHost.tx.query(
      `UPDATE webhook_delivery SET status = ?, next_attempt_at = ?, schedule_start = attempts, finished_at = NULL
       WHERE endpoint_id = ? AND event_id = ? AND status <> ?`,
      [DeliveryStatus.Pending, now, id, eventId, DeliveryStatus.Pending],
    );
    return requeued.affectedRows === 1;
  }

  async deliveryStatus(id: string, eventId: string): Promise<string | undefined> {
    const [existing]: Row[] = await this.txHost.tx.query(
      'SELECT status FROM webhook_delivery WHERE endpoint_id = ? AND event_id = ?',
      [id, eventId],
    );
    return existing ? String(existing.status) : undefined;
  }

  /** The event's payload while the outbox still holds it. */
  async outboxPayload(eventId: string): Promise<unknown> {
    const [outbox]: Row[] = await this.txHost.tx.query('SELECT payload FROM outbox_event WHERE event_id = ?', [
      eventId,
    ]);
    return outbox?.payload;
  }

  async insertDelivery(delivery: NewDelivery, now: Date): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO webhook_delivery
         (endpoint_id, event_id, event_type, order_no, body, status, attempts, schedule_start, next_attempt_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, 0, 0, ?, ?)`,
      [
        delivery.endpointId,
        delivery.eventId,
        delivery.eventType,
        delivery.orderNo,
        delivery.body,
        DeliveryStatus.Pending,
        now,
        now,
      ],
    );
  }

  /** The ids of the endpoint's FAILED deliveries created since `since`, oldest first. */
  async failedSince(id: string, since: Date): Promise<unknown[]> {
    const rows: Row[] = await this.txHost.tx.query(
      `SELECT id FROM webhook_delivery WHERE endpoint_id = ? AND status = ? AND created_at >= ? ORDER BY id`,
      [id, DeliveryStatus.Failed, since],
    );
    return rows.map((r) => r.id);
  }

  /** These FAILED deliveries back to PENDING, due at `due`, with a fresh round of the schedule. */
  async requeueFailed(deliveryIds: unknown[], due: Date): Promise<void> {
    await this.txHost.tx.query(
      `UPDATE webhook_delivery SET status = ?, next_attempt_at = ?, schedule_start = attempts, finished_at = NULL
       WHERE id IN (?) AND status = ?`,
      [DeliveryStatus.Pending, due, deliveryIds, DeliveryStatus.Failed],
    );
  }
}
