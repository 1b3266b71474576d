import { QueryFailedError } from 'typeorm';
import {
  ANSWER_DEADLINE_PASSED,
  DATABASE_NOT_YET_ANSWERED,
  POOL_ACQUIRE_TIMEOUT,
  POOL_QUEUE_LIMIT,
  QUERY_TIMEOUT,
} from './bounded-pool';

/**
 * Driver codes that mean the database was not reached or did not answer in time, so nothing was
 * decided by it: the connection was refused, lost or timed out, the pool gave no connection in
 * time, a query ran past its timeout. Deadlocks and lock wait timeouts are NOT among them: the
 * database answered, and the work is retried as a lock conflict.
 */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR',
  QUERY_TIMEOUT, // mysql2: a query ran past its timeout
  'POOL_CLOSED',
  POOL_ACQUIRE_TIMEOUT, // no pooled connection free in time
  POOL_QUEUE_LIMIT,
  DATABASE_NOT_YET_ANSWERED,
  ANSWER_DEADLINE_PASSED, // a wait on the database given up at the answer's deadline
]);

/** Server errnos of the same kind: too many connections, shutting down, killed, statement time limit. */
const UNAVAILABLE_ERRNOS = new Set([
  1040, // ER_CON_COUNT_ERROR
  1053, // ER_SERVER_SHUTDOWN
  1927, // ER_CONNECTION_KILLED (MariaDB)
  1969, // ER_STATEMENT_TIMEOUT (MariaDB max_statement_time)
  3024, // ER_QUERY_TIMEOUT (MySQL max_execution_time)
]);

/**
 * The one definition of "the database is unavailable" (rather than "the database said no"): the
 * exception filter answers it with a retryable 503, and the spool takes such notifications.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const cause: unknown = error instanceof QueryFailedError ? error.driverError : error;
  if (typeof cause !== 'object' || cause === null) return false;
  const { code, errno } = cause as { code?: unknown; errno?: unknown };
  return (
    (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) ||
    (typeof errno === 'number' && UNAVAILABLE_ERRNOS.has(errno))
  );
}

/**
 * Refusals that pass once the cluster settles: lock conflicts (the aborted side runs again), a
 * server turned read-only for a failover, a Galera node not yet part of the primary component.
 */
const TRANSIENT_ERRNOS = new Set([
  1205, // ER_LOCK_WAIT_TIMEOUT
  1213, // ER_LOCK_DEADLOCK (and Galera's certification failure at COMMIT)
  1290, // ER_OPTION_PREVENTS_STATEMENT (read_only during a failover)
  1047, // ER_UNKNOWN_COM_ERROR: "WSREP has not yet prepared node for application use"
]);

/**
 * What a caller may simply retry: the database was away, or answered with a conflict that passes.
 * Anything else the database says (an unknown system variable, a missing table, a syntax error) is
 * a fault of the configuration or the code, and retrying will not mend it.
 */
export function isTransientDatabaseError(error: unknown): boolean {
  if (isDatabaseUnavailable(error)) return true;
  const errno = error instanceof QueryFailedError ? (error.driverError as { errno?: unknown }).errno : undefined;
  return typeof errno === 'number' && TRANSIENT_ERRNOS.has(errno);
}

/** The server's own words for a refusal, for the operator's log: "Unknown system variable 'X' (ER_UNKNOWN_SYSTEM_VARIABLE, errno 1193)". */
export function describeDatabaseRefusal(error: QueryFailedError): string {
  const { code, errno, sqlMessage } = error.driverError as { code?: string; errno?: number; sqlMessage?: string };
  return `${sqlMessage ?? error.message} (${code ?? 'no code'}, errno ${errno ?? '?'})`;
}
