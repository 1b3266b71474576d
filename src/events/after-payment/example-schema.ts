import { join } from 'node:path';
import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { DataSource, DataSourceOptions } from 'typeorm';
import { databaseConfig, DatabaseConfig } from '../../platform/config/database.config';
import { serverDataSourceOptions } from '../../platform/database/data-source-options';
import { applyMigrationsLocked } from '../../platform/database/migration-runner';
import { CouponIssue } from './coupons/coupon-issue.entity';
import { PointsGrant } from './points/points-grant.entity';
import { ShipmentRequest } from './shipping/shipment-request.entity';

/** The example handlers' tables: out of the production schema, created only when EXAMPLE_HANDLERS=true. */
export const EXAMPLE_ENTITIES = [PointsGrant, CouponIssue, ShipmentRequest];

/** The examples' own migration set, with its own history table, so that enabling them later still creates them. */
export async function buildExampleDataSourceOptions(config: DatabaseConfig): Promise<DataSourceOptions> {
  return {
    ...(await serverDataSourceOptions(config)),
    entities: EXAMPLE_ENTITIES,
    migrations: [join(__dirname, 'migrations', '*.{ts,js}')],
    migrationsTableName: 'example_schema_migrations',
  };
}

/** Applies the examples' pending migrations under the service's migration lock; answers their names. */
export async function applyExampleMigrations(config: DatabaseConfig): Promise<string[]> {
  const dataSource = await new DataSource(await buildExampleDataSourceOptions({ ...config, poolSize: 2 })).initialize();
  try {
    return await applyMigrationsLocked(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

/** At start with the examples enabled (and MIGRATIONS_RUN), before any handler runs: their tables. */
@Injectable()
export class ExampleSchema implements OnModuleInit {
  private readonly logger = new Logger(ExampleSchema.name);

  constructor(@Inject(databaseConfig.KEY) private readonly config: ConfigType<typeof databaseConfig>) {}

  async onModuleInit(): Promise<void> {
    if (!this.config.runMigrations) return;
    const applied = await applyExampleMigrations(this.config);
    if (applied.length > 0) this.logger.log(`applied example migrations: ${applied.join(', ')}`);
  }
}
