import { IncomingMessage, ServerResponse } from 'node:http';
import { unescape } from 'node:querystring';
import { Injectable, Module } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyRequest } from 'fastify';
import { LoggerModule, PinoLogger } from 'nestjs-pino';
import { destination, DestinationStream, Logger } from 'pino';
import { HttpLogger, Options, pinoHttp } from 'pino-http';
import { loadLogLevel } from '../config/logging.config';

/** Machines' endpoints, which pino-http serves a logger but gives no request line. */
const NOT_LOGGED = /^\/(metrics$|metrics\?|health\/)/;

type LoggedRequest = IncomingMessage & { id?: unknown; log?: Logger };

/** Query parameters that carry a credential, as compared: lower case, letters and digits only. */
const CREDENTIAL_PARAMETERS = new Set(
  [
    'token',
    'access_token',
    'refresh_token',
    'id_token',
    'auth',
    'authorization',
    'bearer',
    'sign',
    'signature',
    'password',
    'passwd',
    'secret',
    'client_secret',
    'key',
    'api_key',
    'apikey',
  ].map(comparable),
);

/**
 * The URL with the value of each credential parameter replaced, everything else as received.
 * The query is read as a server would, and more leniently, so that no spelling of a credential's
 * name slips through: it starts at the first `?` or `;` and its pairs are split on `&`, `;` and `?`
 * (servers and proxies differ); each name is percent-decoded as Node's querystring does (a
 * malformed escape dropped), twice over, and compared without case, brackets, control
 * characters, spaces or punctuation: `token%00`, `Token `, `to%6Ben`, `api-key` and `token[]` are
 * all `token` or `apikey`. Redacting a harmless parameter by mistake costs nothing.
 */
export function withoutCredentials(url: string | undefined): string | undefined {
  if (url === undefined) return url;
  const start = url.search(/[?;]/);
  if (start < 0) return url;
  // A separator, then a pair, alternately: split keeps the separators at the odd indexes.
  const parts = url.slice(start + 1).split(/([&;?])/);
  const redacted = parts.map((part, index) => {
    if (index % 2 === 1) return part;
    const equals = part.indexOf('=');
    return equals >= 0 && CREDENTIAL_PARAMETERS.has(comparable(part.slice(0, equals)))
      ? `${part.slice(0, equals)}=[REDACTED]`
      : part;
  });
  return `${url.slice(0, start + 1)}${redacted.join('')}`;
}

/**
 * A parameter's name as compared: decoded (twice: a proxy may have decoded once); brackets,
 * malformed escapes and all but letters and digits dropped; lower case.
 */
function comparable(name: string): string {
  const decoded = unescape(unescape(name.replace(/\+/g, ' ')));
  return decoded
    .replace(/\[[^\]]*\]/g, '')
    .replace(/%[^]{0,2}/g, '') // an escape still undecoded is malformed: dropped with what it would have been
    .replace(/[^A-Za-z0-9]/g, '')
    .toLowerCase();
}

/**
 * The process's one log output and the request logger (pino-http) writing to it.
 * Requests are logged as method, url and id only: headers and bodies carry signatures, tokens and
 * payer data, and never reach a log; nor does a credential passed in the query string.
 */
@Injectable()
export class RequestLogging {
  /** Lines logged while a write is in flight go out together in the next one: under load that is
   *  one write(2) for many lines instead of one each. Nothing is held back when idle. */
  private readonly output: DestinationStream = destination({ dest: 1, sync: false });
  readonly logRequest: HttpLogger = pinoHttp(requestLoggerOptions(), this.output);

  /** For nestjs-pino's logger (the lines outside a request): the same options, the same output. */
  pinoParams(): [Options, DestinationStream] {
    return [requestLoggerOptions(), this.output];
  }
}

/** A new object each time: pino-http deletes the options it has read. */
function requestLoggerOptions(): Options {
  return {
    level: loadLogLevel(),
    // The serializers below read the raw request directly: pino-http's wrapping would first
    // copy every header into a new object, per request, only for these to drop them.
    wrapSerializers: false,
    serializers: {
      req: (req: LoggedRequest) => ({ id: req.id, method: req.method, url: withoutCredentials(req.url) }),
      res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
    },
    // Never logged by the serializer above; should a log call pass a request's headers, none of them shows.
    redact: ['req.headers'],
    autoLogging: { ignore: (req: IncomingMessage) => NOT_LOGGED.test(req.url ?? '') },
  };
}

/**
 * Structured JSON logs with a correlation id per request (Fastify's request id, which app.factory
 * takes from X-Request-Id when the caller sends one). nestjs-pino provides the logger; the request
 * logger runs as a Fastify hook (`logRequests`), not as Nest middleware, so that the notify routes
 * skip it entirely.
 */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      providers: [RequestLogging],
      inject: [RequestLogging],
      // No routes: nestjs-pino's middleware would put every request, the notify routes' too, through
      // middie and Nest's middleware matching (logRequests does its work instead).
      useFactory: (logging: RequestLogging) => ({ pinoHttp: logging.pinoParams(), forRoutes: [] }),
    }),
  ],
})
export class LoggingModule {}

/**
 * pino-http, and nestjs-pino's request-bound logger, for every request except the routes `skip`
 * names. The notify routes are skipped: they log no request line, and their one line (the outcome,
 * or a refusal) carries the request id itself. That spares the hottest path of the service a child
 * logger, an AsyncLocalStorage scope and middie's copying of the request's properties.
 */
export async function logRequests(
  app: NestFastifyApplication,
  skip: (request: FastifyRequest) => boolean,
): Promise<void> {
  const { logRequest } = app.get(RequestLogging, { strict: false });
  const contexts = await app.resolve(PinoLogger);
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRequest', (request, reply, done) => {
      if (skip(request)) return done();
      const raw: LoggedRequest = request.raw;
      raw.id = request.id;
      logRequest(raw, reply.raw);
      // nestjs-pino's logger, for the rest of this request, binds the request as pino-http does.
      contexts.runInContext(done, { bindings: { req: raw } });
    });
}
