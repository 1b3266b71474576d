import { Inject, Injectable, ServiceUnavailableException } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import {
  HealthCheckResult,
  HealthCheckService,
  HealthIndicatorResult,
  HealthIndicatorService,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { serverConfig } from '../config/server.config';
import { ShutdownState } from '../lifecycle/shutdown-state';
import { DatabaseOutageCover, DATABASE_OUTAGE_COVER, HealthReport, HEALTH_REPORTS } from './health-reports';

export interface ReadinessReport {
  ready: boolean;
  /** Terminus' result, with the features' reports (spool, outbox, broker, database) among its details. */
  report: HealthCheckResult;
}

/**
 * Readiness: the database answers within HEALTH_CHECK_TIMEOUT_MS, and this instance is not
 * stopping. With a spool that has room, the database is reported but not decisive: the spool
 * acks what the database cannot take, so the pod keeps its traffic through an outage (otherwise
 * every pod turns unready at once and the spool takes nothing). The broker and the outbox
 * backlog are reported beside it, never decisive. The public port says only whether it is
 * ready; the report is the management port's.
 */
@Injectable()
export class Readiness {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly shutdown: ShutdownState,
    @Inject(serverConfig.KEY) private readonly config: ConfigType<typeof serverConfig>,
    @Inject(HEALTH_REPORTS) private readonly reports: HealthReport[],
    @Inject(DATABASE_OUTAGE_COVER) private readonly outageCover: DatabaseOutageCover,
  ) {}

  /** Only what decides readiness: nothing else is read. */
  async isReady(): Promise<boolean> {
    try {
      await this.health.check(this.readinessChecks(this.outageCover.hasRoom));
      return true;
    } catch (error) {
      if (error instanceof ServiceUnavailableException) return false;
      throw error;
    }
  }

  async report(): Promise<ReadinessReport> {
    const spooling = this.outageCover.hasRoom;
    // All bounded by HEALTH_CHECK_TIMEOUT_MS, and run side by side.
    const reported = Promise.all([
      ...this.reports.map((r) => r.report()),
      spooling ? this.databaseReported() : {},
    ]).then((results) => Object.assign({}, ...results) as HealthIndicatorResult);
    try {
      return {
        ready: true,
        report: withDetails(await this.health.check(this.readinessChecks(spooling)), await reported),
      };
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      return { ready: false, report: withDetails(error.getResponse() as HealthCheckResult, await reported) };
    }
  }

  private readinessChecks(spooling: boolean): Array<() => Promise<HealthIndicatorResult> | HealthIndicatorResult> {
    const checks = spooling ? [] : [() => this.pingDatabase()];
    if (!this.shutdown.draining) return checks;
    return [() => this.indicators.check('shutdown').down({ message: 'this instance is stopping' }), ...checks];
  }

  private async pingDatabase(): Promise<HealthIndicatorResult> {
    return await this.database.pingCheck('database', { timeout: this.config.healthCheckTimeoutMs });
  }

  private async databaseReported(): Promise<HealthIndicatorResult> {
    const { database } = await this.pingDatabase();
    return { database: { ...database, affectsReadiness: false } };
  }
}

function withDetails(result: HealthCheckResult, extra: HealthIndicatorResult): HealthCheckResult {
  return { ...result, details: { ...result.details, ...extra } };
}
