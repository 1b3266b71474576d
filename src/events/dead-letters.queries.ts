import { DataSource } from 'typeorm';

export interface DeadLetter {
  /** `outbox` (never published) or the name of the handler that kept failing. */
  stage: string;
  eventId: string;
  type: string;
  orderNo: string;
  attempts: number;
  lastError: string | null;
  deadLetteredAt: Date;
}

/** Dead-lettered events, outbox and handlers alike, oldest first. */
export async function listDeadLetters(dataSource: DataSource): Promise<DeadLetter[]> {
  const rows: Array<Record<string, unknown> & { last_error: string | null }> = await dataSource.query(
    // The CASTs give both halves one collation: order_no is binary NO PAD, a JSON value is not.
    `SELECT 'outbox' AS stage, event_id, type, CAST(order_no AS CHAR) AS order_no, attempts, last_error, dead_lettered_at
       FROM outbox_event WHERE dead_lettered_at IS NOT NULL
     UNION ALL
     SELECT consumer, event_id, JSON_VALUE(payload, '$.type'), CAST(JSON_VALUE(payload, '$.orderNo') AS CHAR),
       attempts, last_error, dead_lettered_at
       FROM handler_retry WHERE dead_lettered_at IS NOT NULL
     ORDER BY dead_lettered_at`,
  );
  return rows.map((r) => ({
    stage: String(r.stage),
    eventId: String(r.event_id),
    type: String(r.type),
    orderNo: String(r.order_no),
    attempts: Number(r.attempts),
    lastError: r.last_error === null ? null : String(r.last_error),
    deadLetteredAt: new Date(r.dead_lettered_at as string),
  }));
}

/** How many events are dead-lettered, outbox and handlers alike. */
export async function countDeadLetters(dataSource: DataSource): Promise<number> {
  const [row]: Array<{ n: string }> = await dataSource.query(
    `SELECT (SELECT COUNT(*) FROM outbox_event WHERE dead_lettered_at IS NOT NULL)
          + (SELECT COUNT(*) FROM handler_retry WHERE dead_lettered_at IS NOT NULL) AS n`,
  );
  return Number(row.n);
}
