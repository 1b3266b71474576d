import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter } from 'prom-client';
import { PollingWorker } from '../lifecycle/polling-worker';
import { retentionConfig } from '../config/retention.config';
import { RETENTION_PRUNED_TOTAL } from '../metrics/metrics.module';
import { RetentionPruner } from './retention-pruner';

/** In every instance: prunes what has outlived its retention, one batch per table a round, pausing between rounds. */
@Injectable()
export class RetentionWorker extends PollingWorker {
  protected readonly logger = new Logger(RetentionWorker.name);

  constructor(
    private readonly pruner: RetentionPruner,
    @Inject(retentionConfig.KEY) private readonly config: ConfigType<typeof retentionConfig>,
    @InjectMetric(RETENTION_PRUNED_TOTAL) private readonly prunedTotal: Counter<'table'>,
  ) {
    super();
  }

  protected get intervalMs(): number {
    return this.config.intervalMs;
  }

  protected override get busyDelayMs(): number {
    return this.config.batchPauseMs;
  }

  protected async pollOnce(): Promise<boolean> {
    const counts = await this.pruner.pruneBatch();
    let full = false;
    for (const [table, n] of Object.entries(counts)) {
      if (n > 0) this.prunedTotal.inc({ table }, n);
      full ||= n === this.config.batchSize;
    }
    return full;
  }
}
