import { registerAs } from '@nestjs/config';
import { IsIn, IsInt, IsOptional, Matches, Max, Min } from 'class-validator';
import { validateEnv } from './validate-env';

class DatabaseEnv {
  @IsOptional()
  @Matches(/^(mysql|mariadb):\/\/[^/]+\/[A-Za-z0-9_]+(\?.*)?$/, {
    message: 'DATABASE_URL must look like mysql://user:password@host:3306/database (mariadb:// for a MariaDB server)',
  })
  DATABASE_URL?: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(500)
  DATABASE_POOL_SIZE?: number;

  @IsOptional()
  @IsIn(['true', 'false'])
  MIGRATIONS_RUN?: string;
}

export interface DatabaseConfig {
  /** mysql://… for MySQL, mariadb://… for MariaDB: TypeORM reads each one's schema metadata its own way. */
  url: string;
  poolSize: number;
  /** Apply pending migrations at start, under a database lock so that replicas don't race. */
  runMigrations: boolean;
}

export const DEFAULT_DATABASE_URL = 'mariadb://root@127.0.0.1:3306/payments';

export function loadDatabaseConfig(env: NodeJS.ProcessEnv = process.env): DatabaseConfig {
  const vars = validateEnv(DatabaseEnv, env);
  return {
    url: vars.DATABASE_URL ?? DEFAULT_DATABASE_URL,
    poolSize: vars.DATABASE_POOL_SIZE ?? 20,
    runMigrations: vars.MIGRATIONS_RUN !== 'false',
  };
}

export const databaseConfig = registerAs('database', () => loadDatabaseConfig());
