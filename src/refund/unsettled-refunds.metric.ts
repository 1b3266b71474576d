import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Gauge } from 'prom-client';
import { refundConfig } from '../config/refund.config';
import { REFUNDS_UNSETTLED } from '../metrics/metrics.module';
import { RefundRepository } from './refund.repository';

/**
 * The refunds_unsettled gauge, counted in the database when Prometheus scrapes: the refunds no
 * instance can settle by itself, whichever instance is asked. An alert on it sends a person to the
 * admin list (GET /admin/refunds).
 */
@Injectable()
export class UnsettledRefundsMetric implements OnModuleInit, OnModuleDestroy {
  /** The gauge is one per process, the apps using it may be several (tests): the latest one still running counts. */
  private static readonly running: UnsettledRefundsMetric[] = [];
  private readonly logger = new Logger(UnsettledRefundsMetric.name);

  constructor(
    @InjectMetric(REFUNDS_UNSETTLED) private readonly gauge: Gauge<string>,
    @Inject(refundConfig.KEY) private readonly config: ConfigType<typeof refundConfig>,
    private readonly refunds: RefundRepository,
  ) {}

  onModuleInit(): void {
    const { running } = UnsettledRefundsMetric;
    running.push(this);
    Object.assign(this.gauge, { collect: () => running.at(-1)?.count() });
  }

  onModuleDestroy(): void {
    const { running } = UnsettledRefundsMetric;
    running.splice(running.indexOf(this), 1);
  }

  private async count(): Promise<void> {
    let rows: Awaited<ReturnType<RefundRepository['countUnsettled']>> = [];
    try {
      const openSince = new Date(Date.now() - this.config.processingMaxAgeSeconds * 1000);
      rows = await this.refunds.countUnsettled(openSince);
    } catch (error) {
      // A scrape must not fail for it: the gauge is left out of this one, as the database gauges are.
      this.logger.warn(`counting unsettled refunds failed: ${(error as Error).message}`);
    }
    this.gauge.reset();
    for (const { channel, status, n } of rows) this.gauge.set({ channel, status }, n);
  }
}
