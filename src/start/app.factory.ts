import { randomUUID } from 'node:crypto';
import { IncomingHttpHeaders, Server } from 'node:http';
import { ModuleMetadata, ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import { AfterPaymentExamplesModule } from '../events/after-payment/after-payment-examples.module';
import { AppModule, DOCUMENTED_MODULES } from '../app.module';
import { HttpErrorFilter } from '../platform/http/http-error.filter';
import { HttpLimits, loadServerConfig } from '../platform/config/server.config';
import { loadOpenApiConfig } from '../platform/config/openapi.config';
import { serveOpenApi } from '../platform/openapi/openapi';
import { registerBodyParsers, wantsBytes } from '../intake/notify-body';
import { logRequests } from '../platform/logging/logging.module';
import { serveNotifyRoute } from '../intake/notify.route';
import { loadConsoleConfig } from '../admin/console/console.config';
import { serveConsole } from '../admin/console/serve-console';
import { bindAsyncResourcesWithoutDeprecatedProperty } from '../platform/transaction/async-resource-bind';

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
  // Nest's interceptor chain binds twice per request: Node 20's own bind costs ~12 µs a call.
  bindAsyncResourcesWithoutDeprecatedProperty();
  const { http, exampleHandlers } = loadServerConfig();
  // Opt-in (EXAMPLE_HANDLERS=true), decided here rather than when AppModule is imported, so that a
  // .env read at start counts: the examples grant fake points, coupons and shipments.
  const examples = exampleHandlers ? [AfterPaymentExamplesModule] : [];
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: true,
    requestIdHeader: false,
    genReqId: requestId,
    requestTimeout: http.requestTimeoutMs,
    keepAliveTimeout: http.keepAliveTimeoutMs,
    // How often Node looks for requests past their headers or request timeout (default 30 s):
    // a connection that never sends a request is closed about headersTimeout after it opened.
    http: { connectionsCheckingInterval: 1000 },
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    { module: class ApplicationRoot {}, imports: [AppModule, ...examples, ...extraImports] },
    adapter,
    // A failed start is reported by the caller in one line, not by the framework with a stack trace.
    { bufferLogs: true, abortOnError: false, logger: false },
  );
  app.useLogger(app.get(Logger));
  // Every route but the notify routes (the routes whose body stays bytes) logs its requests.
  await logRequests(app, wantsBytes);
  // Signatures are verified over the exact bytes received: the notify routes keep their body unparsed.
  registerBodyParsers(app);
  serveNotifyRoute(app);
  app.useGlobalFilters(new HttpErrorFilter());
  app.useGlobalPipes(
    new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true, stopAtFirstError: false }),
  );
  // No enableShutdownHooks(): main.ts installs GracefulShutdown, which drains before the app closes.
  if (loadOpenApiConfig().enabled) serveOpenApi(app, DOCUMENTED_MODULES);
  if (loadConsoleConfig().enabled) await serveConsole(app);
  limitConnections(app.getHttpServer(), http);
  // Callback-style hooks here and in GracefulShutdown: an async one costs promises on every request.
  adapter.getInstance().addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  return app;
}

function limitConnections(server: Server, http: HttpLimits): void {
  // Node requires headersTimeout <= requestTimeout.
  server.headersTimeout = Math.min(http.headersTimeoutMs, http.requestTimeoutMs);
  server.maxConnections = http.maxConnections;
}
