import { Inject, Injectable } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { Propagation, Transactional } from '@nestjs-cls/transactional';
import { DomainError } from '../../domain/domain-error';
import { TransactionRunner } from '../../platform/transaction/transaction.runner';
import { OutboxRepository } from '../outbox.repository';
import { webhooksConfig } from './webhooks.config';
import { PaymentEvent } from '../payment-events';
import { urlProblem } from './address-guard';
import { WebhookAttemptRepository } from './webhook-attempt.repository';
import { parseJson, WebhookDeliveries } from './webhook-deliveries.repository';
import { DeliveryStatus } from './webhook-delivery.entity';
import { Row, WebhookEndpointRepository } from './webhook-endpoint.repository';
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

/** Written in the write's own transaction, after it (the admin route's audit row): both commit, or neither. */
export type Alongside<T> = (result: T) => Promise<void>;

/**
 * The admin's use cases on endpoints. Each write opens ONE transaction of its own (Propagation.Never),
 * serialised on the endpoint's row, with the caller's audit row (alongside); the statements are
 * the repositories' of their tables: the endpoint's, its deliveries', its attempts' and the outbox's.
 */
@Injectable()
export class WebhookEndpoints {
  constructor(
    private readonly endpoints: WebhookEndpointRepository,
    private readonly deliveries: WebhookDeliveries,
    private readonly attemptRows: WebhookAttemptRepository,
    private readonly outbox: OutboxRepository,
    private readonly transactions: TransactionRunner,
    @Inject(webhooksConfig.KEY) private readonly config: ConfigType<typeof webhooksConfig>,
  ) {}

  @Transactional(Propagation.Never)
  create(
    dto: CreateWebhookEndpointDto,
    alongside?: Alongside<WebhookEndpointSecretView>,
  ): Promise<WebhookEndpointSecretView> {
    return this.commit(async () => {
      const problem = urlProblem(dto.url, this.config.allowPrivateUrls);
      if (problem) throw new DomainError('MalformedRequest', problem);
      const secret = newSigningSecret();
      const endpoint = {
        url: dto.url,
        description: dto.description ?? null,
        eventTypes: dto.eventTypes ? JSON.stringify(dto.eventTypes) : null,
        secret,
      };
      const id = await this.endpoints.insert(endpoint, new Date());
      return { ...(await this.get(id)), secret };
    }, alongside);
  }

  async list(): Promise<WebhookEndpointView[]> {
    return (await this.endpoints.all()).map(toView);
  }

  async get(id: string): Promise<WebhookEndpointView> {
    const row = await this.endpoints.byId(id);
    if (!row) throw new DomainError('NotFound', `webhook endpoint ${id} not found`);
    return toView(row);
  }

  /** Enabling again clears the failing streak and the reason it was disabled for. */
  @Transactional(Propagation.Never)
  update(
    id: string,
    dto: UpdateWebhookEndpointDto,
    alongside?: Alongside<WebhookEndpointView>,
  ): Promise<WebhookEndpointView> {
    return this.commit(async () => {
      await this.lock(id);
      const patch = {
        enabled: dto.enabled,
        eventTypes:
          dto.eventTypes === undefined ? undefined : dto.eventTypes === null ? null : JSON.stringify(dto.eventTypes),
        description: dto.description,
      };
      await this.endpoints.update(id, patch, new Date());
      return this.get(id);
    }, alongside);
  }

  /** A new secret; the current one keeps signing beside it for 24 hours. */
  @Transactional(Propagation.Never)
  rotateSecret(id: string, alongside?: Alongside<WebhookEndpointSecretView>): Promise<WebhookEndpointSecretView> {
    return this.commit(async () => {
      await this.lock(id);
      const secret = newSigningSecret();
      const now = new Date();
      await this.endpoints.rotateSecret(id, secret, new Date(now.getTime() + this.config.secretOverlapMs), now);
      return { ...(await this.get(id)), secret };
    }, alongside);
  }

  @Transactional(Propagation.Never)
  remove(id: string, alongside?: Alongside<WebhookEndpointView>): Promise<WebhookEndpointView> {
    return this.commit(async () => {
      const endpoint = await this.get(id);
      await this.lock(id);
      await this.attemptRows.deleteOfEndpoint(id);
      await this.deliveries.deleteOfEndpoint(id);
      await this.endpoints.delete(id);
      return endpoint;
    }, alongside);
  }

  async attempts(id: string, query: AttemptQueryDto): Promise<WebhookAttemptPageView> {
    await this.get(id);
    const limit = query.limit ?? 50;
    const filter = {
      eventId: query.eventId,
      orderNo: query.orderNo,
      succeeded: query.status ? query.status === AttemptOutcome.Succeeded : undefined,
      from: query.from ? new Date(query.from) : undefined,
      to: query.to ? new Date(query.to) : undefined,
      cursor: query.cursor,
    };
    const rows = await this.attemptRows.ofEndpoint(id, filter, limit + 1);
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
  @Transactional(Propagation.Never)
  resend(id: string, eventId: string, alongside?: Alongside<ResendView>): Promise<ResendView> {
    return this.commit(async () => {
      await this.lock(id);
      const now = new Date();
      if (await this.deliveries.requeue(id, eventId, now))
        return { eventId, status: DeliveryStatus.Pending, queued: true };
      const existing = await this.deliveries.statusOf(id, eventId);
      if (existing !== undefined) return { eventId, status: existing, queued: false };
      const payload = await this.outbox.payload(eventId);
      if (payload === undefined) {
        throw new DomainError('NotFound', `event ${eventId} not found (or already pruned from the outbox)`);
      }
      const event = parseJson<PaymentEvent>(payload);
      const delivery = {
        endpointId: id,
        eventId: event.eventId,
        eventType: event.type,
        orderNo: event.orderNo,
        body: messageBody(event),
      };
      await this.deliveries.insert(delivery, now);
      return { eventId, status: DeliveryStatus.Pending, queued: true };
    }, alongside);
  }

  /**
   * Queues again every FAILED delivery of the endpoint created since `since`, spread out at
   * RECOVER_PER_SECOND so that a receiver that just came back is not flooded.
   */
  @Transactional(Propagation.Never)
  recover(id: string, since: Date, alongside?: Alongside<RecoverView>): Promise<RecoverView> {
    return this.commit(async () => {
      await this.lock(id);
      const ids = await this.deliveries.failedSince(id, since);
      const now = Date.now();
      let lastDue = new Date(now);
      for (let i = 0; i < ids.length; i += RECOVER_PER_SECOND) {
        lastDue = new Date(now + (i / RECOVER_PER_SECOND) * 1000);
        await this.deliveries.requeueFailed(ids.slice(i, i + RECOVER_PER_SECOND), lastDue);
      }
      return { queued: ids.length, lastDueAt: lastDue.toISOString() };
    }, alongside);
  }

  private commit<T>(change: () => Promise<T>, alongside?: Alongside<T>): Promise<T> {
    return this.transactions.run(async () => {
      const result = await change();
      await alongside?.(result);
      return result;
    });
  }

  /** Serialises the writes to one endpoint (the 404 comes from here). */
  private async lock(id: string): Promise<void> {
    if (!(await this.endpoints.lock(id))) throw new DomainError('NotFound', `webhook endpoint ${id} not found`);
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
