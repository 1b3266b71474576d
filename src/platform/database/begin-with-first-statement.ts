import { DataSource, QueryFailedError, QueryRunner } from 'typeorm';
import { QueryResult } from 'typeorm/query-runner/QueryResult.js';

const BEGIN = 'START TRANSACTION';

/**
 * Sends each transaction's START TRANSACTION together with its first statement, as one
 * multi-statement query: a round trip less per transaction. InnoDB does nothing at START TRANSACTION
 * that the first statement would not do itself (the read view is taken at the first read), so the
 * transaction is the same; a transaction that sends no statement at all sends no COMMIT or ROLLBACK
 * either. Nor does one that the server says it has ended (a statement's OK packet without the
 * in-transaction flag): a procedure that commits inside (pay_v1) is a transaction in ONE round
 * trip, and a statement sent after it is refused, since it would run outside any transaction.
 *
 * It wraps `query` of every query runner the DataSource creates: TypeORM sends START TRANSACTION,
 * its statements, COMMIT and ROLLBACK through it. The pool's connections accept several statements
 * in one query.
 */
export function beginWithFirstStatement(dataSource: DataSource): DataSource {
  const createQueryRunner = dataSource.createQueryRunner.bind(dataSource);
  dataSource.createQueryRunner = (mode) => deferBegin(createQueryRunner(mode));
  return dataSource;
}

function deferBegin(runner: QueryRunner): QueryRunner {
  const send = runner.query.bind(runner) as (
    sql: string,
    parameters?: unknown,
    structured?: boolean,
  ) => Promise<unknown>;
  let state: 'none' | 'beginPending' | 'open' | 'endedOnServer' = 'none';
  const sendInTransaction = async (sql: string, parameters: unknown, structured: boolean): Promise<unknown> => {
    const result = await send(sql, parameters, structured);
    if (transactionEnded(structured ? (result as QueryResult).raw : result)) state = 'endedOnServer';
    return result;
  };
  const query = async (sql: string, parameters?: unknown, structured = false): Promise<unknown> => {
    if (sql === BEGIN) {
      state = 'beginPending';
      return structured ? new QueryResult() : undefined;
    }
    if (sql === 'COMMIT' || sql === 'ROLLBACK') {
      const ended = state === 'beginPending' || state === 'endedOnServer';
      state = 'none';
      // Nothing was sent since the transaction began, or the server has ended it: nothing to end.
      if (ended) return structured ? new QueryResult() : undefined;
      return send(sql, parameters, structured);
    }
    if (state === 'endedOnServer') throw transactionGone(sql, parameters);
    if (state === 'open') return sendInTransaction(sql, parameters, structured);
    if (state === 'none') return send(sql, parameters, structured);
    state = 'open';
    const [, ...results] = (await sendInTransaction(`${BEGIN};\n${sql}`, parameters, false)) as unknown[];
    // mysql2 answers one statement with its result, several with the list of them.
    const result = results.length === 1 ? results[0] : results;
    return structured ? toQueryResult(result) : result;
  };
  runner.query = query as QueryRunner['query'];
  return runner;
}

/** The server's status flag, in every OK packet, for "a transaction is open on this session". */
const SERVER_STATUS_IN_TRANS = 0x0001;

/**
 * True when the server says, in the last OK packet of an answer, that no transaction is open on the
 * session any more: a statement committed it (a procedure that ends its own transaction, pay_v1).
 * An answer that ends in rows says nothing.
 */
function transactionEnded(answer: unknown): boolean {
  const last: unknown = Array.isArray(answer) ? answer[answer.length - 1] : answer;
  const status = (last as { serverStatus?: unknown } | null)?.serverStatus;
  return typeof status === 'number' && (status & SERVER_STATUS_IN_TRANS) === 0;
}

/**
 * A statement for a transaction the server has ended is not sent: it would run outside any
 * transaction, each write committing on its own. Answered as the deadlock a transaction that died
 * under its caller is, which callers treat as transient and run again (TransactionRunner).
 */
function transactionGone(sql: string, parameters: unknown): QueryFailedError {
  const driverError = Object.assign(
    new Error('the transaction has ended on the server; a statement after its end is not sent'),
    { errno: 1213, code: 'ER_LOCK_DEADLOCK', sqlState: '40001' },
  );
  return new QueryFailedError(sql, Array.isArray(parameters) ? parameters : [], driverError);
}

/** What TypeORM's MysqlQueryRunner makes of a raw result for a caller that asked for a structured one. */
function toQueryResult(raw: unknown): QueryResult {
  const result = new QueryResult();
  result.raw = raw;
  if (Array.isArray(raw)) result.records = raw;
  const affectedRows = (raw as { affectedRows?: unknown } | null)?.affectedRows;
  if (typeof affectedRows === 'number') result.affected = affectedRows;
  return result;
}
