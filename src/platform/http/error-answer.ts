import { HttpException, HttpStatus, Logger } from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { describeDatabaseRefusal, isTransientDatabaseError } from '../database/database-unavailable';
import { DomainError } from '../../domain/domain-error';

/** What a failure becomes in an HTTP answer: its status, a stable code, and a message for the caller. */
export interface ErrorAnswer {
  status: number;
  code: string;
  message: string;
  /** Further fields of the body (a channel refusal's channelCode and channelMessage). */
  fields?: Record<string, string>;
}

/**
 * Domain errors and client mistakes keep their 4xx, database trouble is a retryable 503, anything
 * else a 500 without internals.
 */
export function describeError(exception: unknown): ErrorAnswer {
  if (exception instanceof DomainError) {
    return { status: exception.status, code: exception.code, message: exception.message, fields: exception.fields };
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    return { status, code: httpErrorCode(status), message: httpExceptionMessage(exception) };
  }
  const statusCode = (exception as { statusCode?: number })?.statusCode;
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    // Fastify's own client errors: malformed JSON, body too large, unsupported media type.
    return { status: statusCode, code: httpErrorCode(statusCode), message: (exception as Error).message };
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

/**
 * The product's code for an error the framework raised (validation, an unknown route, Fastify's
 * client errors): by its status, never the framework's class name (`BadRequestException`) or
 * internal code (`FST_ERR_CTP_INVALID_MEDIA_TYPE`), which would change with the framework and mean
 * nothing to a caller.
 */
const HTTP_ERROR_CODES: Record<number, string> = {
  400: 'MalformedRequest',
  401: 'Unauthenticated',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  408: 'RequestTimeout',
  409: 'Conflict',
  411: 'LengthRequired',
  413: 'PayloadTooLarge',
  414: 'UriTooLong',
  415: 'UnsupportedMediaType',
  422: 'MalformedRequest',
  429: 'TooManyRequests',
  431: 'HeadersTooLarge',
  503: 'Unavailable',
};

export function httpErrorCode(status: number): string {
  return HTTP_ERROR_CODES[status] ?? (status >= 500 ? 'InternalError' : 'MalformedRequest');
}

/** The body of every error answer of the service's own APIs. */
export function errorBody(answer: ErrorAnswer): { statusCode: number; error: string; message: string } {
  return { statusCode: answer.status, error: answer.code, message: answer.message, ...answer.fields };
}

/**
 * Logs a failure's answer line: expected refusals (a disabled channel, an unknown order) as
 * warnings, only the unexpected (5xx, not a DomainError) with its stack. A statement the database
 * refused is a fault to mend, not an outage: a second line names the cause.
 */
export function logFailure(logger: Logger, line: string | object, answer: ErrorAnswer, failure: unknown): void {
  if (answer.status >= 500 && !(failure instanceof DomainError)) logger.error(line, (failure as Error)?.stack);
  else logger.warn(line);
  if (answer.code === 'DatabaseRefused') {
    logger.error(
      `the database refused a statement, which retrying will not mend (a configuration or code fault, not an outage): ${describeDatabaseRefusal(failure as QueryFailedError)}`,
    );
  }
}

function httpExceptionMessage(exception: HttpException): string {
  const response = exception.getResponse();
  const message =
    typeof response === 'object' && response !== null ? (response as { message?: unknown }).message : response;
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- an HttpException's message is the caller's: a string in practice, stringified as given otherwise
  return Array.isArray(message) ? message.join('; ') : String(message ?? exception.message);
}
