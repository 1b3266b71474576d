import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { RetentionConfig } from '../platform/config/retention.config';
import { daysBefore, RetentionTask } from '../platform/retention/retention-task';
import { OutboxRepository } from './outbox.repository';

/**
 * Deletes events published RETENTION_EVENTS_DAYS ago whose webhook deliveries are written (they
 * carry their own copy of the body); unpublished and dead-lettered ones stay whatever their age.
 */
@Injectable()
export class PublishedEventsRetention implements RetentionTask {
  readonly table = 'outbox_event';

  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly outbox: OutboxRepository,
  ) {}

  pruneBatch(now: Date, retention: RetentionConfig): Promise<number> {
    return this.txHost.withTransaction(() =>
      this.outbox.prunePublishedBefore(daysBefore(now, retention.eventsDays), retention.batchSize),
    );
  }
}
