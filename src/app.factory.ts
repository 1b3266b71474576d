import { randomUUID } from 'node:crypto';
import { IncomingHttpHeaders } from 'node:http';
import { ModuleMetadata, ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { getToken } from '@willsoto/nestjs-prometheus';
import { PaymentChannels } from './channels/payment-channels';
import { HttpErrorFilter } from './common/http-error.filter';
import { NOTIFICATIONS_TOTAL } from './metrics/metrics.module';
import { loadOpenApiConfig } from './config/openapi.config';
import { serveOpenApi } from './openapi/openapi';

/** Larger than any real notification; anything bigger is refused with 413 before it is read. */
export const BODY_LIMIT_BYTES = 64 * 1024;

/** The caller's X-Request-Id when it is a sane token, so that logs correlate across services; else a new one. */
function requestId(request: { headers: IncomingHttpHeaders }): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && /^[\w\-]{1,64}$/.test(given) ? given : randomUUID();
}

/**
 * Builds the application exactly as production runs it; tests start it the same way, adding at
 * most modules of their own (extra event handlers) beside AppModule.
 */
export async function createApp(extraImports: ModuleMetadata['imports'] = []): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(
    { module: class ApplicationRoot {}, imports: [AppModule, ...extraImports] },
    new FastifyAdapter({ bodyLimit: BODY_LIMIT_BYTES, trustProxy: true, requestIdHeader: false, genReqId: requestId }),
    // Signatures are verified over the exact bytes received, never over a re-serialised body.
    { rawBody: true, bufferLogs: true },
  );
  app.useLogger(app.get(Logger));
  app.useGlobalFilters(new HttpErrorFilter(app.get(PaymentChannels), app.get(getToken(NOTIFICATIONS_TOTAL))));
  app.useGlobalPipes(
    new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true, stopAtFirstError: false }),
  );
  app.enableShutdownHooks();
  if (loadOpenApiConfig().enabled) serveOpenApi(app);
  return app;
}
