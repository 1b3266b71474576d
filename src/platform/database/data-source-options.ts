import { join } from 'node:path';
import { DataSourceOptions } from 'typeorm';
import { DatabaseConfig } from '../config/database.config';

export type EntityList = NonNullable<DataSourceOptions['entities']>;

/**
 * The one place the TypeORM options are built: the app, the migration CLI (ormconfig.ts) and tests use it.
 * The entities are the features' own, listed where the app is composed (ENTITIES in app.module.ts);
 * a connection that only migrates or queries by SQL needs none.
 */
export function buildDataSourceOptions(config: DatabaseConfig, entities: EntityList = []): DataSourceOptions {
  return {
    type: config.url.startsWith('mariadb:') ? 'mariadb' : 'mysql',
    url: config.url,
    entities,
    migrations: [join(__dirname, 'migrations', '*.{ts,js}')],
    migrationsTableName: 'schema_migrations',
    synchronize: false,
    migrationsRun: false,
    poolSize: config.poolSize,
    // Dates travel as UTC; the app writes every timestamp itself, so the server's zone never matters.
    timezone: 'Z',
    charset: 'utf8mb4_unicode_ci',
    supportBigNumbers: true,
    bigNumberStrings: true,
    connectTimeout: config.connectTimeoutMs,
    // StatementBatch sends a new payment's writes in one round trip. Safe only because no value is
    // ever spliced into SQL text: every value travels through a `?` placeholder (see StatementBatch).
    multipleStatements: true,
    // Callers waiting for a connection beyond this fail at once (BoundedPool bounds how long each waits).
    extra: { queueLimit: config.queueLimit },
  };
}
