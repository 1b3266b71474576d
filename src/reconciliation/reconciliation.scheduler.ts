import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { PollingWorker } from '../platform/lifecycle/polling-worker';
import { reconciliationConfig } from './reconciliation.config';
import { billDateOf, shiftBillDate } from '../domain/bill';
import { ReconciliationRepository } from './reconciliation.repository';
import { ReconciliationService } from './reconciliation.service';

const BEIJING_OFFSET_MINUTES = 8 * 60;
/** A bill still missing after this many days is left to an operator (npm run reconcile, the admin API). */
const RETRY_DAYS = 7;

/**
 * In every instance: from RECONCILE_AT (Beijing time) on, makes sure yesterday's run exists for
 * every account, then runs whatever is due: new runs, bills that were not ready or failed (again
 * after RECONCILE_RETRY_SECONDS), runs whose instance died (lease expired). The claim decides
 * which instance runs each; the others skip it.
 */
@Injectable()
export class ReconciliationScheduler extends PollingWorker {
  protected readonly logger = new Logger(ReconciliationScheduler.name);

  constructor(
    @Inject(reconciliationConfig.KEY) private readonly config: ConfigType<typeof reconciliationConfig>,
    private readonly runs: ReconciliationRepository,
    private readonly reconciliation: ReconciliationService,
  ) {
    super();
  }

  protected override get enabled(): boolean {
    return this.config.dailyAtMinute !== undefined;
  }

  protected get intervalMs(): number {
    return this.config.pollIntervalMs;
  }

  protected async pollOnce(): Promise<boolean> {
    const now = new Date();
    const today = billDateOf(now);
    const minuteOfDay = (now.getUTCHours() * 60 + now.getUTCMinutes() + BEIJING_OFFSET_MINUTES) % 1440;
    if (minuteOfDay >= this.config.dailyAtMinute!) {
      for (const { channel, merchantId, subMerchantId } of this.reconciliation.targets()) {
        await this.runs.ensureRun(channel.channel, merchantId, shiftBillDate(today, -1), now, subMerchantId);
      }
    }
    for (const run of await this.runs.dueRuns(now, shiftBillDate(today, -RETRY_DAYS))) {
      await this.reconciliation.run(
        run.channel,
        run.merchantId,
        run.billDate,
        'SCHEDULED',
        undefined,
        run.subMerchantId,
      );
    }
    return false;
  }
}
