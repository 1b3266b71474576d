import { Injectable, Logger } from '@nestjs/common';
import { isDatabaseUnavailable } from '../../platform/database/database-unavailable';
import { VerifiedNotification } from '../../domain/notification';
import { DeliverySpool } from './delivery-spool';

/** The outcome counted for a notification acked from the spool. */
export const SPOOLED = 'SPOOLED';

/** How many spooled sendings' replay keys are remembered; the oldest are forgotten first. */
const REMEMBERED_SENDINGS = 100_000;

/**
 * When the database is unavailable (never when it answered: a deadlock, an unknown order, a
 * client's mistake), a verified notification is appended to the spool and fsynced, and only then
 * acked as SPOOLED; SpoolReplayer applies it once the database answers. Without SPOOL_DIR, or with
 * the spool full, the original error stands: a retryable failure, and the platform delivers again.
 */
@Injectable()
export class SpoolFallback {
  private readonly logger = new Logger(SpoolFallback.name);

  /**
   * The replay keys of sendings spooled by this instance: while the database is away the unique
   * replay key cannot refuse a captured sending posted again, so the spool does, instead of
   * growing with each copy. Its first copy is on disk and will be applied; the others are acked.
   */
  private readonly spooledSendings = new Set<string>();

  constructor(private readonly spool: DeliverySpool) {}

  async spoolOrRethrow(error: unknown, notification: VerifiedNotification, receivedAt: Date): Promise<typeof SPOOLED> {
    if (!this.spool.enabled || !isDatabaseUnavailable(error)) throw error;
    if (notification.replayKey !== undefined && this.spooledSendings.has(notification.replayKey)) return SPOOLED;
    try {
      await this.spool.append({ notification, receivedAt, attempts: 0 });
    } catch (spoolError) {
      this.logger.warn(`not spooled (${(spoolError as Error).message}); answering a retryable failure`);
      throw error;
    }
    this.remember(notification.replayKey);
    return SPOOLED;
  }

  private remember(replayKey: string | undefined): void {
    if (replayKey === undefined) return;
    this.spooledSendings.add(replayKey);
    if (this.spooledSendings.size > REMEMBERED_SENDINGS) {
      this.spooledSendings.delete(this.spooledSendings.values().next().value as string);
    }
  }
}
