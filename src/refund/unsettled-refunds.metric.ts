import { Inject, Injectable } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Gauge } from 'prom-client';
import { refundConfig } from './refund.config';
import { REFUNDS_UNSETTLED } from '../platform/metrics/metrics.module';
import { GaugeSample, ScrapeTimeGauge } from '../platform/metrics/scrape-time-gauge';
import { RefundRepository } from './refund.repository';

/**
 * The refunds_unsettled gauge: the refunds no instance can settle by itself, whichever instance is
 * asked. An alert on it sends a person to the admin list (GET /admin/refunds).
 */
@Injectable()
export class UnsettledRefundsMetric extends ScrapeTimeGauge {
  constructor(
    @InjectMetric(REFUNDS_UNSETTLED) gauge: Gauge<string>,
    @Inject(refundConfig.KEY) private readonly config: ConfigType<typeof refundConfig>,
    private readonly refunds: RefundRepository,
  ) {
    super(gauge);
  }

  protected async read(): Promise<GaugeSample[]> {
    const openSince = new Date(Date.now() - this.config.processingMaxAgeSeconds * 1000);
    const rows = await this.refunds.countUnsettled(openSince);
    return rows.map(({ channel, status, n }) => [{ channel, status }, n]);
  }
}
