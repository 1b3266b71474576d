import { Inject, Injectable } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { serverConfig } from '../platform/config/server.config';
import { OutboxRepository } from './outbox.repository';
import { RabbitmqConnection } from './rabbitmq/rabbitmq.connection';

/**
 * The event side, reported beside readiness but never part of it: the outbox absorbs a broker
 * outage, so taking the pod out of the load balancer for one would turn it into a payment outage.
 */
@Injectable()
export class EventsHealthIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly rabbitmq: RabbitmqConnection,
    private readonly outbox: OutboxRepository,
    @Inject(serverConfig.KEY) private readonly config: ConfigType<typeof serverConfig>,
  ) {}

  async report(): Promise<HealthIndicatorResult> {
    return { ...this.broker(), ...(await this.backlog()) };
  }

  /** Down while RABBITMQ_URL is set and the connection is lost; events then wait in the outbox. */
  private broker(): HealthIndicatorResult {
    const indicator = this.indicators.check('rabbitmq');
    if (!this.rabbitmq.configured) return indicator.up({ mode: 'embedded (RABBITMQ_URL not set)' });
    return this.rabbitmq.isConnected()
      ? indicator.up({ affectsReadiness: false })
      : indicator.down({ message: 'not connected; events wait in the outbox', affectsReadiness: false });
  }

  /** The backlog is for dashboards and alerts; a query that does not answer in time is reported, not waited for. */
  private async backlog(): Promise<HealthIndicatorResult> {
    const indicator = this.indicators.check('outbox');
    const timeoutMs = this.config.healthCheckTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)));
    try {
      const backlog = await Promise.race([this.outbox.backlog(), timedOut]);
      return backlog ? indicator.up({ ...backlog }) : indicator.down({ message: `no answer within ${timeoutMs} ms` });
    } catch (error) {
      return indicator.down({ message: (error as Error).message });
    } finally {
      clearTimeout(timer);
    }
  }
}
