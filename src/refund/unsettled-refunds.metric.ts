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
  private readonly logger = new Logger(UnsettledRefundsMetric.name);
  private readonly collect = () => this.count();

  constructor(
    @InjectMetric(REFUNDS_UNSETTLED) private readonly gauge: Gauge<string>,
    @Inject(refundConfig.KEY) private readonly config: ConfigType<typeof refundConfig>,
    private readonly refunds: RefundRepository,
  ) {}

  onModuleInit(): void {
    Object.assign(this.gauge, { collect: this.collect });
  }

  onModuleDestroy(): void {
    // The gauge is per process; another app in the same process (tests) may have taken it over.
    if ((this.gauge as { collect?: unknown }).collect === this.collect) Object.assign(this.gauge, { collect: undefined });
  }

  private async count(): Promise<void> {
    try {
      const openSince = new Date(Date.now() - this.config.processingMaxAgeSeconds * 1000);
      const rows = await this.refunds.countUnsettled(openSince);
      this.gauge.reset();
      for (const { channel, status, n } of rows) this.gauge.set({ channel, status }, n);
    } catch (error) {
      // A scrape must not fail for it: the gauge keeps its last value.
      this.logger.warn(`counting unsettled refunds failed: ${(error as Error).message}`);
    }
  }
}
