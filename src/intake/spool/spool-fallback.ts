import { Injectable, Logger } from '@nestjs/common';
import { isDatabaseUnavailable } from '../../platform/database/database-unavailable';
import { VerifiedNotification } from '../../domain/notification';
import { DeliverySpool } from './delivery-spool';

/** The outcome counted for a notification acked from the spool. */
export const SPOOLED = 'SPOOLED';

/**
 * When the database is unavailable (never when it answered: a deadlock, an unknown order, a
 * client's mistake), a verified notification is appended to the spool and fsynced, and only then
 * acked as SPOOLED; SpoolReplayer applies it once the database answers. Without SPOOL_DIR, or with
 * the spool full, the original error stands: a retryable failure, and the platform delivers again.
 */
@Injectable()
export class SpoolFallback {
  private readonly logger = new Logger(SpoolFallback.name);

  constructor(private readonly spool: DeliverySpool) {}

  async spoolOrRethrow(error: unknown, notification: VerifiedNotification, receivedAt: Date): Promise<typeof SPOOLED> {
    if (!this.spool.enabled || !isDatabaseUnavailable(error)) throw error;
    try {
      await this.spool.append({ notification, receivedAt, attempts: 0 });
    } catch (spoolError) {
      this.logger.warn(`not spooled (${(spoolError as Error).message}); answering a retryable failure`);
      throw error;
    }
    return SPOOLED;
  }
}
