import { DataSource, EntityManager } from 'typeorm';

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
