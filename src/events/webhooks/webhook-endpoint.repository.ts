import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { WriteResult } from '../../platform/database/sql';

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

/**
 * webhook_endpoint as operators change it, in the caller's transaction. What an operator does to an
 * endpoint's deliveries and attempts is WebhookDeliveries' and WebhookAttemptRepository's.
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

  /** The endpoint's row; its attempts and deliveries are deleted before it, in the same transaction. */
  async delete(id: string): Promise<void> {
    await this.txHost.tx.query('DELETE FROM webhook_endpoint WHERE id = ?', [id]);
  }
}
