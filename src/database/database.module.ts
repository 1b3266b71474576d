import { Global, Module } from '@nestjs/common';
import { ConfigModule, ConfigType } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { databaseConfig } from '../config/database.config';
import { BoundedPool } from './bounded-pool';
import { buildDataSourceOptions } from './data-source-options';
import { MigrationRunner } from './migration-runner';
import { ReadCommittedSessions } from './read-committed-sessions';
import { StatementBatch } from './statement-batch';

/** Global: StatementBatch serves every repository that batches writes, like the DataSource does. */
@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      imports: [ConfigModule.forFeature(databaseConfig)],
      inject: [databaseConfig.KEY],
      useFactory: (config: ConfigType<typeof databaseConfig>) => ({
        ...buildDataSourceOptions(config),
        retryAttempts: 3,
        retryDelay: 1000,
      }),
    }),
    ConfigModule.forFeature(databaseConfig),
  ],
  providers: [BoundedPool, ReadCommittedSessions, MigrationRunner, StatementBatch],
  exports: [StatementBatch],
})
export class DatabaseModule {}
