import { Inject, Injectable } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { DomainError } from '../../domain/domain-error';
import { webhooksConfig } from './webhooks.config';
import { WriteResult } from '../../platform/database/sql';
import { PaymentEvent } from '../payment-events';
import { urlProblem } from './address-guard';
import { parseJson } from './webhook-deliveries.repository';
import { DeliveryStatus } from './webhook-delivery.entity';
import { messageBody, newSigningSecret } from './webhook-signature';
import {
  AttemptOutcome,
  AttemptQueryDto,
  CreateWebhookEndpointDto,
  RecoverView,
  ResendView,
  UpdateWebhookEndpointDto,
  WebhookAttemptPageView,
  WebhookEndpointSecretView,
  WebhookEndpointView,
} from './dto/webhook-endpoint.dto';

/** Recovered deliveries are spread out at this rate per endpoint, on top of its concurrency bound. */
const RECOVER_PER_SECOND = 20;

type Row = Record<string, unknown>;

/** The admin's use cases on endpoints; the writes run in the caller's transaction, with their audit row. */
@Injectable()
export class WebhookEndpoints {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    @Inject(webhooksConfig.KEY) private readonly config: ConfigType<typeof webhooksConfig>,
  ) {}

  async create(dto: CreateWebhookEndpointDto): Promise<WebhookEndpointSecretView> {
    const problem = urlProblem(dto.url, this.config.allowPrivateUrls);
    if (problem) throw new DomainError('MalformedRequest', problem);
    const secret = newSigningSecret();
    const now = new Date();
    const result: WriteResult = await this.txHost.tx.query(
      `INSERT INTO webhook_endpoint (url, description, event_types, enabled, secret, created_at, updated_at)
       VALUES (?, ?, ?, 1, ?, ?, ?)`,
      [dto.url, dto.description ?? null, dto.eventTypes ? JSON.stringify(dto.eventTypes) : null, secret, now, now],
    );
    return { ...(await this.get(String(result.insertId))), secret };
  }

  async list(): Promise<WebhookEndpointView[]> {
    const rows: Row[] = await this.txHost.tx.query('SELECT * FROM webhook_endpoint ORDER BY id');
    return rows.map(toView);
  }

  async get(id: string): Promise<WebhookEndpointView> {
    const [row]: Row[] = await this.txHost.tx.query('SELECT * FROM webhook_endpoint WHERE id = ?', [id]);
    if (!row) throw new DomainError('NotFound', `webhook endpoint ${id} not found`);
    return toView(row);
  }

  /** Enabling again clears the failing streak and the reason it was disabled for. */
  async update(id: string, dto: UpdateWebhookEndpointDto): Promise<WebhookEndpointView> {
    await this.lock(id);
    const sets: string[] = ['updated_at = ?'];
    const params: unknown[] = [new Date()];
    if (dto.enabled !== undefined) {
      sets.push('enabled = ?', 'disabled_reason = NULL', 'failing_since = NULL');
      params.push(dto.enabled);
    }
    if (dto.eventTypes !== undefined) {
      sets.push('event_types = ?');
      params.push(dto.eventTypes === null ? null : JSON.stringify(dto.eventTypes));
    }
    if (dto.description !== undefined) {
      sets.push('description = ?');
      params.push(dto.description);
    }
    await this.txHost.tx.query(`UPDATE webhook_endpoint SET ${sets.join(', ')} WHERE id = ?`, [...params, id]);
    return this.get(id);
  }

  /** A new secret; the current one keeps signing beside it for 24 hours. */
  async rotateSecret(id: string): Promise<WebhookEndpointSecretView> {
    await this.lock(id);
    const secret = newSigningSecret();
    const now = new Date();
    await this.txHost.tx.query(
      `UPDATE webhook_endpoint SET previous_secret = secret, previous_secret_until = ?, secret = ?, updated_at = ?
       WHERE id = ?`,
      [new Date(now.getTime() + this.config.secretOverlapMs), secret, now, id],
    );
    return { ...(await this.get(id)), secret };
  }

  async remove(id: string): Promise<WebhookEndpointView> {
    const endpoint = await this.get(id);
    await this.lock(id);
    await this.txHost.tx.query('DELETE FROM webhook_attempt WHERE endpoint_id = ?', [id]);
    await this.txHost.tx.query('DELETE FROM webhook_delivery WHERE endpoint_id = ?', [id]);
    await this.txHost.tx.query('DELETE FROM webhook_endpoint WHERE id = ?', [id]);
    return endpoint;
  }

  async attempts(id: string, query: AttemptQueryDto): Promise<WebhookAttemptPageView> {
    await this.get(id);
    const limit = query.limit ?? 50;
    const where = ['a.endpoint_id = ?'];
    const params: unknown[] = [id];
    const filter = (condition: string, value: unknown) => {
      where.push(condition);
      params.push(value);
    };
    if (query.eventId) filter('a.event_id = ?', query.eventId);
    if (query.orderNo) filter('d.order_no = ?', query.orderNo);
    if (query.status) filter('a.succeeded = ?', query.status === AttemptOutcome.Succeeded);
    if (query.from) filter('a.started_at >= ?', new Date(query.from));
    if (query.to) filter('a.started_at < ?', new Date(query.to));
    if (query.cursor) filter('a.id < ?', query.cursor);
    const rows: Row[] = await this.txHost.tx.query(
      `SELECT a.*, d.order_no, d.event_type, d.status AS delivery_status
       FROM webhook_attempt a JOIN webhook_delivery d ON d.id = a.delivery_id
       WHERE ${where.join(' AND ')} ORDER BY a.id DESC LIMIT ?`,
      [...params, limit + 1],
    );
    const page = rows.slice(0, limit);
    return {
      items: page.map((r) => ({
        id: String(r.id),
        eventId: String(r.event_id),
        eventType: String(r.event_type),
        orderNo: String(r.order_no),
        attempt: Number(r.attempt),
        startedAt: new Date(r.started_at as string).toISOString(),
        latencyMs: Number(r.latency_ms),
        statusCode: r.status_code === null ? null : Number(r.status_code),
        status: Number(r.succeeded) === 1 ? AttemptOutcome.Succeeded : AttemptOutcome.Failed,
        error: (r.error as string | null) ?? null,
        responseBody: (r.response_body as string | null) ?? null,
        deliveryStatus: String(r.delivery_status),
      })),
      nextCursor: rows.length > limit ? String(page.at(-1)!.id) : null,
    };
  }

  /**
   * Sends one event to the endpoint again, now, with a fresh round of the retry schedule; an
   * event it never had (it was created later, or did not want the type) is written for it from
   * the outbox while the outbox still holds the event. A delivery already pending is left alone.
   */
  async resend(id: string, eventId: string): Promise<ResendView> {
    await this.lock(id);
    const now = new Date();
    const requeued: WriteResult = await this.txHost.tx.query(
      `UPDATE webhook_delivery SET status = ?, next_attempt_at = ?, schedule_start = attempts, finished_at = NULL
       WHERE endpoint_id = ? AND event_id = ? AND status <> ?`,
      [DeliveryStatus.Pending, now, id, eventId, DeliveryStatus.Pending],
    );
    if (requeued.affectedRows === 1) return { eventId, status: DeliveryStatus.Pending, queued: true };
    const [existing]: Row[] = await this.txHost.tx.query(
      'SELECT status FROM webhook_delivery WHERE endpoint_id = ? AND event_id = ?',
      [id, eventId],
    );
    if (existing) return { eventId, status: String(existing.status), queued: false };
    const [outbox]: Row[] = await this.txHost.tx.query('SELECT payload FROM outbox_event WHERE event_id = ?', [
      eventId,
    ]);
    if (!outbox) throw new DomainError('NotFound', `event ${eventId} not found (or already pruned from the outbox)`);
    const event = parseJson<PaymentEvent>(outbox.payload);
    await this.txHost.tx.query(
      `INSERT INTO webhook_delivery
         (endpoint_id, event_id, event_type, order_no, body, status, attempts, schedule_start, next_attempt_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, 0, 0, ?, ?)`,
      [id, event.eventId, event.type, event.orderNo, messageBody(event), DeliveryStatus.Pending, now, now],
    );
    return { eventId, status: DeliveryStatus.Pending, queued: true };
  }

  /**
   * Queues again every FAILED delivery of the endpoint created since `since`, spread out at
   * RECOVER_PER_SECOND so that a receiver that just came back is not flooded.
   */
  async recover(id: string, since: Date): Promise<RecoverView> {
    await this.lock(id);
    const rows: Row[] = await this.txHost.tx.query(
      `SELECT id FROM webhook_delivery WHERE endpoint_id = ? AND status = ? AND created_at >= ? ORDER BY id`,
      [id, DeliveryStatus.Failed, since],
    );
    const now = Date.now();
    let lastDue = new Date(now);
    for (let i = 0; i < rows.length; i += RECOVER_PER_SECOND) {
      lastDue = new Date(now + (i / RECOVER_PER_SECOND) * 1000);
      await this.txHost.tx.query(
        `UPDATE webhook_delivery SET status = ?, next_attempt_at = ?, schedule_start = attempts, finished_at = NULL
         WHERE id IN (?) AND status = ?`,
        [
          DeliveryStatus.Pending,
          lastDue,
          rows.slice(i, i + RECOVER_PER_SECOND).map((r) => r.id),
          DeliveryStatus.Failed,
        ],
      );
    }
    return { queued: rows.length, lastDueAt: lastDue.toISOString() };
  }

  /** Serialises the writes to one endpoint (the 404 comes from here). */
  private async lock(id: string): Promise<void> {
    const rows: Row[] = await this.txHost.tx.query('SELECT id FROM webhook_endpoint WHERE id = ? FOR UPDATE', [id]);
    if (rows.length === 0) throw new DomainError('NotFound', `webhook endpoint ${id} not found`);
  }
}

function isoOrNull(value: unknown): string | null {
  return value ? new Date(value as string).toISOString() : null;
}

/** Everything but the secrets. */
function toView(row: Row): WebhookEndpointView {
  return {
    id: String(row.id),
    url: String(row.url),
    description: (row.description as string | null) ?? null,
    eventTypes: parseJson<string[] | null>(row.event_types ?? null),
    enabled: Number(row.enabled) === 1,
    disabledReason: (row.disabled_reason as string | null) ?? null,
    failingSince: isoOrNull(row.failing_since),
    previousSecretUntil: isoOrNull(row.previous_secret_until),
    createdAt: new Date(row.created_at as string).toISOString(),
    updatedAt: new Date(row.updated_at as string).toISOString(),
  };
}
