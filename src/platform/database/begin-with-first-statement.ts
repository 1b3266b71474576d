import { DataSource, QueryRunner } from 'typeorm';
import { QueryResult } from 'typeorm/query-runner/QueryResult.js';

const BEGIN = 'START TRANSACTION';

/**
 * Sends each transaction's START TRANSACTION together with its first statement, as one
 * multi-statement query: a round trip less per transaction (a first delivery pays in two: the
 * batch, then COMMIT). InnoDB does nothing at START TRANSACTION that the first statement would not
 * do itself (the read view is taken at the first read), so the transaction is the same; a
 * transaction that sends no statement at all sends no COMMIT or ROLLBACK either.
 *
 * It wraps `query` of every query runner the DataSource creates: TypeORM sends START TRANSACTION,
 * its statements, COMMIT and ROLLBACK through it. The pool's connections accept several statements
 * in one query (StatementBatch needs it too).
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
  let beginPending = false;
  const query = async (sql: string, parameters?: unknown, structured = false): Promise<unknown> => {
    if (sql === BEGIN) {
      beginPending = true;
      return structured ? new QueryResult() : undefined;
    }
    if (!beginPending) return send(sql, parameters, structured);
    beginPending = false;
    // Nothing was sent since the transaction began: there is nothing to end.
    if (sql === 'COMMIT' || sql === 'ROLLBACK') return structured ? new QueryResult() : undefined;
    const [, ...results] = (await send(`${BEGIN};\n${sql}`, parameters, false)) as unknown[];
    // mysql2 answers one statement with its result, several with the list of them.
    const result = results.length === 1 ? results[0] : results;
    return structured ? toQueryResult(result) : result;
  };
  runner.query = query as QueryRunner['query'];
  return runner;
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
