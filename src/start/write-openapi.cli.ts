import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { AppModule, DOCUMENTED_MODULES } from '../app.module';
import { buildOpenApiDocument } from '../platform/openapi/openapi';

/** The committed copy of what /docs-json serves; a test fails when the two differ. */
export const OPENAPI_FILE = join(__dirname, '../../openapi.json');

/**
 * `npm run openapi`: rewrites openapi.json. The app is built in preview mode (modules and
 * controllers without their providers), so no database or configuration is needed.
 */
async function main(): Promise<void> {
  const app = await NestFactory.create(AppModule, new FastifyAdapter(), { preview: true, logger: false });
  writeFileSync(OPENAPI_FILE, `${JSON.stringify(buildOpenApiDocument(app, DOCUMENTED_MODULES), null, 2)}\n`);
  await app.close();
  process.stdout.write(`wrote ${OPENAPI_FILE}\n`);
}

main().catch((error: Error) => {
  process.stderr.write(`openapi: ${error.stack}\n`);
  process.exit(1);
});
