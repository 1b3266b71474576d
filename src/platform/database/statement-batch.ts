import { Injectable } from '@nestjs/common';
import { Propagation, Transactional, TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { DataSource, QueryFailedError } from 'typeorm';
import { MysqlDriver } from 'typeorm/driver/mysql/MysqlDriver.js';
import { QUERY_TIMEOUT } from './bounded-pool';
import { ServerFlavour } from './server-flavour';

/** One SQL statement and the values of its `?` placeholders: a value never goes into the text. */
export interface Statement {
  sql: string;
  params: unknown[];
}

/**
 * Makes an `INSERT ... SELECT ... FROM DUAL WHERE` in a batch run only when the statement just
 * before it changed exactly one row: ROW_COUNT() is that statement's count.
 */
export const PREVIOUS_CHANGED_ONE_ROW = 'ROW_COUNT() = 1';

/**
 * A condition true only while the batch's transaction is alive. A later statement of a batch must
 * require it: when the transaction dies between two statements (a Galera certification abort, a
 * deadlock victim), the server rolls it back and runs the rest of the batch outside any
 * transaction, each statement committing on its own; ROW_COUNT() still says 1 there.
 * - MariaDB says it directly: `@@in_transaction` is 0 outside a transaction.
 * - MySQL has no such variable. There the condition is that the row the batch's last INSERT into
 *   `lastInsertedInto` added is visible, which it is only inside the live transaction that
 *   inserted it: LAST_INSERT_ID() keeps its value across statements that insert nothing, and an
 *   id is never handed out twice. The subquery costs the server more per statement.
 */
export function transactionAliveCondition(flavour: ServerFlavour, lastInsertedInto: string): string {
  return flavour === 'mariadb'
    ? '@@in_transaction = 1'
    : `EXISTS (SELECT 1 FROM ${lastInsertedInto} WHERE id = LAST_INSERT_ID())`;
}

const BEGIN: Statement = { sql: 'START TRANSACTION', params: [] };

/** The server's status flag, in every OK packet, for "a transaction is open on this session". */
const SERVER_STATUS_IN_TRANS = 0x0001;

/**
 * Sends statements to the current transaction's connection as ONE multi-statement query: one round
 * trip instead of one each. The server runs them in order and stops at the first that fails; the
 * caller gets that error, and the statements before it stay done within the transaction, as they
 * would have one by one.
 */
@Injectable()
export class StatementBatch {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly dataSource: DataSource,
  ) {}

  /**
   * `transactionAliveCondition` for the server behind the pool: TypeORM's type is the one the
   * server reported at the start (serverDataSourceOptions), or the URL's scheme when it could not be
   * reached then.
   */
  transactionAlive(lastInsertedInto: string): string {
    return transactionAliveCondition(
      this.dataSource.options.type === 'mariadb' ? 'mariadb' : 'mysql',
      lastInsertedInto,
    );
  }

  /**
   * Begins a transaction on a pooled connection of its own, outside any async context and TypeORM:
   * the caller passes it along explicitly and ends it itself (commit or rollBack). The pool's bounds
   * hold for it (BoundedPool): the wait for the connection, and each query's time.
   */
  async begin(): Promise<ExplicitTransaction> {
    const pool = (this.dataSource.driver as MysqlDriver).pool as {
      getConnection(callback: (error: Error | null, connection?: PooledConnection) => void): void;
    };
    const connection = await new Promise<PooledConnection>((resolve, reject) =>
      pool.getConnection((error, pooled) => (error ? reject(error) : resolve(pooled!))),
    );
    return new ExplicitTransaction(connection);
  }

  /** One result per statement, in order: mysql2's ResultSetHeader for a write, the rows for a read. */
  @Transactional(Propagation.Mandatory)
  async run(statements: Statement[]): Promise<unknown[]> {
    const [sql, params] = joined(statements);
    const each = resultsOf(await this.txHost.tx.query(sql, params), statements.length);
    assertTransactionAlive(each, statements);
    return each;
  }
}

/**
 * Every statement of a batch runs inside the caller's transaction, so every write's OK packet says
 * a transaction is open. One that does not ran after the transaction died (and was rolled back) in
 * the middle of the batch, and the server did not report it: the caller must not act on results
 * of a transaction that is gone, nor COMMIT (which would succeed, committing nothing). It is
 * reported as the deadlock it is, which callers already treat as transient and run again.
 */
