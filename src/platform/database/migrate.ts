import { DataSource } from 'typeorm';
import { DatabaseConfig } from '../config/database.config';
import { serverDataSourceOptions } from './data-source-options';
import { applyMigrationsLocked } from './migration-runner';

/** A migration set of its own (its own history table), applied after the service's: answers what it applied. */
export type ExtraMigrationSet = (config: DatabaseConfig) => Promise<string[]>;

/**
 * `npm run migrate` (`node dist/src/main.js migrate` in the image): applies the pending migrations,
 * then the extra sets, for a deployment that runs them as a Job before the new replicas start (with
 * MIGRATIONS_RUN=false on the replicas). Takes the same lock as the start-up run.
 */
export async function applyPendingMigrations(
  config: DatabaseConfig,
  extraSets: ExtraMigrationSet[],
): Promise<string[]> {
  const dataSource = await new DataSource(await serverDataSourceOptions(config)).initialize();
  const applied: string[] = [];
  try {
    applied.push(...(await applyMigrationsLocked(dataSource)));
  } finally {
    await dataSource.destroy();
  }
  for (const apply of extraSets) applied.push(...(await apply(config)));
  return applied;
}
