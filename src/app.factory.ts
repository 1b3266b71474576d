import { ModuleMetadata, ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { HttpErrorFilter } from './common/http-error.filter';

/** Larger than any real notification; anything bigger is refused with 413 before it is read. */
export const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * Builds the application exactly as production runs it; tests start it the same way, adding at
 * most modules of their own (extra event handlers) beside AppModule.
 */
export async function createApp(extraImports: ModuleMetadata['imports'] = []): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(
    { module: class ApplicationRoot {}, imports: [AppModule, ...extraImports] },
    new FastifyAdapter({ bodyLimit: BODY_LIMIT_BYTES, trustProxy: true }),
    // Signatures are verified over the exact bytes received, never over a re-serialised body.
    { rawBody: true, bufferLogs: true },
  );
  app.useLogger(app.get(Logger));
  app.useGlobalFilters(new HttpErrorFilter());
  app.useGlobalPipes(
    new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true, stopAtFirstError: false }),
  );
  app.enableShutdownHooks();
  return app;
}
