/** What mysql2 answers to INSERT/UPDATE/DELETE. */
export interface WriteResult {
  affectedRows: number;
  insertId: number;
}

export function isDuplicateKey(error: unknown): boolean {
  return (error as { driverError?: { errno?: number } })?.driverError?.errno === 1062; // ER_DUP_ENTRY
}
