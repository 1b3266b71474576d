import { registerAs } from '@nestjs/config';
import { IsOptional, Matches } from 'class-validator';
import { IntegerBetween, OneOf, validateEnv } from './env-validation';

class DatabaseEnv {
  @IsOptional()
  @Matches(/^(mysql|mariadb):\/\/[^/]+\/[A-Za-z0-9_]+(\?.*)?$/, {
    message: 'DATABASE_URL must look like mysql://user:password@host:3306/database (mariadb:// for a MariaDB server)',
  })
  DATABASE_URL?: string;

  @IsOptional()
  @IntegerBetween(1, 500)
  DATABASE_POOL_SIZE?: number;

  @IsOptional()
  @OneOf(['true', 'false'])
  MIGRATIONS_RUN?: string;

  @IsOptional()
  @IntegerBetween(100, 600000)
  DATABASE_QUERY_TIMEOUT_MS?: number;

  @IsOptional()
  @IntegerBetween(100, 60000)
  DATABASE_CONNECT_TIMEOUT_MS?: number;

  @IsOptional()
  @IntegerBetween(10, 60000)
  DATABASE_POOL_ACQUIRE_TIMEOUT_MS?: number;

  @IsOptional()
  @IntegerBetween(1, 100000)
  DATABASE_POOL_QUEUE_LIMIT?: number;

  @IsOptional()
  @IntegerBetween(1, 50)
  REPORTING_POOL_SIZE?: number;

  @IsOptional()
  @IntegerBetween(100, 600000)
  REPORTING_STATEMENT_TIMEOUT_MS?: number;
}

export interface DatabaseConfig {
  /** mysql://… for MySQL, mariadb://… for MariaDB: TypeORM reads each one's schema metadata its own way. */
  url: string;
  poolSize: number;
  /** Apply pending migrations at start, under a database lock so that replicas don't race. */
  runMigrations: boolean;
  /** A query without an answer by then fails, and its connection is dropped (migrations excepted). */
  queryTimeoutMs: number;
  connectTimeoutMs: number;
  /** How long a caller waits for a free pooled connection before failing. */
  acquireTimeoutMs: number;
  /** Callers waiting for a pooled connection beyond this many fail at once. */
  queueLimit: number;
  /** The admin API's reads and the scrape-time gauges: a pool of their own (ReportingDatabase). */
  reporting: { poolSize: number; statementTimeoutMs: number; queueLimit: number };
}

export const DEFAULT_DATABASE_URL = 'mariadb://root@127.0.0.1:3306/payments';

export function loadDatabaseConfig(env: NodeJS.ProcessEnv = process.env): DatabaseConfig {
  const vars = validateEnv(DatabaseEnv, env);
  return {
    url: vars.DATABASE_URL ?? DEFAULT_DATABASE_URL,
    poolSize: vars.DATABASE_POOL_SIZE ?? 20,
    runMigrations: vars.MIGRATIONS_RUN !== 'false',
    queryTimeoutMs: vars.DATABASE_QUERY_TIMEOUT_MS ?? 5000,
    connectTimeoutMs: vars.DATABASE_CONNECT_TIMEOUT_MS ?? 5000,
    acquireTimeoutMs: vars.DATABASE_POOL_ACQUIRE_TIMEOUT_MS ?? 2000,
    queueLimit: vars.DATABASE_POOL_QUEUE_LIMIT ?? 500,
    reporting: {
      poolSize: vars.REPORTING_POOL_SIZE ?? 3,
      statementTimeoutMs: vars.REPORTING_STATEMENT_TIMEOUT_MS ?? 10000,
      // A few waiting reads per connection; the rest are refused (503) rather than queued.
      queueLimit: 4 * (vars.REPORTING_POOL_SIZE ?? 3),
    },
  };
}

export const databaseConfig = registerAs('database', () => loadDatabaseConfig());
