import { join } from 'node:path';
import { DataSourceOptions } from 'typeorm';
import { DatabaseConfig } from '../config/database.config';
import { probeServerFlavour, ServerFlavour } from './server-flavour';

export type EntityList = NonNullable<DataSourceOptions['entities']>;

/**
 * The one place the TypeORM options are built: the app, the migration CLI (ormconfig.ts) and tests use it.
 * The entities are the features' own, listed where the app is composed (ENTITIES in app.module.ts);
 * a connection that only migrates or queries by SQL needs none.
 */
export function buildDataSourceOptions(
  config: DatabaseConfig,
  entities: EntityList = [],
  flavour: ServerFlavour = flavourOfScheme(config.url),
): DataSourceOptions {
  return {
    type: flavour,
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
    // START TRANSACTION goes out with a transaction's first statement (beginWithFirstStatement). Safe
    // only because no value is ever spliced into SQL text: every value travels through a `?` placeholder.
    multipleStatements: true,
    extra: {
      // Callers waiting for a connection beyond this fail at once (BoundedPool bounds how long each waits).
      queueLimit: config.queueLimit,
      // mysql2 captures a stack trace on every query to decorate a failure's stack: 3% of the
      // service's CPU on first deliveries (a CPU profile of the storm). A failed query's error still
      // carries its SQL and the server's code; only the JavaScript frames above the driver go.
      trace: false,
    },
  };
}

/**
 * The options with TypeORM's type (schema metadata, locking clauses, RETURNING) set by the server
 * that answers, asked once on a short connection. Only a server that cannot be reached yet (a start
 * with the spool covering the outage) falls back on the URL's scheme.
 */
export async function serverDataSourceOptions(
  config: DatabaseConfig,
  entities: EntityList = [],
): Promise<DataSourceOptions> {
  const flavour = await probeServerFlavour(config.url, config.connectTimeoutMs);
  return buildDataSourceOptions(config, entities, flavour);
}

function flavourOfScheme(url: string): ServerFlavour {
  return url.startsWith('mariadb:') ? 'mariadb' : 'mysql';
}
