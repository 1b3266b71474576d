import { Injectable, Logger } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter } from 'prom-client';
import { PollingWorker } from '../../platform/lifecycle/polling-worker';
import { isDatabaseUnavailable } from '../../platform/database/database-unavailable';
import { DomainError } from '../../domain/domain-error';
import { VerifiedNotification } from '../../domain/notification';
import { SPOOL_REPLAYED } from '../../settlement/settlement-metrics';
import { Settlement } from '../../settlement/settlement.service';
import { DeliverySpool } from './delivery-spool';
import { SpooledDelivery } from './spool-record';

const POLL_INTERVAL_MS = 1000;
const BATCH = 100;
const PARKED_BASE_DELAY_MS = 5000;
const PARKED_MAX_DELAY_MS = 10 * 60 * 1000;

type Replay = 'APPLIED' | 'NOT_YET' | 'DATABASE_UNAVAILABLE';

/**
 * In the instance that owns the spool: once the database answers, applies each spooled delivery
 * through the settlement use case (one transaction, then the delivery log with its outcome, the
 * count and the log line), and only then moves the spool past it. A platform retry of
 * the same payment meets the same dedup key, so the two apply once; a replay repeated after a
 * crash is a DUPLICATE. A delivery that cannot be applied yet (OrderNotFound: it was acked, the
 * platform will not send it again) is parked and retried with backoff, never dropped.
 */
@Injectable()
export class SpoolReplayer extends PollingWorker {
  protected readonly logger = new Logger(SpoolReplayer.name);
  private databaseAway = false;
  /** Replayed since the spool was last found empty, for the log line when it is again. */
  private run = { replayed: 0, since: 0 };

  constructor(
    private readonly spool: DeliverySpool,
    private readonly settlement: Settlement,
    @InjectMetric(SPOOL_REPLAYED) private readonly replayed: Counter<string>,
  ) {
    super();
  }

  protected override get enabled(): boolean {
    return this.spool.enabled;
  }

  protected get intervalMs(): number {
    return POLL_INTERVAL_MS;
  }

  protected async pollOnce(): Promise<boolean> {
    try {
      return (await this.replayDueParked()) && (await this.replayPending());
    } finally {
      this.spool.publishMetrics();
    }
  }

  private async replayDueParked(): Promise<boolean> {
    for (const entry of this.spool.dueParked(new Date(), BATCH)) {
      const replay = await this.replay(entry.delivery);
      if (replay === 'DATABASE_UNAVAILABLE') return false;
      if (replay === 'APPLIED') await this.spool.unpark(entry);
      else await this.spool.reschedule(entry, retryAt(entry.delivery.attempts + 1));
    }
    return true;
  }

  /** True when a full batch was replayed: there may be more right away. */
  private async replayPending(): Promise<boolean> {
    for (let i = 0; i < BATCH; i++) {
      const head = await this.spool.head();
      if (!head) {
        this.logDrained();
        return false;
      }
      const replay = await this.replay(head.delivery);
      if (replay === 'DATABASE_UNAVAILABLE') return false;
      if (replay === 'APPLIED') await this.spool.consumed(head);
      else await this.spool.parkHead(head, retryAt(head.delivery.attempts + 1));
      if (this.run.replayed++ === 0) this.run.since = Date.now();
    }
    return true;
  }

  private logDrained(): void {
    if (this.run.replayed === 0) return;
    const seconds = (Date.now() - this.run.since) / 1000;
    this.logger.log(`spool drained: ${this.run.replayed} deliveries replayed in ${seconds.toFixed(1)} s`);
    this.run = { replayed: 0, since: 0 };
  }

  private async replay({ notification, receivedAt, attempts }: SpooledDelivery): Promise<Replay> {
    try {
      await this.settlement.settle(notification, { source: 'SPOOL', receivedAt });
      this.databaseAnswers();
      return 'APPLIED';
    } catch (error) {
      if (isDatabaseUnavailable(error)) {
        this.databaseUnavailable(error as Error);
        return 'DATABASE_UNAVAILABLE';
      }
      this.replayed.inc({ channel: notification.channel, outcome: 'PARKED' });
      const reason = error instanceof DomainError ? `${error.code}: ${error.message}` : (error as Error).message;
      const delaySeconds = retryDelayMs(attempts + 1) / 1000;
      this.logger.warn(
        `spooled ${describe(notification)} not applied (${reason}); parked, next attempt in ${delaySeconds} s`,
      );
      return 'NOT_YET';
    }
  }

  private databaseUnavailable(error: Error): void {
    if (this.databaseAway) return;
    this.databaseAway = true;
    const { pending, parked } = this.spool.stats();
    this.logger.warn(`database unavailable (${error.message}); ${pending} spooled deliveries wait (${parked} parked)`);
  }

  private databaseAnswers(): void {
    if (!this.databaseAway) return;
    this.databaseAway = false;
    this.logger.log('database answers again; replaying the spool');
  }
}

/** Exponential backoff: 5 s after the first miss, doubling up to 10 minutes. */
function retryDelayMs(attempts: number): number {
  return Math.min(PARKED_MAX_DELAY_MS, PARKED_BASE_DELAY_MS * 2 ** Math.min(attempts - 1, 20));
}

function retryAt(attempts: number): Date {
  return new Date(Date.now() + retryDelayMs(attempts));
}

function describe(n: VerifiedNotification): string {
  return `${n.channel} ${n.eventType} (transaction ${n.transactionId ?? '-'}, order ${n.outTradeNo ?? '-'})`;
}
