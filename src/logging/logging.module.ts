import { IncomingMessage } from 'node:http';
import { Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { destination } from 'pino';
import { loadLogLevel } from '../config/logging.config';

/**
 * Structured JSON logs with a correlation id per request (Fastify's request id, which app.factory
 * takes from X-Request-Id when the caller sends one).
 * Requests are logged as method, url and id only: headers and bodies carry signatures, tokens and
 * payer data, and never reach a log.
 */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      useFactory: () => ({
        pinoHttp: [
          {
            level: loadLogLevel(),
            serializers: {
              req: (req: { id: string; method: string; url: string }) => ({
                id: req.id,
                method: req.method,
                url: req.url,
              }),
              res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
            },
            redact: ['req.headers.authorization', 'req.headers["wechatpay-signature"]'],
            autoLogging: {
              ignore: (req: IncomingMessage) => req.url === '/metrics' || (req.url ?? '').startsWith('/health/'),
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
