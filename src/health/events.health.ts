import { Injectable } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { OutboxRepository } from '../events/outbox.repository';
import { RabbitmqConnection } from '../rabbitmq/rabbitmq.connection';

@Injectable()
export class EventsHealthIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly rabbitmq: RabbitmqConnection,
    private readonly outbox: OutboxRepository,
  ) {}

  /** Down while RABBITMQ_URL is set and the connection is lost; events then wait in the outbox. */
  broker(): HealthIndicatorResult {
    const indicator = this.indicators.check('rabbitmq');
    if (!this.rabbitmq.configured) return indicator.up({ mode: 'embedded (RABBITMQ_URL not set)' });
    return this.rabbitmq.isConnected() ? indicator.up() : indicator.down({ message: 'not connected' });
  }

  /**
   * Always up: the backlog is information for dashboards and alerts, not a reason to stop traffic.
   * Unknown while the database is away (the database check says so), without hiding the other details.
   */
  async backlog(): Promise<HealthIndicatorResult> {
    const indicator = this.indicators.check('outbox');
    try {
      return indicator.up({ ...(await this.outbox.backlog()) });
    } catch (error) {
      return indicator.up({ backlog: `unknown: ${(error as Error).message}` });
    }
  }
}
