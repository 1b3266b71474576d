import { IncomingMessage } from 'node:http';
import { Module, RequestMethod } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { destination } from 'pino';
import { loadLogLevel } from '../config/logging.config';

/**
 * The notify route runs without pino-http: it logs no request line, and its lines (the outcome, a
 * refusal) carry the request id themselves. That saves the middleware, a child logger and an
 * AsyncLocalStorage scope on every delivery, the hottest path of the service.
 */
const NOTIFY_ROUTE = { method: RequestMethod.POST, path: 'notify/:channel' };

/** Machines' endpoints, and the notifications, which log their outcome instead. */
const NOT_LOGGED = /^\/(metrics$|metrics\?|health\/|notify\/)/;

type RequestOfMiddleware = IncomingMessage & { originalUrl?: string };

/** The URL as received: middleware (middie) sees `url` relative to its mount point, `originalUrl` keeps it whole. */
function pathOf(req: RequestOfMiddleware): string {
  return req.originalUrl ?? req.url ?? '';
}

/**
 * Structured JSON logs with a correlation id per request (Fastify's request id, which app.factory
 * takes from X-Request-Id when the caller sends one).
 * Requests are logged as method, url and id only: headers and bodies carry signatures, tokens and
 * payer data, and never reach a log. A notification's one line is its outcome (NotificationOutcomeLog)
 * or its refusal (HttpErrorFilter), both under the request's id: pino-http adds none for /notify/.
 */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      useFactory: () => ({
        exclude: [NOTIFY_ROUTE],
        pinoHttp: [
          {
            level: loadLogLevel(),
            // The serializers below read the raw request directly: pino-http's wrapping would first
            // copy every header into a new object, per request, only for these to drop them.
            wrapSerializers: false,
            serializers: {
              req: (req: RequestOfMiddleware) => ({ id: req.id, method: req.method, url: pathOf(req) }),
              res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
            },
            // Never logged by the serializer above; should a log call pass a request's headers, none of them shows.
            redact: ['req.headers'],
            autoLogging: {
              ignore: (req: RequestOfMiddleware) => NOT_LOGGED.test(pathOf(req)),
            },
          },
          // Lines logged while a write is in flight go out together in the next one: under load that
          // is one write(2) for many lines instead of one each. Nothing is held back when idle.
          destination({ dest: 1, sync: false }),
        ],
      }),
    }),
  ],
})
export class LoggingModule {}
