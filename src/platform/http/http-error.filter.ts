import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { FastifyReply, FastifyRequest } from 'fastify';
import { QueryFailedError } from 'typeorm';
import { describeDatabaseRefusal } from '../database/database-unavailable';
import { DATABASE_REFUSED_LOG, describeError, ErrorAnswer, isUnexpected } from './error-answer';

/**
 * Where the service's own APIs' errors become HTTP answers (describeError): domain errors and
 * client mistakes keep their 4xx, database trouble is a retryable 503, anything else a 500 without
 * internals. The notify route answers its failures itself, in each platform's format
 * (NotificationIntake).
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger(HttpErrorFilter.name);

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const answer = describeError(exception);
    this.log(answer, exception, request);
    if (answer.code === 'DatabaseRefused') {
      this.logger.error(`${DATABASE_REFUSED_LOG}: ${describeDatabaseRefusal(exception as QueryFailedError)}`);
    }

    const path = request.url.split('?')[0];
    if (path.startsWith('/health/') && exception instanceof HttpException) {
      reply.status(answer.status).send(exception.getResponse()); // terminus' per-check details
    } else {
      reply.status(answer.status).send({ statusCode: answer.status, error: answer.code, message: answer.message });
    }
  }

  private log(answer: ErrorAnswer, exception: unknown, request: FastifyRequest): void {
    const line = `${request.method} ${request.url.split('?')[0]} → ${answer.status} ${answer.code}: ${answer.message}`;
    // Expected refusals (a disabled channel, an unknown order) are warnings; only the unexpected carries a stack.
    if (isUnexpected(answer, exception)) this.logger.error(line, (exception as Error)?.stack);
    else this.logger.warn(line);
  }
}
