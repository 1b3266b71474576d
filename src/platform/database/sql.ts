/** One SQL statement and the values of its `?` placeholders: a value never goes into the text. */
export interface Statement {
  sql: string;
  params: unknown[];
}

/** What mysql2 answers to INSERT/UPDATE/DELETE. */
export interface WriteResult {
  affectedRows: number;
  insertId: number;
}

/** Whether a conditional UPDATE or INSERT changed exactly one row: the claim or compare-and-set won. */
export function changedOneRow(result: unknown): boolean {
  return (result as WriteResult).affectedRows === 1;
}

export function isDuplicateKey(error: unknown): boolean {
  return driverError(error)?.errno === 1062; // ER_DUP_ENTRY
}

/**
 * A duplicate on that unique index in particular. A duplicate of any other key (a later statement's
 * of the payment procedure) must roll the transaction back instead of passing for the claim's.
 */
export function isDuplicateKeyOn(error: unknown, index: string): boolean {
  if (!isDuplicateKey(error)) return false;
  // MariaDB: "... for key 'index'"; MySQL 8: "... for key 'table.index'".
  const key = /for key '(?:[^']*\.)?([^'.]+)'$/.exec(driverError(error)?.sqlMessage ?? '');
  return key?.[1] === index;
}

function driverError(error: unknown): { errno?: number; sqlMessage?: string } | undefined {
  return (error as { driverError?: { errno?: number; sqlMessage?: string } })?.driverError;
}
