import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { applyExampleMigrations } from '../../events/after-payment/example-schema';
import { loadDatabaseConfig } from '../config/database.config';
import { loadServerConfig } from '../config/server.config';
import { buildDataSourceOptions } from './data-source-options';
import { applyMigrationsLocked } from './migration-runner';

/**
 * `npm run migrate` (`node dist/src/platform/database/migrate.cli.js` in the image): applies the pending
 * migrations and exits, for a deployment that runs them as a Job before the new replicas start
 * (with MIGRATIONS_RUN=false on the replicas). Takes the same lock as the start-up run.
 */
async function main(): Promise<void> {
  const config = loadDatabaseConfig();
  const dataSource = await new DataSource(buildDataSourceOptions(config)).initialize();
  let applied: string[];
  try {
    applied = await applyMigrationsLocked(dataSource);
  } finally {
    await dataSource.destroy();
  }
  // The example handlers' tables only where they run (EXAMPLE_HANDLERS=true), like the start-up run.
  if (loadServerConfig().exampleHandlers) applied.push(...(await applyExampleMigrations(config)));
  process.stdout.write(applied.length > 0 ? `applied migrations: ${applied.join(', ')}\n` : 'no pending migration\n');
}

main().catch((error: Error) => {
  process.stderr.write(`migrate: ${error.message}\n`);
  process.exit(1);
});
