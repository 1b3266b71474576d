import { Inject, Injectable } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { webhooksConfig } from './webhooks.config';
import { WriteResult } from '../../platform/database/sql';
import { PaymentEvent } from '../payment-events';
import { DeliveryStatus } from './webhook-delivery.entity';
import { messageBody } from './webhook-signature';
import { SendResult } from './webhook-sender';

export interface ActiveEndpoint {
  id: string;
  url: string;
  eventTypes: string[] | null;
  /** The secrets that sign now: the current one, and the previous one during its overlap. */
  secrets: string[];
}

export interface ClaimedDelivery {
  id: string;
  endpointId: string;
  eventId: string;
  body: string;
  /** This attempt's number (1 for the first). */
  attempt: number;
  scheduleStart: number;
}

export interface RecordedAttempt {
  /** The endpoint was disabled by this failure: it has failed for WEBHOOK_DISABLE_AFTER_SECONDS. */
  endpointDisabled: boolean;
  status: DeliveryStatus;
}

/** A delivery to write for an endpoint that never had the event (a resend). */
export interface NewDelivery {
  endpointId: string;
  eventId: string;
  eventType: string;
  orderNo: string;
  body: string;
}

type Row = Record<string, unknown>;

/**
 * The deliveries' state in the database: fan-out, claims and outcomes, each in a transaction of its
 * own; and what an operator does to an endpoint's deliveries (resend, recover, the endpoint's
 * removal), in the caller's transaction.
 */
