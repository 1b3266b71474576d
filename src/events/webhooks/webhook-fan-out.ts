import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { PollingWorker } from '../../platform/lifecycle/polling-worker';
import { webhooksConfig } from './webhooks.config';
import { WebhookDeliveries } from './webhook-deliveries.repository';

const BATCH_SIZE = 100;

/**
 * Turns committed outbox events into webhook deliveries, in every instance, independently of the
 * RabbitMQ or in-process publishing of the same events: no endpoint can hold up the broker, and
 * webhooks need no broker.
 */
@Injectable()
export class WebhookFanOut extends PollingWorker {
  protected readonly logger = new Logger(WebhookFanOut.name);

  constructor(
    private readonly deliveries: WebhookDeliveries,
    @Inject(webhooksConfig.KEY) private readonly config: ConfigType<typeof webhooksConfig>,
  ) {
    super();
  }

  protected get intervalMs(): number {
    return this.config.pollIntervalMs;
  }

  protected async pollOnce(): Promise<boolean> {
    return (await this.deliveries.fanOut(BATCH_SIZE)) === BATCH_SIZE;
  }
}
