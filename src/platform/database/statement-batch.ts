import { Injectable } from '@nestjs/common';
import { Propagation, Transactional, TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { DataSource, QueryFailedError } from 'typeorm';
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

  /** One result per statement, in order: mysql2's ResultSetHeader for a write, the rows for a read. */
  @Transactional(Propagation.Mandatory)
  async run(statements: Statement[]): Promise<unknown[]> {
    statements.forEach(assertOneStatement);
    const results: unknown = await this.txHost.tx.query(
      statements.map((s) => s.sql).join(';\n'),
      statements.flatMap((s) => s.params),
    );
    // mysql2 answers a single statement with its result, several with an array of them.
    const each = statements.length === 1 ? [results] : (results as unknown[]);
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
  throw new QueryFailedError(
    statements.map((s) => s.sql).join(';\n'),
    statements.flatMap((s) => s.params),
    driverError,
  );
}

/**
 * The placeholders of all statements are filled from one list, so a statement with too few values
 * would shift every value after it into the wrong column; and a `;` would smuggle in a statement.
 */
function assertOneStatement({ sql, params }: Statement): void {
  if (sql.includes(';')) throw new Error(`a batched statement must not contain ';': ${sql}`);
  const placeholders = sql.split('?').length - 1;
  if (placeholders !== params.length) {
    throw new Error(`a batched statement has ${placeholders} placeholders and ${params.length} values: ${sql}`);
  }
}
