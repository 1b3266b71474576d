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
  const cause = error instanceof QueryFailedError ? error.driverError : error;
  if (typeof cause !== 'object' || cause === null) return false;
  const { code, errno } = cause as { code?: unknown; errno?: unknown };
  return (
    (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) ||
    (typeof errno === 'number' && UNAVAILABLE_ERRNOS.has(errno))
  );
}
