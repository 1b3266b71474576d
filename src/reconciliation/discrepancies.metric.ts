import { Injectable } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Gauge } from 'prom-client';
import { RECONCILIATION_DISCREPANCIES } from '../platform/metrics/metrics.module';
import { GaugeSample, ScrapeTimeGauge } from '../platform/metrics/scrape-time-gauge';
import { DISCREPANCIES } from './reconciliation-item.entity';
import { ReconciliationRepository } from './reconciliation.repository';

/**
 * The reconciliation_discrepancies gauge: per account, the discrepancies of its latest completed
 * run, whichever instance ran it.
 */
@Injectable()
export class DiscrepanciesMetric extends ScrapeTimeGauge {
  constructor(
    @InjectMetric(RECONCILIATION_DISCREPANCIES) gauge: Gauge<string>,
    private readonly runs: ReconciliationRepository,
  ) {
    super(gauge);
  }

  protected async read(): Promise<GaugeSample[]> {
    const latest = await this.runs.latestCompletedCounts();
    // A sub-merchant's bill is its provider's account and its own: merchant_id "sp/sub".
    return latest.flatMap(({ channel, merchantId, subMerchantId, counts }) =>
      DISCREPANCIES.map((outcome): GaugeSample => [
        { channel, merchant_id: subMerchantId ? `${merchantId}/${subMerchantId}` : merchantId, outcome },
        counts[outcome] ?? 0,
      ]),
    );
  }
}
