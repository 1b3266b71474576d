import { DataSource, EntityManager } from 'typeorm';

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

/**
 * Puts dead-lettered events back in line with a fresh attempt count: the relay publishes them
 * again, the retry worker runs their handlers again. `eventIds` empty means all of them.
 * Safe to run twice: consumers deduplicate by eventId.
 */
export async function replayDeadLetters(dataSource: DataSource, eventIds: string[] = []): Promise<number> {
  return dataSource.transaction((tx) => requeueDeadLetters(tx, eventIds));
}

/** replayDeadLetters inside the caller's transaction (the admin API audits it in the same one). */
export async function requeueDeadLetters(tx: Pick<EntityManager, 'query'>, eventIds: string[] = []): Promise<number> {
  const only = eventIds.length > 0 ? ' AND event_id IN (?)' : '';
  const params = eventIds.length > 0 ? [eventIds] : [];
  const outbox = await tx.query<{ affectedRows: number }>(
    `UPDATE outbox_event SET dead_lettered_at = NULL, attempts = 0, next_attempt_at = NULL WHERE dead_lettered_at IS NOT NULL${only}`,
    params,
  );
  const handlers = await tx.query<{ affectedRows: number }>(
    `UPDATE handler_retry SET dead_lettered_at = NULL, attempts = 0, next_attempt_at = ? WHERE dead_lettered_at IS NOT NULL${only}`,
    [new Date(), ...params],
  );
  return Number(outbox.affectedRows) + Number(handlers.affectedRows);
}

/** How many events are dead-lettered, outbox and handlers alike. */
export async function countDeadLetters(dataSource: DataSource): Promise<number> {
  const [row]: Array<{ n: string }> = await dataSource.query(
    `SELECT (SELECT COUNT(*) FROM outbox_event WHERE dead_lettered_at IS NOT NULL)
          + (SELECT COUNT(*) FROM handler_retry WHERE dead_lettered_at IS NOT NULL) AS n`,
  );
  return Number(row.n);
}
