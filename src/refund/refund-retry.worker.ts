import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { PollingWorker } from '../platform/lifecycle/polling-worker';
import { refundConfig } from './refund.config';
import { RefundExecutor } from './refund-executor';
import { RefundRepository } from './refund.repository';

const BATCH_SIZE = 20;

/**
 * In every instance: sends again the PENDING refunds whose backoff (or crashed attempt's lease) has
 * run out, and asks the channel about PROCESSING and ABNORMAL ones whose notification has not come.
 */
@Injectable()
export class RefundRetryWorker extends PollingWorker {
  protected readonly logger = new Logger(RefundRetryWorker.name);

  constructor(
    @Inject(refundConfig.KEY) private readonly config: ConfigType<typeof refundConfig>,
    private readonly refunds: RefundRepository,
    private readonly executor: RefundExecutor,
  ) {
    super();
  }

  protected get intervalMs(): number {
    return this.config.pollIntervalMs;
  }

  protected async pollOnce(): Promise<boolean> {
    const due = await this.refunds.due(new Date(), BATCH_SIZE);
    await Promise.all(due.map(({ refundNo, status }) => this.executor.attempt(refundNo, status)));
    return due.length === BATCH_SIZE;
  }
}
