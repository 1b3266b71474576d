import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { QueryRunner } from 'typeorm';

const LOCK_TABLE = 'migration_lock';
const RETRY_INTERVAL_MS = 500;

/** True when the server is a Galera node, where GET_LOCK locks only on the node that took it. */
export async function isGaleraNode(runner: QueryRunner): Promise<boolean> {
  const rows = (await runner.query(`SHOW VARIABLES LIKE 'wsrep_on'`)) as Array<{ Value?: string }>;
  return String(rows[0]?.Value ?? '').toUpperCase() === 'ON';
}

/**
 * The migration lock on a Galera cluster: a row in a table of its own, taken by inserting it. The
 * insert replicates like any write, so two migrators on two nodes cannot both hold it: the second
 * meets the row (a duplicate key) or loses certification at its commit (a deadlock error), and waits.
 * Unlike GET_LOCK, the row outlives a migrator that crashed: after the wait the next one refuses to
 * run, naming the holder and the statement that frees the lock once no migrator runs.
 */
export class ClusterMigrationLock {
  private readonly holder = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;

  constructor(
    private readonly name: string,
    private readonly timeoutSeconds: number,
  ) {}

  async take(runner: QueryRunner): Promise<void> {
    await runner.query(
      `CREATE TABLE IF NOT EXISTS ${LOCK_TABLE} (
         name VARCHAR(64) NOT NULL PRIMARY KEY, holder VARCHAR(255) NOT NULL, taken_at DATETIME(3) NOT NULL
       ) ENGINE=InnoDB`,
    );
    const deadline = Date.now() + this.timeoutSeconds * 1000;
    for (;;) {
      if (await this.tryInsert(runner)) return;
      if (Date.now() >= deadline) throw new Error(await this.heldMessage(runner));
      await sleep(RETRY_INTERVAL_MS);
    }
  }

  async release(runner: QueryRunner): Promise<void> {
    await runner.query(`DELETE FROM ${LOCK_TABLE} WHERE name = ? AND holder = ?`, [this.name, this.holder]);
  }

  private async tryInsert(runner: QueryRunner): Promise<boolean> {
    try {
      await runner.query(`INSERT INTO ${LOCK_TABLE} (name, holder, taken_at) VALUES (?, ?, UTC_TIMESTAMP(3))`, [
        this.name,
        this.holder,
      ]);
      return true;
    } catch (error) {
      const errno = (error as { driverError?: { errno?: number } }).driverError?.errno;
      if (errno === 1062 /* ER_DUP_ENTRY */ || errno === 1213 /* certification failure */) return false;
      throw error;
    }
  }

  private async heldMessage(runner: QueryRunner): Promise<string> {
    const rows = (await runner.query(`SELECT holder, taken_at FROM ${LOCK_TABLE} WHERE name = ?`, [
      this.name,
    ])) as Array<{ holder: string; taken_at: Date }>;
    const by = rows[0] ? ` held by ${rows[0].holder} since ${new Date(rows[0].taken_at).toISOString()}` : '';
    return (
      `could not take the migration lock within ${this.timeoutSeconds}s: another migrator runs on this Galera cluster${by}. ` +
      `Run one migrator at a time (the migration Job); if none runs, free the lock: DELETE FROM ${LOCK_TABLE} WHERE name = '${this.name}'`
    );
  }
}
