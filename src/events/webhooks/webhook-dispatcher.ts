import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter } from 'prom-client';
import { webhooksConfig } from './webhooks.config';
import { WEBHOOK_ATTEMPTS_TOTAL, WEBHOOK_ENDPOINTS_DISABLED_TOTAL } from '../../platform/metrics/metrics.module';
import { ActiveEndpoint, ClaimedDelivery, WebhookDeliveries } from './webhook-deliveries.repository';
import { WebhookSender } from './webhook-sender';
import { signedHeaders } from './webhook-signature';

/**
 * Sends due deliveries, in every instance. Each endpoint has its own claims and at most
 * WEBHOOK_ENDPOINT_CONCURRENCY attempts in flight here, so a slow or dead endpoint only ever
 * occupies its own slots: the others' claims and sends go on beside it. A finished send wakes the
 * loop, so a fast endpoint is not held to the poll interval.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WebhookDispatcher.name);
  private readonly sender: WebhookSender;
  private readonly inFlight = new Map<string, number>();
  private readonly sends = new Set<Promise<void>>();
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;

  constructor(
    private readonly deliveries: WebhookDeliveries,
    @Inject(webhooksConfig.KEY) private readonly config: ConfigType<typeof webhooksConfig>,
    @InjectMetric(WEBHOOK_ATTEMPTS_TOTAL) private readonly attempts: Counter<string>,
    @InjectMetric(WEBHOOK_ENDPOINTS_DISABLED_TOTAL) private readonly disabled: Counter<string>,
  ) {
    this.sender = new WebhookSender({
      timeoutMs: config.timeoutMs,
      maxResponseBytes: config.maxResponseBytes,
      allowPrivate: config.allowPrivateUrls,
    });
  }

  onApplicationBootstrap(): void {
    this.running = true;
    this.loop = this.run();
  }

  /** No new claims; waits for the sends in flight, each bounded by WEBHOOK_TIMEOUT_MS. */
  async beforeApplicationShutdown(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    await Promise.allSettled([...this.sends]);
    this.sender.close();
  }

  private async run(): Promise<void> {
    while (this.running) {
      let claimed = 0;
      try {
        claimed = await this.claimAndSend();
      } catch (error) {
        this.logger.error(`round failed: ${(error as Error).message}`);
      }
      if (claimed === 0) await this.pause(this.config.pollIntervalMs);
    }
  }

  /** One claim per endpoint with free slots; returns the number of attempts started. */
  private async claimAndSend(): Promise<number> {
    let started = 0;
    for (const endpoint of await this.deliveries.activeEndpoints()) {
      if (!this.running) break;
      const free = this.config.endpointConcurrency - (this.inFlight.get(endpoint.id) ?? 0);
      if (free <= 0) continue;
      const claims = await this.deliveries.claimDue(endpoint.id, free);
      for (const claim of claims) this.track(endpoint, claim);
      started += claims.length;
    }
    return started;
  }

  private track(endpoint: ActiveEndpoint, claim: ClaimedDelivery): void {
    this.inFlight.set(endpoint.id, (this.inFlight.get(endpoint.id) ?? 0) + 1);
    const send = this.attempt(endpoint, claim)
      .catch((error: Error) => this.logger.error(`delivery ${claim.id} not recorded: ${error.message}`))
      .finally(() => {
        this.inFlight.set(endpoint.id, (this.inFlight.get(endpoint.id) ?? 1) - 1);
        this.sends.delete(send);
        this.wake?.();
      });
    this.sends.add(send);
  }

  private async attempt(endpoint: ActiveEndpoint, claim: ClaimedDelivery): Promise<void> {
    const startedAt = new Date();
    const headers = {
      ...signedHeaders(endpoint.secrets, claim.eventId, startedAt, claim.body),
      'webhook-attempt': String(claim.attempt),
      'user-agent': 'payment-callback-service-webhooks/1',
    };
    const result = await this.sender.send(endpoint.url, headers, claim.body);
    this.attempts.inc({ endpoint: endpoint.id, outcome: result.succeeded ? 'succeeded' : 'failed' });
    const recorded = await this.deliveries.recordAttempt(claim, startedAt, result);
    if (recorded.endpointDisabled) {
      this.disabled.inc({ endpoint: endpoint.id });
      this.logger.warn(`webhook endpoint ${endpoint.id} disabled: every attempt has failed for too long`);
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
