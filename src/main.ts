import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { Logger } from '@nestjs/common';
import { createApp } from './start/app.factory';
import { applyExampleMigrations } from './events/after-payment/example-schema';
import { loadDatabaseConfig } from './platform/config/database.config';
import { applyPendingMigrations } from './platform/database/migrate';
import { validateConfiguration } from './start/configuration';
import { explainDatabaseStartError } from './platform/database/database-start-error';
import { listenError, loadServerConfig } from './platform/config/server.config';
import { loadSpoolConfig } from './platform/config/spool.config';
import { ConfigurationError } from './platform/config/env-validation';
import { GracefulShutdown } from './platform/lifecycle/graceful-shutdown';
import { startSummary } from './start/start-line';
import { MetricsServer } from './platform/metrics/metrics-server';
import { SpoolLock } from './intake/spool/spool-lock';

/** `.env` in the working directory, when present; a variable set in the environment wins over it. */
function loadDotEnv(): void {
  if (existsSync('.env')) process.loadEnvFile('.env');
}

async function bootstrap(): Promise<void> {
  loadDotEnv();
  validateConfiguration();
  const config = loadServerConfig();
  // Before the database is reached: a second instance on the spool directory stops at once.
  const spoolDir = loadSpoolConfig().dir;
  if (spoolDir !== undefined) await SpoolLock.acquire(spoolDir);
  const app = await createApp();
  new GracefulShutdown(app, config).install();
  // Nest starts the management port (METRICS_PORT) first, whose error names it already.
  await app.listen(config.port, '0.0.0.0').catch((error: Error) => {
    throw listenError(error, 'PORT');
  });
  const { port } = app.getHttpServer().address() as { port: number };
  const { msg, ...fields } = startSummary(app, port, app.get(MetricsServer).port ?? config.metricsPort);
  new Logger('Lifecycle').log({ msg, ...fields });
}

/** One line, in the log's own JSON shape, with what to fix: never a stack trace for a configuration mistake. */
function reportStartFailure(error: unknown): void {
  const configuration = error instanceof ConfigurationError;
  const line = {
    level: 60,
    time: Date.now(),
    pid: process.pid,
    hostname: hostname(),
    msg: configuration ? error.message : `failed to start: ${explainStartError(error)}`,
    ...(configuration ? { problems: error.problems } : {}),
  };
  process.stderr.write(`${JSON.stringify(line)}\n`);
}

function explainStartError(error: unknown): string {
  return explainDatabaseStartError(error) ?? (error as Error)?.message ?? String(error);
}

/** `main.js migrate` (npm run migrate): the pending migrations, the example handlers' tables where they run, then exit. */
async function migrate(): Promise<void> {
  loadDotEnv();
  const extraSets = loadServerConfig().exampleHandlers ? [applyExampleMigrations] : [];
  const applied = await applyPendingMigrations(loadDatabaseConfig(), extraSets);
  process.stdout.write(applied.length > 0 ? `applied migrations: ${applied.join(', ')}\n` : 'no pending migration\n');
}

if (process.argv[2] === 'migrate') {
  migrate().catch((error: unknown) => {
    process.stderr.write(`migrate: ${explainStartError(error)}\n`);
    process.exit(1);
  });
} else {
  bootstrap().catch((error: unknown) => {
    reportStartFailure(error);
    process.exit(1);
  });
}
