import { HttpException, HttpStatus } from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { isTransientDatabaseError } from '../database/database-unavailable';
import { DomainError } from '../../domain/domain-error';

/** What a failure becomes in an HTTP answer: its status, a stable code, and a message for the caller. */
export interface ErrorAnswer {
  status: number;
  code: string;
  message: string;
}

/**
 * Domain errors and client mistakes keep their 4xx, database trouble is a retryable 503, anything
 * else a 500 without internals.
 */
export function describeError(exception: unknown): ErrorAnswer {
  if (exception instanceof DomainError) {
    return { status: exception.status, code: exception.code, message: exception.message };
  }
  if (exception instanceof HttpException) {
    return { status: exception.getStatus(), code: exception.name, message: httpExceptionMessage(exception) };
  }
  const statusCode = (exception as { statusCode?: number })?.statusCode;
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    // Fastify's own client errors: malformed JSON, body too large, unsupported media type.
    return {
      status: statusCode,
      code: (exception as { code?: string }).code ?? 'BadRequest',
      message: (exception as Error).message,
    };
  }
  if (isTransientDatabaseError(exception)) {
    return {
      status: HttpStatus.SERVICE_UNAVAILABLE,
      code: 'DatabaseUnavailable',
      message: 'database temporarily unavailable; retry later',
    };
  }
  if (exception instanceof QueryFailedError) {
    return {
      status: HttpStatus.INTERNAL_SERVER_ERROR,
      code: 'DatabaseRefused',
      message: 'internal error; retry later',
    };
  }
  return { status: HttpStatus.INTERNAL_SERVER_ERROR, code: 'InternalError', message: 'internal error; retry later' };
}

/** Whether a failure with this answer is logged with its stack: only the unexpected (5xx, not a DomainError). */
export function isUnexpected(answer: ErrorAnswer, exception: unknown): boolean {
  return answer.status >= 500 && !(exception instanceof DomainError);
}

/** A statement the database refused is a fault to mend, not an outage: the log line names the cause. */
export const DATABASE_REFUSED_LOG =
  'the database refused a statement, which retrying will not mend (a configuration or code fault, not an outage)';

function httpExceptionMessage(exception: HttpException): string {
  const response = exception.getResponse();
  const message =
    typeof response === 'object' && response !== null ? (response as { message?: unknown }).message : response;
  return Array.isArray(message) ? message.join('; ') : String(message ?? exception.message);
}
