import { Inject, Injectable } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { eventsConfig, retryDelayMs } from '../events.config';
import { PaymentEvent } from '../payment-events';
import { HandlerRetry } from './handler-retry.entity';

@Injectable()
export class HandlerRetryRepository {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    @Inject(eventsConfig.KEY) private readonly config: ConfigType<typeof eventsConfig>,
  ) {}

  /** The first failure of `consumer` on `event`; a redelivery that fails again counts as one more attempt. */
  async recordFailure(consumer: string, event: PaymentEvent, error: unknown): Promise<void> {
    const now = new Date();
    const next = new Date(now.getTime() + retryDelayMs(this.config, 1));
    const max = this.config.handlerMaxAttempts;
    // ODKU assignments run left to right: `attempts` in the later ones is already the new count.
    await this.txHost.tx.query(
      `INSERT INTO handler_retry (consumer, event_id, payload, attempts, next_attempt_at, last_error, dead_lettered_at, created_at)
       VALUES (?, ?, ?, 1, ?, ?, IF(1 >= ?, ?, NULL), ?)
       ON DUPLICATE KEY UPDATE attempts = attempts + 1, last_error = VALUES(last_error),
         next_attempt_at = VALUES(next_attempt_at), dead_lettered_at = IF(attempts >= ?, COALESCE(dead_lettered_at, ?), NULL)`,
      [consumer, event.eventId, JSON.stringify(event), next, errorText(error), max, now, now, max, now],
    );
  }

  /** Due retries, locked for this worker; other instances skip them. */
  async claimDue(limit: number): Promise<HandlerRetry[]> {
    return this.txHost.tx
      .getRepository(HandlerRetry)
      .createQueryBuilder('r')
      .where('r.dead_lettered_at IS NULL AND r.next_attempt_at <= :now', { now: new Date() })
      .orderBy('r.next_attempt_at')
      .limit(limit)
      .setLock('pessimistic_write')
      .setOnLocked('skip_locked')
      .getMany();
  }

  async resolve(retry: HandlerRetry): Promise<void> {
    await this.txHost.tx.query('DELETE FROM handler_retry WHERE id = ?', [retry.id]);
  }

  async recordAnotherFailure(retry: HandlerRetry, error: unknown): Promise<void> {
    const attempts = retry.attempts + 1;
    const now = new Date();
    const deadLettered = attempts >= this.config.handlerMaxAttempts;
    await this.txHost.tx.query(
      `UPDATE handler_retry SET attempts = ?, last_error = ?, next_attempt_at = ?, dead_lettered_at = ? WHERE id = ?`,
      [
        attempts,
        errorText(error),
        new Date(now.getTime() + retryDelayMs(this.config, attempts)),
        deadLettered ? now : null,
        retry.id,
      ],
    );
  }
}

export function errorText(error: unknown): string {
  return (error instanceof Error ? `${error.name}: ${error.message}` : String(error)).slice(0, 500);
}
