import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { SpoolHealthIndicator } from '../spool/spool.health';
import { EventsHealthIndicator } from './events.health';

@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly events: EventsHealthIndicator,
    private readonly spool: SpoolHealthIndicator,
  ) {}

  /** Liveness: the process answers. Never checks dependencies, so a database outage restarts nothing. */
  @Get('live')
  @HealthCheck()
  live() {
    return this.health.check([]);
  }

  /** Readiness: the database answers and, when configured, the broker is connected; plus the outbox backlog and the spool. */
  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([
      () => this.database.pingCheck('database', { timeout: 1500 }),
      () => this.events.broker(),
      () => this.events.backlog(),
      () => this.spool.report(),
    ]);
  }
}