@Injectable()
export class WebhookDeliveries {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    @Inject(webhooksConfig.KEY) private readonly config: ConfigType<typeof webhooksConfig>,
  ) {}

  async activeEndpoints(): Promise<ActiveEndpoint[]> {
    const rows: Array<Row & { previous_secret: string | null }> = await this.txHost.withTransaction(() =>
      this.txHost.tx.query(
        `SELECT id, url, event_types, secret, previous_secret, previous_secret_until
         FROM webhook_endpoint WHERE enabled = 1 ORDER BY id`,
      ),
    );
    const now = Date.now();
    return rows.map((r) => ({
      id: String(r.id),
      url: String(r.url),
      eventTypes: parseJson<string[] | null>(r.event_types),
      secrets: [
        String(r.secret),
        ...(r.previous_secret && new Date(r.previous_secret_until as string).getTime() > now
          ? [String(r.previous_secret)]
          : []),
      ],
    }));
  }

  /**
   * Writes one delivery per (event, enabled endpoint that wants its type) for a batch of outbox
   * events not fanned out yet, and marks them, in one transaction. The rows are locked SKIP LOCKED
   * and the deliveries unique per (endpoint, event): replicas never write one twice. Returns the
   * number of events fanned out. It leaves an event of a type no enabled endpoint wants (every
   * event, while none is enabled) to the relay, which marks it fanned out when it publishes it, in
   * the same UPDATE (OutboxRepository.wantedByNoWebhook); it marks one only if the relay is done
   * with it and did not.
   */
  async fanOut(limit: number): Promise<number> {
    return this.txHost.withTransaction(async () => {
      const endpoints = await this.activeEndpoints();
      // An event of a type no enabled endpoint wants (every event, while none is enabled) is left to
      // the relay, which marks it fanned out in the UPDATE that marks it published: this takes it
      // only once the relay is done with it without marking it (published or dead-lettered by an
      // earlier build, or wanted by an endpoint disabled since), to mark it, writing nothing.
      const types = endpoints.some((e) => e.eventTypes === null)
        ? undefined
        : [...new Set(endpoints.flatMap((e) => e.eventTypes ?? []))];
      const relayDone = '(published_at IS NOT NULL OR dead_lettered_at IS NOT NULL)';
      const events: Row[] = await this.txHost.tx.query(
        `SELECT id${endpoints.length > 0 ? ', payload' : ''} FROM outbox_event WHERE webhooks_fanned_out_at IS NULL${
          types === undefined ? '' : types.length > 0 ? ` AND (type IN (?) OR ${relayDone})` : ` AND ${relayDone}`
        }
         ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`,
        types !== undefined && types.length > 0 ? [types, limit] : [limit],
      );
      if (events.length === 0) return 0;
      const now = new Date();
      // Without endpoints the payloads were not read: nothing is written, the events are only marked.
      const rows =
        endpoints.length === 0
          ? []
          : events.flatMap((row) => {
              const event = parseJson<PaymentEvent>(row.payload);
              return endpoints
                .filter((e) => e.eventTypes === null || e.eventTypes.includes(event.type))
                .map((e) => [e.id, event.eventId, event.type, event.orderNo, messageBody(event), now, now]);
            });
      if (rows.length > 0) {
        await this.txHost.tx.query(
          `INSERT IGNORE INTO webhook_delivery
             (endpoint_id, event_id, event_type, order_no, body, next_attempt_at, created_at, status, attempts, schedule_start)
           VALUES ${rows.map(() => `(?, ?, ?, ?, ?, ?, ?, '${DeliveryStatus.Pending}', 0, 0)`).join(', ')}`,
          rows.flat(),
        );
      }
      await this.txHost.tx.query('UPDATE outbox_event SET webhooks_fanned_out_at = ? WHERE id IN (?)', [
        now,
        events.map((e) => e.id),
      ]);
      return events.length;
    });
  }

  /**
   * Claims up to `limit` due deliveries of one endpoint: their attempt count goes up and their next
   * attempt moves past the send's timeout (the lease), in one committed transaction, so no other
   * replica can claim the same attempt while this one sends it.
   */
  async claimDue(endpointId: string, limit: number): Promise<ClaimedDelivery[]> {
    return this.txHost.withTransaction(async () => {
      const now = new Date();
      const rows: Row[] = await this.txHost.tx.query(
        `SELECT id, event_id, body, attempts, schedule_start FROM webhook_delivery
         WHERE endpoint_id = ? AND status = ? AND next_attempt_at <= ?
         ORDER BY next_attempt_at LIMIT ? FOR UPDATE SKIP LOCKED`,
        [endpointId, DeliveryStatus.Pending, now, limit],
      );
      if (rows.length === 0) return [];
      const leaseUntil = new Date(now.getTime() + this.config.timeoutMs + LEASE_MARGIN_MS);
      await this.txHost.tx.query(
        'UPDATE webhook_delivery SET attempts = attempts + 1, next_attempt_at = ? WHERE id IN (?)',
        [leaseUntil, rows.map((r) => r.id)],
      );
      return rows.map((r) => ({
        id: String(r.id),
        endpointId,
        eventId: String(r.event_id),
        body: String(r.body),
        attempt: Number(r.attempts) + 1,
        scheduleStart: Number(r.schedule_start),
      }));
    });
  }

  /**
   * The attempt's row, and the delivery's next state: SUCCEEDED, PENDING with the schedule's next
   * delay, or FAILED after the schedule's last attempt. Conditional on the claim still being this
   * attempt's (a resend or a delete in between wins).
   */
  async recordAttempt(claim: ClaimedDelivery, startedAt: Date, result: SendResult): Promise<RecordedAttempt> {
    return this.txHost.withTransaction(async () => {
      await this.txHost.tx.query(
        `INSERT INTO webhook_attempt
           (delivery_id, endpoint_id, event_id, attempt, started_at, latency_ms, status_code, succeeded, error, response_body)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          claim.id,
          claim.endpointId,
          claim.eventId,
          claim.attempt,
          startedAt,
          result.latencyMs,
          result.statusCode,
          result.succeeded,
          result.error?.slice(0, 500) ?? null,
          result.responseBody,
        ],
      );
      const status = this.nextStatus(claim, result);
      const now = new Date();
      const nextAttemptAt =
        status === DeliveryStatus.Pending
          ? new Date(now.getTime() + this.config.retryScheduleMs[claim.attempt - claim.scheduleStart])
          : now;
      await this.txHost.tx.query(
        `UPDATE webhook_delivery SET status = ?, next_attempt_at = ?, finished_at = ?
         WHERE id = ? AND attempts = ? AND status = ?`,
        [
          status,
          nextAttemptAt,
          status === DeliveryStatus.Pending ? null : now,
          claim.id,
          claim.attempt,
          DeliveryStatus.Pending,
        ],
      );
      const endpointDisabled = await this.updateEndpointHealth(claim.endpointId, result.succeeded, now);
      return { status, endpointDisabled };
    });
  }

  /** The endpoint's delivery of the event back to PENDING, due now, with a fresh round of the schedule; false when it has none, or it is PENDING already. */
  async requeue(endpointId: string, eventId: string, now: Date): Promise<boolean> {
    const requeued: WriteResult = await this.txHost.tx.query(
      `UPDATE webhook_delivery SET status = ?, next_attempt_at = ?, schedule_start = attempts, finished_at = NULL
       WHERE endpoint_id = ? AND event_id = ? AND status <> ?`,
      [DeliveryStatus.Pending, now, endpointId, eventId, DeliveryStatus.Pending],
    );
    return requeued.affectedRows === 1;
  }

  async statusOf(endpointId: string, eventId: string): Promise<string | undefined> {
    const [existing]: Row[] = await this.txHost.tx.query(
      'SELECT status FROM webhook_delivery WHERE endpoint_id = ? AND event_id = ?',
      [endpointId, eventId],
    );
    return existing ? String(existing.status) : undefined;
  }

  async insert(delivery: NewDelivery, now: Date): Promise<void> {
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
  async failedSince(endpointId: string, since: Date): Promise<unknown[]> {
    const rows: Row[] = await this.txHost.tx.query(
      `SELECT id FROM webhook_delivery WHERE endpoint_id = ? AND status = ? AND created_at >= ? ORDER BY id`,
      [endpointId, DeliveryStatus.Failed, since],
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

  /** Every delivery of the endpoint. */
  async deleteOfEndpoint(endpointId: string): Promise<void> {
    await this.txHost.tx.query('DELETE FROM webhook_delivery WHERE endpoint_id = ?', [endpointId]);
  }

  private nextStatus(claim: ClaimedDelivery, result: SendResult): DeliveryStatus {
    if (result.succeeded) return DeliveryStatus.Succeeded;
    const attemptsThisRound = claim.attempt - claim.scheduleStart;
    return attemptsThisRound < this.config.retryScheduleMs.length ? DeliveryStatus.Pending : DeliveryStatus.Failed;
  }

  /** A success ends a failing streak; a failure starts one, and disables the endpoint once it is long enough. */
  private async updateEndpointHealth(endpointId: string, succeeded: boolean, now: Date): Promise<boolean> {
    if (succeeded) {
      await this.txHost.tx.query(
        'UPDATE webhook_endpoint SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL',
        [endpointId],
      );
      return false;
    }
    await this.txHost.tx.query('UPDATE webhook_endpoint SET failing_since = ? WHERE id = ? AND failing_since IS NULL', [
      now,
      endpointId,
    ]);
    const disabled: WriteResult = await this.txHost.tx.query(
      `UPDATE webhook_endpoint
       SET enabled = 0, updated_at = ?, disabled_reason = CONCAT('every attempt failed since ', DATE_FORMAT(failing_since, '%Y-%m-%dT%H:%i:%sZ'))
       WHERE id = ? AND enabled = 1 AND failing_since <= ?`,
      [now, endpointId, new Date(now.getTime() - this.config.disableAfterMs)],
    );
    return disabled.affectedRows === 1;
  }
}

/** Time, past the send's timeout, for the sender to record its outcome before another replica may try again. */
const LEASE_MARGIN_MS = 10000;

export function parseJson<T>(value: unknown): T {
  // MariaDB's JSON is LONGTEXT underneath: mysql2 hands it back as text there.
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}
