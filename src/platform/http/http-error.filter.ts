import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import { FastifyReply, FastifyRequest } from 'fastify';
import { QueryFailedError } from 'typeorm';
import { Counter } from 'prom-client';
import { NotifyEndpoint } from '../../channels/payment-channel';
import { PaymentChannels } from '../../channels/payment-channels';
import { describeDatabaseRefusal, isTransientDatabaseError } from '../database/database-unavailable';
import { DomainError } from '../../domain/domain-error';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route parameter naming the channel in whose format the route's failures are answered. */
    channelParam?: string;
  }
}

/** Route config (`@RouteConfig`) of a route whose failures each channel answers in its own format. */
export function answeredByChannel(param: string): { channelParam: string } {
  return { channelParam: param };
}

interface ErrorAnswer {
  status: number;
  code: string;
  message: string;
}

/**
 * The one place errors become HTTP answers: domain errors and client mistakes keep their 4xx,
 * database trouble is a retryable 503, anything else a 500 without internals. Each platform's
 * endpoint answers in the format that platform expects, so it retries.
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger(HttpErrorFilter.name);

  constructor(
    private readonly channels: PaymentChannels,
    private readonly notifications: Counter<string>,
  ) {}

  /** The channel a route declares it answers for (the notify route), which then answers the failure itself. */
  private answeringChannel(request: FastifyRequest): NotifyEndpoint | undefined {
    const param = request.routeOptions?.config?.channelParam;
    const notifyPath = param ? (request.params as Record<string, string | undefined> | undefined)?.[param] : undefined;
    return notifyPath ? this.channels.byNotifyPath(notifyPath) : undefined;
  }

  /**
   * Refusals (never to be trusted, malformed, or for an order this service does not know) apart from
   * transient failures (5xx). An unknown order is retried by the platform too, but counts as REFUSED:
   * PaymentNotificationsRefused fires when many are, which means orders are not being registered.
   */
  private countRefusal(channel: string, answer: ErrorAnswer): void {
    const outcome = answer.status >= 500 ? 'FAILED' : 'REFUSED';
    this.notifications.inc({ channel, outcome, reason: answer.code });
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const answer = describe(exception);
    const channel = this.answeringChannel(request);
    this.log(answer, exception, request, channel !== undefined);
    if (answer.code === 'DatabaseRefused') this.logRefusal(exception as QueryFailedError);

    const path = request.url.split('?')[0];
    if (path.startsWith('/health/') && exception instanceof HttpException) {
      reply.status(answer.status).send(exception.getResponse()); // terminus' per-check details
    } else if (channel) {
      this.countRefusal(channel.channel, answer);
      const failure = channel.failureReply(answer.status, toCaller(answer));
      reply.status(failure.status).headers(failure.headers).send(failure.body);
    } else {
      reply.status(answer.status).send({ statusCode: answer.status, error: answer.code, message: answer.message });
    }
  }

  /** A statement the database refused is a fault to mend, not an outage: the log names the cause. */
  private logRefusal(error: QueryFailedError): void {
    this.logger.error(
      `the database refused a statement, which retrying will not mend (a configuration or code fault, not an outage): ${describeDatabaseRefusal(error)}`,
    );
  }

  private log(answer: ErrorAnswer, exception: unknown, request: FastifyRequest, answeredByChannel: boolean): void {
    const msg = `${request.method} ${request.url.split('?')[0]} → ${answer.status} ${answer.code}: ${answer.message}`;
    // The notify route runs without pino-http (logging.module.ts): its lines carry the request id themselves.
    const line = answeredByChannel ? { msg, req: { id: String(request.id) } } : msg;
    // Expected refusals (disabled channel, unknown order) are warnings; only the unexpected carries a stack.
    if (answer.status >= 500 && !(exception instanceof DomainError))
      this.logger.error(line, (exception as Error)?.stack);
    else this.logger.warn(line);
  }
}

function describe(exception: unknown): ErrorAnswer {
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

/**
 * What an unauthenticated caller of a notify route is told of a refusal that would name our
 * configuration (merchant and app ids, key ids, fingerprints): the kind, in general terms. The log
 * line keeps the specifics for the operator.
 */
const GENERAL_REFUSALS: Partial<Record<string, string>> = {
  InvalidSignature: 'sign does not verify: the signature is refused',
  UnknownSigningKey: 'the signing key or certificate is not one this service trusts',
  MerchantMismatch: 'the notification is not for a merchant or application of this service',
  Undecryptable: 'the encrypted content does not decrypt with the key of this merchant',
};

function toCaller(answer: ErrorAnswer): string {
  return GENERAL_REFUSALS[answer.code] ?? answer.message;
}

function httpExceptionMessage(exception: HttpException): string {
  const response = exception.getResponse();
  const message =
    typeof response === 'object' && response !== null ? (response as { message?: unknown }).message : response;
  return Array.isArray(message) ? message.join('; ') : String(message ?? exception.message);
}
