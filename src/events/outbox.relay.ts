import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { PollingWorker } from '../platform/lifecycle/polling-worker';
import { eventsConfig } from './events.config';
import { DestinationUnavailable, EVENT_PUBLISHER, EventPublisher } from './event-publisher';
import { OutboxRepository } from './outbox.repository';

/**
 * Publishes committed outbox events, in every instance. A batch is claimed FOR UPDATE SKIP
 * LOCKED and stays locked while it is published, so no two relays ever hold the same row; a row
 * is marked published only after the destination confirmed it. An instance that dies mid-batch
 * leaves its rows unpublished (the transaction rolls back) and another relay publishes them
 * again: delivery is at least once, and consumers deduplicate by eventId. An event that no enabled
 * webhook endpoint wants is marked fanned out by the same UPDATE (the fan-out has nothing to write
 * for it and leaves it alone): one UPDATE of the row for both.
 */
@Injectable()
export class OutboxRelay extends PollingWorker {
  protected readonly logger = new Logger(OutboxRelay.name);

  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly outbox: OutboxRepository,
    @Inject(EVENT_PUBLISHER) private readonly publisher: EventPublisher,
    @Inject(eventsConfig.KEY) private readonly config: ConfigType<typeof eventsConfig>,
  ) {
    super();
  }

  protected get intervalMs(): number {
    return this.config.pollIntervalMs;
  }

  protected async pollOnce(): Promise<boolean> {
    // A broker outage is nobody's attempt: wait for it without counting towards the dead letter.
    if (!this.publisher.isAvailable()) return false;
    return this.txHost.withTransaction(async () => {
      const batch = await this.outbox.claimDue(this.config.batchSize);
      const noWebhook = await this.outbox.wantedByNoWebhook(batch);
      const results = await this.publisher.publishAll(batch.map((claimed) => claimed.event));
      await this.outbox.markPublished(
        batch.filter((_, i) => results[i].status === 'fulfilled').map((c) => c.id),
        noWebhook,
      );
      for (const [i, result] of results.entries()) {
        if (result.status === 'fulfilled' || this.isOutage(result.reason)) continue;
        this.logger.warn(`publishing event ${batch[i].event.eventId} failed: ${(result.reason as Error)?.message}`);
        await this.outbox.markFailed(batch[i], result.reason, noWebhook.has(batch[i].id));
      }
      return batch.length === this.config.batchSize && results.every((r) => r.status === 'fulfilled');
    });
  }

  /** An outage or a stall is nobody's attempt: the event waits without counting towards the dead letter. */
  private isOutage(reason: unknown): boolean {
    return reason instanceof DestinationUnavailable || !this.publisher.isAvailable();
  }
}
