import { DynamicModule, Global, Module } from '@nestjs/common';
import { ConfigModule, ConfigType } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { databaseConfig } from '../config/database.config';
import { spoolConfig } from '../config/spool.config';
import { beginWithFirstStatement } from './begin-with-first-statement';
import { BoundedPool } from './bounded-pool';
import { ClusterSettingsCheck } from './cluster-settings';
import { POOL_WAIT_METRICS } from './pool-wait-metrics';
import { EntityList, serverDataSourceOptions } from './data-source-options';
import { MigrationRunner } from './migration-runner';
import { ReadCommittedSessions } from './read-committed-sessions';
import { ReportingDatabase } from './reporting-database';
import { initializeWithoutWaiting } from './start-without-database';

/**
 * Global: ReportingDatabase serves every module, like the DataSource does.
 * `forRoot` takes the entities from where the app is composed, so that the platform names no feature.
 */
@Global()
@Module({})
export class DatabaseModule {
  static forRoot(entities: EntityList): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          imports: [ConfigModule.forFeature(databaseConfig), ConfigModule.forFeature(spoolConfig)],
          inject: [databaseConfig.KEY, spoolConfig.KEY],
          useFactory: async (config: ConfigType<typeof databaseConfig>, spool: ConfigType<typeof spoolConfig>) => ({
            ...(await serverDataSourceOptions(config, entities)),
            retryAttempts: 3,
            retryDelay: 1000,
            // With a spool, the service starts while the database is away (start-without-database.ts).
            manualInitialization: spool.dir !== undefined,
          }),
          dataSourceFactory: async (options) => {
            const dataSource = beginWithFirstStatement(new DataSource(options!));
            const spooling = (options as { manualInitialization?: boolean }).manualInitialization === true;
            return spooling ? initializeWithoutWaiting(dataSource) : dataSource;
          },
        }),
        ConfigModule.forFeature(databaseConfig),
      ],
      providers: [
        BoundedPool,
        ...POOL_WAIT_METRICS,
        ReadCommittedSessions,
        ClusterSettingsCheck,
        MigrationRunner,
        ReportingDatabase,
      ],
      exports: [ReportingDatabase],
    };
  }
}
