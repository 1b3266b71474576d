import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { DataSource, QueryRunner } from 'typeorm';
import { databaseConfig } from '../config/database.config';
import { isAwaitingDatabase } from './awaiting-database';
import { ClusterMigrationLock, isGaleraNode } from './cluster-migration-lock';
import { serverDataSourceOptions } from './data-source-options';
import { isDatabaseUnavailable } from './database-unavailable';
import { databaseAnswered } from './start-without-database';

const MIGRATION_LOCK = 'payment-callback-service:migrations';
/** MySQL refuses a GET_LOCK name longer than 64 characters; MariaDB's docs set no bound. */
const LOCK_NAME_MAX = 64;
const LOCK_TIMEOUT_SECONDS = 120;
const AWAIT_DATABASE_INTERVAL_MS = 1000;

/**
 * Applies the pending migrations under a lock, so that replicas (or a migration Job) starting
 * together do not race on DDL; the ones that wait find nothing left to do. The lock is a MySQL
 * named lock, except on a Galera node, where GET_LOCK locks only that node: there it is a row that
 * replicates (ClusterMigrationLock). Returns the names of the migrations this call applied.
 * A named lock is the server's, not the database's: it is named after the database, so that two
 * databases on one server (two services, two environments, parallel test suites) migrate at once.
 */
export async function applyMigrationsLocked(
  dataSource: DataSource,
  timeoutSeconds = LOCK_TIMEOUT_SECONDS,
): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  try {
    const lock = (await isGaleraNode(runner))
      ? new ClusterMigrationLock(MIGRATION_LOCK, timeoutSeconds)
      : new NamedLock(migrationLockName(await currentDatabase(runner)), timeoutSeconds);
    await lock.take(runner);
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      return applied.map((m) => m.name);
    } finally {
      await lock.release(runner);
    }
  } finally {
    await runner.release();
  }
}

/** The named lock that guards the migrations of one database, at most 64 characters. */
export function migrationLockName(database: string): string {
  const name = `${MIGRATION_LOCK}:${database}`;
  if (name.length <= LOCK_NAME_MAX) return name;
  return `${MIGRATION_LOCK}:${createHash('sha256')
    .update(database)
    .digest('hex')
    .slice(0, LOCK_NAME_MAX - MIGRATION_LOCK.length - 1)}`;
}

async function currentDatabase(runner: QueryRunner): Promise<string> {
  const [{ name }] = (await runner.query('SELECT DATABASE() AS name')) as Array<{ name: string | null }>;
  return name ?? '';
}

/** GET_LOCK: held by the session, freed when it ends, however it ends. */
class NamedLock {
  constructor(
    private readonly name: string,
    private readonly timeoutSeconds: number,
  ) {}

  async take(runner: QueryRunner): Promise<void> {
    const params = [this.name, this.timeoutSeconds];
    const [{ locked }] = (await runner.query('SELECT GET_LOCK(?, ?) AS locked', params)) as Array<{ locked: unknown }>;
    if (Number(locked) !== 1) throw new Error(`could not take the migration lock within ${this.timeoutSeconds}s`);
  }

  async release(runner: QueryRunner): Promise<void> {
    await runner.query('SELECT RELEASE_LOCK(?)', [this.name]);
  }
}

/**
 * Applies pending migrations at start (MIGRATIONS_RUN), before anything touches the schema. When
 * the service started without the database (SPOOL_DIR), it waits for the database in the
 * background instead, migrates, and only then lets the app's queries through.
 */
@Injectable()
export class MigrationRunner implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(MigrationRunner.name);
  private stopping = false;

  constructor(
    @Inject(databaseConfig.KEY) private readonly config: ConfigType<typeof databaseConfig>,
    private readonly dataSource: DataSource,
  ) {}

  /** Before any onApplicationBootstrap hook, so that no worker ever polls an unmigrated schema. */
  async onModuleInit(): Promise<void> {
    if (!isAwaitingDatabase(this.dataSource)) return this.migrate();
    this.logger.warn('started without the database: deliveries are spooled until it answers and is migrated');
    void this.migrateOnceAnswering(); // never rejects: it retries until the database answers or the app stops
  }

  onApplicationShutdown(): void {
    this.stopping = true;
  }

  private async migrateOnceAnswering(): Promise<void> {
    for (let attempt = 1; !this.stopping; attempt++) {
      try {
        await this.migrate();
        await databaseAnswered(this.dataSource);
        this.logger.log('the database answers and its schema is current: the spool replays');
        return;
      } catch (error) {
        if (!isDatabaseUnavailable(error) || attempt === 1)
          this.logger.warn(`waiting for the database: ${(error as Error).message}`);
        await sleep(AWAIT_DATABASE_INTERVAL_MS);
      }
    }
  }

  private async migrate(): Promise<void> {
    if (!this.config.runMigrations) return;
    // On a pool of its own, outside the app's query timeout (BoundedPool): waiting for the lock
    // and altering a large table legitimately take longer than any request may.
    const migrations = await new DataSource(
      await serverDataSourceOptions({ ...this.config, poolSize: 2 }),
    ).initialize();
    try {
      const applied = await applyMigrationsLocked(migrations);
      if (applied.length > 0) this.logger.log(`applied migrations: ${applied.join(', ')}`);
    } finally {
      await migrations.destroy();
    }
  }
}
