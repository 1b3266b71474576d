import { DynamicModule, Module, ModuleMetadata, Type } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { TerminusModule } from '@nestjs/terminus';
import { serverConfig } from '../config/server.config';
import { DatabaseOutageCover, DATABASE_OUTAGE_COVER, HealthReport, HEALTH_REPORTS } from './health-reports';
import { HealthController } from './health.controller';
import { MANAGEMENT_READINESS } from '../metrics/management-readiness';
import { Readiness } from './readiness';

export interface HealthParts {
  /** The modules that provide the reports and the cover. */
  imports: NonNullable<ModuleMetadata['imports']>;
  /** Reports no imported module provides, built here. */
  providers?: Type<HealthReport>[];
  reports: Type<HealthReport>[];
  outageCover: Type<DatabaseOutageCover>;
}

/** /health/live and /health/ready (the report on the management port); the features' parts come from where the app is composed (app.module.ts). */
@Module({})
export class HealthModule {
  static forRoot(parts: HealthParts): DynamicModule {
    return {
      module: HealthModule,
      imports: [TerminusModule, ConfigModule.forFeature(serverConfig), ...parts.imports],
      controllers: [HealthController],
      providers: [
        Readiness,
        { provide: MANAGEMENT_READINESS, useExisting: Readiness },
        ...(parts.providers ?? []),
        { provide: HEALTH_REPORTS, useFactory: (...reports: HealthReport[]) => reports, inject: parts.reports },
        { provide: DATABASE_OUTAGE_COVER, useExisting: parts.outageCover },
      ],
      exports: [Readiness, MANAGEMENT_READINESS],
    };
  }
}
