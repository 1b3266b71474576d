import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { PollingWorker } from '../../platform/lifecycle/polling-worker';
import { eventsConfig } from '../events.config';
import { PaymentEvent } from '../payment-events';
import { HandlerRetryRepository } from './handler-retry.repository';
import { HandlerRunner } from './handler-runner';
import { SubscriberRegistry } from './subscriber-registry';

/** Runs failed handlers again when their backoff has passed; several instances share the rows via SKIP LOCKED. */
@Injectable()
export class HandlerRetryWorker extends PollingWorker {
  protected readonly logger = new Logger(HandlerRetryWorker.name);

  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly retries: HandlerRetryRepository,
    private readonly runner: HandlerRunner,
    private readonly registry: SubscriberRegistry,
    @Inject(eventsConfig.KEY) private readonly config: ConfigType<typeof eventsConfig>,
  ) {
    super();
  }

  protected get intervalMs(): number {
    return this.config.pollIntervalMs;
  }

  protected override get enabled(): boolean {
    return this.registry.all().length > 0;
  }

  protected pollOnce(): Promise<boolean> {
    return this.txHost.withTransaction(async () => {
      const due = await this.retries.claimDue(this.config.batchSize);
      for (const retry of due) {
        const subscriber = this.registry.byConsumer(retry.consumer);
        try {
          if (!subscriber) throw new Error(`no handler named ${retry.consumer} in this build`);
          await this.runner.run(subscriber, retry.payload as unknown as PaymentEvent);
          await this.retries.resolve(retry);
        } catch (error) {
          this.logger.warn(
            `${retry.consumer} failed again on ${retry.eventId} (attempt ${retry.attempts + 1}): ${(error as Error).message}`,
          );
          await this.retries.recordAnotherFailure(retry, error);
        }
      }
      return due.length === this.config.batchSize;
    });
  }
}
