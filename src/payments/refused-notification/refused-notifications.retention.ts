import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { RetentionConfig } from '../../platform/config/retention.config';
import { WriteResult } from '../../platform/database/sql';
import { daysBefore, RetentionTask } from '../../platform/retention/retention-task';

/**
 * Deletes refused notifications RETENTION_REFUSED_DAYS after they were first refused, however often
 * they were refused since: repeats need no signature, and must not keep their bytes for ever. A
 * kept one is evidence for an operator, not a record of money; bytes refused again after it was
 * deleted are kept anew, as new ones, within the hour's cap.
 */
@Injectable()
export class RefusedNotificationsRetention implements RetentionTask {
  readonly table = 'refused_notification';

  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  async pruneBatch(now: Date, retention: RetentionConfig): Promise<number> {
    const horizon = daysBefore(now, retention.refusedDays);
    const rows: Array<{ id: string }> = await this.txHost.tx.query(
      'SELECT id FROM refused_notification WHERE first_seen_at < ? ORDER BY first_seen_at LIMIT ?',
      [horizon, retention.batchSize],
    );
    if (rows.length === 0) return 0;
    const result: WriteResult = await this.txHost.tx.query(
      'DELETE FROM refused_notification WHERE id IN (?) AND first_seen_at < ?',
      [rows.map((r) => String(r.id)), horizon],
    );
    return result.affectedRows;
  }
}

/** Deletes the cap's hourly counts older than RETENTION_REFUSED_DAYS: a past hour is never claimed again. */
@Injectable()
export class RefusedHoursRetention implements RetentionTask {
  readonly table = 'refused_notification_hour';

  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  async pruneBatch(now: Date, retention: RetentionConfig): Promise<number> {
    const result: WriteResult = await this.txHost.tx.query(
      'DELETE FROM refused_notification_hour WHERE hour < ? ORDER BY hour LIMIT ?',
      [daysBefore(now, retention.refusedDays), retention.batchSize],
    );
    return result.affectedRows;
  }
}
