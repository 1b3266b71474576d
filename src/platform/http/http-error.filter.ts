import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { FastifyReply, FastifyRequest } from 'fastify';
import { describeError, errorBody, logFailure } from './error-answer';

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
    const path = request.url.split('?')[0];
    logFailure(
      this.logger,
      `${request.method} ${path} → ${answer.status} ${answer.code}: ${answer.message}`,
      answer,
      exception,
    );

    if (path.startsWith('/health/') && exception instanceof HttpException) {
      reply.status(answer.status).send(exception.getResponse()); // terminus' per-check details
    } else {
      reply.status(answer.status).send(errorBody(answer));
    }
  }
}
