import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Gauge } from 'prom-client';
import { RECONCILIATION_DISCREPANCIES } from '../metrics/metrics.module';
import { DISCREPANCIES } from './reconciliation-item.entity';
import { LatestCounts, ReconciliationRepository } from './reconciliation.repository';

/**
 * The reconciliation_discrepancies gauge, read from the database when Prometheus scrapes: per
 * account, the discrepancies of its latest completed run, whichever instance ran it, so that every
 * replica reports the same figures and a restart loses none.
 */
@Injectable()
export class DiscrepanciesMetric implements OnModuleInit, OnModuleDestroy {
  /** The gauge is one per process, the apps using it may be several (tests): the latest one still running reads it. */
  private static readonly running: DiscrepanciesMetric[] = [];
  private readonly logger = new Logger(DiscrepanciesMetric.name);

  constructor(
    @InjectMetric(RECONCILIATION_DISCREPANCIES) private readonly gauge: Gauge<string>,
    private readonly runs: ReconciliationRepository,
  ) {}

  onModuleInit(): void {
    const { running } = DiscrepanciesMetric;
    running.push(this);
    Object.assign(this.gauge, { collect: () => running.at(-1)?.read() });
  }

  onModuleDestroy(): void {
    const { running } = DiscrepanciesMetric;
    running.splice(running.indexOf(this), 1);
  }

  private async read(): Promise<void> {
    let latest: LatestCounts[] = [];
    try {
      latest = await this.runs.latestCompletedCounts();
    } catch (error) {
      // A scrape must not fail for it: the gauge is left out of this one, as the database gauges are.
      this.logger.warn(`reading the latest reconciliations failed: ${(error as Error).message}`);
    }
    this.gauge.reset();
    for (const { channel, merchantId, counts } of latest) {
      for (const outcome of DISCREPANCIES) {
        this.gauge.set({ channel, merchant_id: merchantId, outcome }, counts[outcome] ?? 0);
      }
    }
  }
}
