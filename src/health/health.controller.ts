import { Controller, Get, Inject, ServiceUnavailableException } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import {
  HealthCheck,
  HealthCheckResult,
  HealthCheckService,
  HealthIndicatorResult,
  HealthIndicatorService,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { serverConfig } from '../config/server.config';
import { ShutdownState } from '../lifecycle/shutdown-state';
import { SpoolHealthIndicator } from '../spool/spool.health';
import { EventsHealthIndicator } from './events.health';

@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly events: EventsHealthIndicator,
    private readonly shutdown: ShutdownState,
    @Inject(serverConfig.KEY) private readonly config: ConfigType<typeof serverConfig>,
    private readonly spool: SpoolHealthIndicator,
  ) {}

  /** Liveness: the process answers. Never checks dependencies, so a database outage restarts nothing. */
  @Get('live')
  @HealthCheck()
  live() {
    return this.health.check([]);
  }

  /**
   * Readiness: the database answers within HEALTH_CHECK_TIMEOUT_MS, and this instance is not
   * stopping. The broker, the outbox backlog and the spool are reported beside it, never decisive.
   */
  @Get('ready')
  @HealthCheck()
  async ready(): Promise<HealthCheckResult> {
    // Both bounded by HEALTH_CHECK_TIMEOUT_MS, and run side by side.
    const reported = this.events.report().then((events) => ({ ...events, ...this.spool.report() }));
    try {
      return withDetails(await this.health.check(this.readinessChecks()), await reported);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      throw new ServiceUnavailableException(withDetails(error.getResponse() as HealthCheckResult, await reported));
    }
  }

  private readinessChecks(): Array<() => Promise<HealthIndicatorResult> | HealthIndicatorResult> {
    const checks = [() => this.database.pingCheck('database', { timeout: this.config.healthCheckTimeoutMs })];
    if (!this.shutdown.draining) return checks;
    return [() => this.indicators.check('shutdown').down({ message: 'this instance is stopping' }), ...checks];
  }
}

function withDetails(result: HealthCheckResult, extra: HealthIndicatorResult): HealthCheckResult {
  return { ...result, details: { ...result.details, ...extra } };
}
