import { DataSource } from 'typeorm';
import { markAwaitingDatabase, markDatabaseAnswered } from './awaiting-database';
import { isDatabaseUnavailable } from './database-unavailable';

/** What of TypeORM's MySQL driver a start without the database reaches into. */
interface LazyPoolDriver {
  pool?: unknown;
  mysql: { createPool(options: unknown): unknown };
  createPool(options: unknown): Promise<unknown>;
  connect(): Promise<void>;
}

/**
 * With SPOOL_DIR set the service starts while the database is away, so that the spool takes the
 * deliveries: the pool is created without a first connection (mysql2 pools connect on demand; the
 * check at start is TypeORM's), the entity metadata is built, and every query fails as
 * "database unavailable" until `databaseAnswered` (see MigrationRunner). A database that answers
 * with an error (wrong password, unknown database) still stops the start.
 */
export async function initializeWithoutWaiting(dataSource: DataSource): Promise<DataSource> {
  const driver = dataSource.driver as unknown as LazyPoolDriver;
  // eslint-disable-next-line @typescript-eslint/require-await -- TypeORM awaits createPool: it returns a promise, and a throw in it becomes that promise's rejection
  driver.createPool = async (options) => driver.pool ?? driver.mysql.createPool(options);
  try {
    return await dataSource.initialize();
  } catch (error) {
    if (!isDatabaseUnavailable(error) || driver.pool === undefined) throw error;
  }
  Object.assign(dataSource, { isInitialized: true });
  await (dataSource as unknown as { buildMetadatas(): Promise<void> }).buildMetadatas();
  markAwaitingDatabase(dataSource);
  return dataSource;
}

/** The schema is current: queries go through, and the driver learns the server's version as at a normal start. */
export async function databaseAnswered(dataSource: DataSource): Promise<void> {
  markDatabaseAnswered(dataSource);
  await (dataSource.driver as unknown as LazyPoolDriver).connect(); // reuses the pool (see createPool above)
}
