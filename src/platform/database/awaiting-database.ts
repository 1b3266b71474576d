import { DataSource } from 'typeorm';

/** DataSources started without the database (start-without-database.ts), until their schema is migrated. */
const awaiting = new WeakSet<DataSource>();

export function markAwaitingDatabase(dataSource: DataSource): void {
  awaiting.add(dataSource);
}

export function markDatabaseAnswered(dataSource: DataSource): void {
  awaiting.delete(dataSource);
}

export function isAwaitingDatabase(dataSource: DataSource): boolean {
  return awaiting.has(dataSource);
}
