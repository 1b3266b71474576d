import { Injectable } from '@nestjs/common';
import { RetentionConfig } from '../../platform/config/retention.config';
import { daysBefore, RetentionTask } from '../../platform/retention/retention-task';
import { RefusedNotificationRepository } from './refused-notification.repository';

/**
 * Deletes refused notifications RETENTION_REFUSED_DAYS after they were first refused, however often
 * they were refused since: repeats need no signature, and must not keep their bytes for ever. A
 * kept one is evidence for an operator, not a record of money; bytes refused again after it was
 * deleted are kept anew, as new ones, within the hour's cap.
 */
@Injectable()
export class RefusedNotificationsRetention implements RetentionTask {
  readonly table = 'refused_notification';

  constructor(private readonly refused: RefusedNotificationRepository) {}

  pruneBatch(now: Date, retention: RetentionConfig): Promise<number> {
    return this.refused.pruneFirstSeenBefore(daysBefore(now, retention.refusedDays), retention.batchSize);
  }
}

/** Deletes the cap's hourly counts older than RETENTION_REFUSED_DAYS: a past hour is never claimed again. */
@Injectable()
export class RefusedHoursRetention implements RetentionTask {
  readonly table = 'refused_notification_hour';

  constructor(private readonly refused: RefusedNotificationRepository) {}

  pruneBatch(now: Date, retention: RetentionConfig): Promise<number> {
    return this.refused.pruneHoursBefore(daysBefore(now, retention.refusedDays), retention.batchSize);
  }
}
