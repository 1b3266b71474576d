import { HealthIndicatorResult } from '@nestjs/terminus';

/** A feature's part of /health/ready: shown beside readiness, never deciding it (the events, the spool). */
export interface HealthReport {
  report(): Promise<HealthIndicatorResult> | HealthIndicatorResult;
}

/** What takes notifications while the database is away (a spool with room): the database then leaves readiness. */
export interface DatabaseOutageCover {
  readonly hasRoom: boolean;
}

export const HEALTH_REPORTS = Symbol('HEALTH_REPORTS');
export const DATABASE_OUTAGE_COVER = Symbol('DATABASE_OUTAGE_COVER');
