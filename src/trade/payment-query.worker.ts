import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { PollingWorker } from '../platform/lifecycle/polling-worker';
import { nextQueryAt, paymentQueryConfig } from '../order/payment-query.config';
import { DueQuery, PaymentOrderRepository } from '../order/payment-order.repository';
import { TransactionRunner } from '../platform/transaction/transaction.runner';
import { TradeQueryService } from './trade-query.service';
import { TradeTargets } from './trade-targets';

/**
 * In every instance: asks the channel about WAIT_PAY orders whose notification never came, at the
 * ages of PAYMENT_QUERY_SCHEDULE_SECONDS. Orders are claimed with SKIP LOCKED and moved to their
 * next age in the same transaction, so each age is asked once across all replicas. Queries run
 * outside any transaction, a few at a time and at a bounded rate, so that a backlog after an
 * outage is worked through without starving the notify path of connections or the channel of quota.
 */
@Injectable()
export class PaymentQueryWorker extends PollingWorker {
  protected readonly logger = new Logger(PaymentQueryWorker.name);

  constructor(
    @Inject(paymentQueryConfig.KEY) private readonly config: ConfigType<typeof paymentQueryConfig>,
    private readonly orders: PaymentOrderRepository,
    private readonly transactions: TransactionRunner,
    private readonly targets: TradeTargets,
    private readonly queries: TradeQueryService,
  ) {
    super();
  }

  protected get intervalMs(): number {
    return this.config.pollIntervalMs;
  }

  private get batchSize(): number {
    return this.config.concurrency * 4;
  }

  protected async pollOnce(): Promise<boolean> {
    const now = new Date();
    const { scheduleSeconds } = this.config;
    const due = await this.transactions.run(() =>
      this.orders.claimDueQueries(now, this.batchSize, (createdAt) => nextQueryAt(scheduleSeconds, createdAt, now)),
    );
    await this.runBounded(due, (order) => this.ask(order));
    return due.length === this.batchSize;
  }

  private async ask(order: DueQuery): Promise<void> {
    for (const target of this.targets.of(order).filter((t) => !t.unavailable)) {
      try {
        const report = await this.queries.queryTrade(order.orderNo, target);
        if (report.applied) return; // paid: the other accounts have nothing more to say
      } catch (error) {
        this.logger.warn(
          `order ${order.orderNo}: query at ${target.channel.channel} failed: ${(error as Error).message}`,
        );
      }
    }
  }

  /** At most `concurrency` at once, and starts spaced to keep under `ratePerSecond`. */
  private async runBounded<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
    const spacingMs = 1000 / this.config.ratePerSecond;
    let next = 0;
    let nextStart = Date.now();
    const lane = async () => {
      while (next < items.length) {
        const item = items[next++];
        const wait = nextStart - Date.now();
        nextStart = Math.max(nextStart, Date.now()) + spacingMs;
        if (wait > 0) await sleep(wait);
        await work(item);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.config.concurrency, items.length) }, lane));
  }
}
