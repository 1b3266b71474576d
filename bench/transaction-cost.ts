import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { createPool, Pool, PoolConnection } from 'mysql2';
import { DataSource } from 'typeorm';
import { ADMIN_URL, runAsAdmin } from './admin-database';
import { percentile } from './http-load';

/**
 * What TypeORM's transaction costs the process over bare mysql2, per transaction of the notify
 * path's shape (START TRANSACTION, one statement, COMMIT), at the notify path's concurrency.
 * Both run inside two AsyncLocalStorages, as in the service (nestjs-cls, nestjs-pino): every
 * promise then pays the async hooks, and TypeORM awaits more of them. Prints the process CPU per
 * transaction for alternating rounds, then the medians.
 *
 *   npm run bench:transaction   (BENCH_DATABASE_ADMIN_URL, default mysql://root@127.0.0.1:3306)
 */
const TRANSACTIONS_PER_ROUND = 6000;
const ROUNDS = 8;
const CONCURRENCY = 16;
const INSERT = 'INSERT INTO probe (v) VALUES (?)';

type Transaction = () => Promise<unknown>;

async function main(): Promise<void> {
  const database = `bench_tx_${randomBytes(4).toString('hex')}`;
  await runAsAdmin([
    `CREATE DATABASE ${database}`,
    `CREATE TABLE ${database}.probe (id INT AUTO_INCREMENT PRIMARY KEY, v INT)`,
  ]);
  const url = `${ADMIN_URL.replace(/\/$/, '')}/${database}`;
  const dataSource = await new DataSource({ type: 'mysql', url, poolSize: CONCURRENCY }).initialize();
  const pool = createPool({ uri: url, connectionLimit: CONCURRENCY });
  try {
    const byTypeorm: Transaction = () => dataSource.transaction((manager) => manager.query(INSERT, [1]));
    const byMysql2: Transaction = () => bareTransaction(pool);
    const cpu = { typeorm: [] as number[], mysql2: [] as number[] };
    for (let round = 0; round <= ROUNDS; round++) {
      const typeorm = await cpuPerTransaction(byTypeorm);
      const mysql2 = await cpuPerTransaction(byMysql2);
      // Round 0 warms the JIT and the pools up; it is printed but not counted.
      if (round > 0) {
        cpu.typeorm.push(typeorm);
        cpu.mysql2.push(mysql2);
      }
      console.log(
        `round ${round}: TypeORM ${typeorm.toFixed(1)} µs, bare mysql2 ${mysql2.toFixed(1)} µs of CPU per transaction`,
      );
    }
    const [typeorm, mysql2] = [median(cpu.typeorm), median(cpu.mysql2)];
    console.log(
      `median: TypeORM ${typeorm.toFixed(1)} µs, bare mysql2 ${mysql2.toFixed(1)} µs, TypeORM's share ${(typeorm - mysql2).toFixed(1)} µs per transaction`,
    );
  } finally {
    await dataSource.destroy();
    await new Promise((resolve) => pool.end(resolve));
    await runAsAdmin([`DROP DATABASE IF EXISTS ${database}`]);
  }
}

async function cpuPerTransaction(transaction: Transaction): Promise<number> {
  let left = TRANSACTIONS_PER_ROUND;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) await transaction();
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / TRANSACTIONS_PER_ROUND;
}

async function bareTransaction(pool: Pool): Promise<void> {
  const connection = await new Promise<PoolConnection>((resolve, reject) =>
    pool.getConnection((error, conn) => (error ? reject(error) : resolve(conn))),
  );
  try {
    await query(connection, 'START TRANSACTION');
    await query(connection, INSERT, [1]);
    await query(connection, 'COMMIT');
  } finally {
    connection.release();
  }
}

function query(connection: PoolConnection, sql: string, values: unknown[] = []): Promise<unknown> {
  return new Promise((resolve, reject) =>
    connection.query(sql, values, (error, result) => (error ? reject(error) : resolve(result))),
  );
}

function median(values: number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

const cls = new AsyncLocalStorage<object>();
const requestLogger = new AsyncLocalStorage<object>();
void cls.run({}, () =>
  requestLogger.run({}, () =>
    main().catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    }),
  ),
);