function assertTransactionAlive(results: unknown[], statements: Statement[]): void {
  const died = results.some((result) => {
    const status = (result as { serverStatus?: unknown } | null)?.serverStatus;
    return typeof status === 'number' && (status & SERVER_STATUS_IN_TRANS) === 0;
  });
  if (!died) return;
  const driverError = Object.assign(
    new Error('the transaction was aborted in the middle of a statement batch (a lock or certification conflict)'),
    { errno: 1213, code: 'ER_LOCK_DEADLOCK', sqlState: '40001' },
  );
  throw new QueryFailedError(...joined(statements), driverError);
}

/** Statements as ONE multi-statement query: their texts, and all their values in order. */
function joined(statements: Statement[]): [sql: string, params: unknown[]] {
  statements.forEach(assertOneStatement);
  return [statements.map((s) => s.sql).join(';\n'), statements.flatMap((s) => s.params)];
}

/** mysql2 answers a single statement with its result, several with an array of them: one result per statement. */
function resultsOf(answer: unknown, statements: number): unknown[] {
  return statements === 1 ? [answer] : (answer as unknown[]);
}

/**
 * The placeholders of all statements are filled from one list, so a statement with too few values
 * would shift every value after it into the wrong column; and a `;` would smuggle in a statement.
 */
function assertOneStatement({ sql, params }: Statement): void {
  if (sql.includes(';')) throw new Error(`a batched statement must not contain ';': ${sql}`);
  let placeholders = 0;
  for (let at = sql.indexOf('?'); at !== -1; at = sql.indexOf('?', at + 1)) placeholders++;
  if (placeholders !== params.length) {
    throw new Error(`a batched statement has ${placeholders} placeholders and ${params.length} values: ${sql}`);
  }
}

interface DriverError extends Error {
  fatal?: boolean;
  code?: string;
}

interface PooledConnection {
  query(sql: string, values: unknown[], callback: (error: DriverError | null, results?: unknown) => void): void;
  release(): void;
  destroy(): void;
}

/**
 * A transaction on a connection of its own (StatementBatch.begin). Its first batch goes to the
 * server with START TRANSACTION, in one round trip; it ends with `commit` or `rollBack`, which give
 * the connection back to the pool.
 */
export class ExplicitTransaction {
  private begun = false;
  private ended = false;

  constructor(private readonly connection: PooledConnection) {}

  /** As StatementBatch.run, in this transaction. */
  async run(statements: Statement[]): Promise<unknown[]> {
    const sent = this.begun ? statements : [BEGIN, ...statements];
    this.begun = true;
    const answer = await this.send(...joined(sent));
    const each = resultsOf(answer, sent.length).slice(sent.length - statements.length);
    assertTransactionAlive(each, statements);
    return each;
  }

  /** Commits and gives the connection back; a failed COMMIT is rolled back and thrown. */
  async commit(): Promise<void> {
    if (this.begun) {
      try {
        await this.send('COMMIT', []);
      } catch (error) {
        await this.rollBack();
        throw error;
      }
    }
    this.end('release');
  }

  /** Rolls back and gives the connection back, or closes it when the server no longer answers on it. Never rejects. */
  async rollBack(): Promise<void> {
    if (this.ended) return;
    try {
      if (this.begun) await this.send('ROLLBACK', []);
      this.end('release');
    } catch {
      this.end('destroy');
    }
  }

  private send(sql: string, params: unknown[]): Promise<unknown> {
    if (this.ended) return Promise.reject(new Error('the transaction has ended'));
    return new Promise((resolve, reject) =>
      this.connection.query(sql, params, (error, results) => {
        if (!error) return resolve(results);
        // A lost or timed-out connection is closed (BoundedPool closes a timed-out one itself).
        if (error.fatal || error.code === QUERY_TIMEOUT) this.end('destroy');
        reject(new QueryFailedError(sql, params, error));
      }),
    );
  }

  private end(how: 'release' | 'destroy'): void {
    if (this.ended) return;
    this.ended = true;
    if (how === 'release') this.connection.release();
    else this.connection.destroy();
  }
}
