import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import * as mysql2 from 'mysql2';
import { DataSource } from 'typeorm';
import { MysqlDriver } from 'typeorm/driver/mysql/MysqlDriver.js';
import { databaseConfig } from '../config/database.config';
import { isAwaitingDatabase } from './awaiting-database';
import { PoolWaitMetrics, PoolWaits } from './pool-wait-metrics';

type Callback = (error: (Error & { code?: string }) | null, ...results: unknown[]) => void;

/** mysql2's own factory of query commands: exported by the package, not declared in its types. */
const { createQuery } = mysql2 as unknown as {
  createQuery: (sql: string, values: unknown, callback: Callback | undefined, config: unknown) => { timeout?: number };
};

interface PooledConnection {
  config: unknown;
  query(sql: unknown, values?: unknown, callback?: unknown): unknown;
  release(): void;
  destroy(): void;
}

interface CallbackPool {
  getConnection(callback: (error: Error | null, connection?: PooledConnection) => void): void;
  on(event: 'acquire', listener: (connection: PooledConnection) => void): void;
}

/** Codes the exception filter answers with 503 (see TRANSIENT_DRIVER_CODES). */
export const POOL_ACQUIRE_TIMEOUT = 'POOL_ACQUIRE_TIMEOUT';
export const POOL_QUEUE_LIMIT = 'POOL_QUEUE_LIMIT';
/** Started without the database (SPOOL_DIR), which has not answered since: its schema is not migrated yet. */
export const DATABASE_NOT_YET_ANSWERED = 'DATABASE_NOT_YET_ANSWERED';

/** A wait on the database given up at the caller's deadline (the answer's time), whatever the query's own timeout. */
export const ANSWER_DEADLINE_PASSED = 'ANSWER_DEADLINE_PASSED';
/** mysql2's code for a query that ran past its timeout. */
export const QUERY_TIMEOUT = 'PROTOCOL_SEQUENCE_TIMEOUT';

const bounded = Symbol('bounded');

/**
 * Bounds every wait on the database, which mysql2 leaves unbounded: a caller waits at most
 * `acquireTimeoutMs` for a pooled connection, and every query at most `queryTimeoutMs`. mysql2
 * keeps a timed-out query's connection waiting for the answer, so that connection is destroyed:
 * the next caller gets a fresh one instead of queueing behind a query that may never return.
 */
@Injectable()
export class BoundedPool implements OnModuleInit {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(databaseConfig.KEY) private readonly config: ConfigType<typeof databaseConfig>,
    private readonly waits: PoolWaitMetrics,
  ) {}

  onModuleInit(): void {
    boundWaits(this.dataSource, this.config.acquireTimeoutMs, this.config.queryTimeoutMs, this.waits.of('notify'));
  }
}

/** The bounds above, on any DataSource's pool (ReportingDatabase has one of its own). */
export function boundWaits(
  dataSource: DataSource,
  acquireTimeoutMs: number,
  queryTimeoutMs: number,
  waits: PoolWaits,
): void {
  const pool = (dataSource.driver as MysqlDriver).pool as CallbackPool;
  boundAcquire(pool, acquireTimeoutMs, () => isAwaitingDatabase(dataSource), waits);
  pool.on('acquire', (connection) => boundQueries(connection, queryTimeoutMs));
}

function boundAcquire(pool: CallbackPool, timeoutMs: number, awaitingDatabase: () => boolean, waits: PoolWaits): void {
  const getConnection = pool.getConnection.bind(pool);
  pool.getConnection = (callback) => {
    if (awaitingDatabase())
      return callback(coded('the database has not answered since the start', DATABASE_NOT_YET_ANSWERED));
    const askedAt = performance.now();
    let waiting = true;
    waits.waiting.inc();
    const stopWaiting = () => {
      waiting = false;
      waits.waiting.dec();
      waits.waited.observe((performance.now() - askedAt) / 1000);
    };
    const timer = setTimeout(() => {
      stopWaiting();
      callback(coded(`no database connection free within ${timeoutMs} ms`, POOL_ACQUIRE_TIMEOUT));
    }, timeoutMs);
    getConnection((error, connection) => {
      if (!waiting) return connection?.release(); // too late: the caller has given up
      stopWaiting();
      clearTimeout(timer);
      if (error?.message === 'Queue limit reached.')
        return callback(coded('database pool queue is full', POOL_QUEUE_LIMIT));
      callback(error, connection);
    });
  };
}

function boundQueries(connection: PooledConnection & { [bounded]?: true }, timeoutMs: number): void {
  if (connection[bounded]) return;
  connection[bounded] = true;
  const query = connection.query.bind(connection);
  connection.query = (sql: unknown, values?: unknown, callback?: unknown) => {
    if (typeof values === 'function') [values, callback] = [undefined, values];
    const answer = typeof callback === 'function' ? answerOnce(connection, callback as Callback) : undefined;
    if (typeof sql === 'string') return query(timedQuery(sql, values, answer, connection.config, timeoutMs));
    return query(withTimeout(sql, timeoutMs), values, answer);
  };
}

/** The caller's callback, called once: a timed-out query's connection is destroyed first. */
function answerOnce(connection: PooledConnection, callback: Callback): Callback {
  let answered = false;
  return (error, ...results) => {
    if (answered) return; // mysql2 may report the timed-out query again when its connection goes
    answered = true;
    if (error?.code === QUERY_TIMEOUT) connection.destroy();
    callback(error, ...results);
  };
}

/**
 * The command mysql2 would build for `query(sql, values, callback)`, with the timeout set on it.
 * Passing `{ sql, timeout }` instead makes mysql2 merge option objects with spreads, a slow path of
 * V8's that cost more per statement than the rest of this wrapper.
 */
function timedQuery(sql: string, values: unknown, answer: Callback | undefined, config: unknown, timeoutMs: number) {
  const command = createQuery(sql, values, answer, config);
  command.timeout = timeoutMs;
  return command;
}

function withTimeout(sql: unknown, timeoutMs: number): unknown {
  const options = sql as { sql?: string; timeout?: number; constructor?: unknown };
  // A prepared mysql2 command object, or options carrying their own timeout, are passed through as given.
  if (typeof options !== 'object' || options === null || options.constructor !== Object) return sql;
  return options.timeout === undefined ? { ...options, timeout: timeoutMs } : sql;
}

function coded(message: string, code: string): Error & { code: string } {
  return Object.assign(new Error(message), { code });
}
