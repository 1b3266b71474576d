import { Injectable } from '@nestjs/common';
import { RetentionConfig } from '../../platform/config/retention.config';
import { daysBefore, RetentionTask } from '../../platform/retention/retention-task';
import { ProcessedEventRepository } from './processed-event.repository';

/**
 * Deletes consumers' dedup rows older than RETENTION_EVENTS_DAYS whose event is no longer in the
 * outbox, so that nothing can deliver the event again: it runs after PublishedEventsRetention.
 */
@Injectable()
export class ProcessedEventsRetention implements RetentionTask {
  readonly table = 'processed_event';

  constructor(private readonly processed: ProcessedEventRepository) {}

  pruneBatch(now: Date, retention: RetentionConfig): Promise<number> {
    return this.processed.pruneProcessedBefore(daysBefore(now, retention.eventsDays), retention.batchSize);
  }
}
