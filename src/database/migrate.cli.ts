import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadDatabaseConfig } from '../config/database.config';
import { buildDataSourceOptions } from './data-source-options';
import { applyMigrationsLocked } from './migration-runner';

/**
 * `npm run migrate` (`node dist/src/database/migrate.cli.js` in the image): applies the pending
 * migrations and exits, for a deployment that runs them as a Job before the new replicas start
 * (with MIGRATIONS_RUN=false on the replicas). Takes the same lock as the start-up run.
 */
async function main(): Promise<void> {
  const dataSource = await new DataSource(buildDataSourceOptions(loadDatabaseConfig())).initialize();
  try {
    const applied = await applyMigrationsLocked(dataSource);
    process.stdout.write(applied.length > 0 ? `applied migrations: ${applied.join(', ')}\n` : 'no pending migration\n');
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error: Error) => {
  process.stderr.write(`migrate: ${error.message}\n`);
  process.exit(1);
});
