import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { SERVICE_VERSION } from '../lifecycle/service-version';
import { Readiness } from './readiness';

/** The probes on the public port: liveness, and whether this instance is ready, without the report. */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly readiness: Readiness,
  ) {}

  /**
   * Liveness: the process answers. Never checks dependencies, so a database outage restarts nothing.
   * Reports the running version (`info.service.version`), e.g. to follow a rolling update.
   */
  @Get('live')
  @HealthCheck()
  live() {
    return this.health.check([() => this.indicators.check('service').up({ version: SERVICE_VERSION })]);
  }

  /**
   * 200 `{"status":"ok"}` or 503 `{"status":"error"}`, for the kubelet and load balancers; what the
   * spool, the outbox and the database say is on the management port (METRICS_PORT), not here.
   */
  @Get('ready')
  async ready(): Promise<{ status: 'ok' }> {
    if (!(await this.readiness.isReady())) throw new ServiceUnavailableException({ status: 'error' });
    return { status: 'ok' };
  }
}
