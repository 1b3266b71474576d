import { Injectable } from '@nestjs/common';
import { Propagation, Transactional, TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';

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
 * Sends statements to the current transaction's connection as ONE multi-statement query: one round
 * trip instead of one each. The server runs them in order and stops at the first that fails; the
 * caller gets that error, and the statements before it stay done within the transaction, as they
 * would have one by one.
 */
@Injectable()
export class StatementBatch {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /** One result per statement, in order: mysql2's ResultSetHeader for a write, the rows for a read. */
  @Transactional(Propagation.Mandatory)
  async run(statements: Statement[]): Promise<unknown[]> {
    statements.forEach(assertOneStatement);
    const results: unknown = await this.txHost.tx.query(
      statements.map((s) => s.sql).join(';\n'),
      statements.flatMap((s) => s.params),
    );
    // mysql2 answers a single statement with its result, several with an array of them.
    return statements.length === 1 ? [results] : (results as unknown[]);
  }
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
