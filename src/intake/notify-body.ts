import { parse as parseForm } from 'node:querystring';
import { Server } from 'node:http';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's JSON and form bodies stay the bytes received (a Buffer): its handler parses them itself. */
    bodyAsBytes?: boolean;
  }
}

/** Route config (`@RouteConfig(BODY_AS_BYTES)`) for the notify routes: signatures are checked over the exact bytes. */
export const BODY_AS_BYTES = { bodyAsBytes: true } as const;

function wantsBytes(request: FastifyRequest): boolean {
  return request.routeOptions.config.bodyAsBytes === true;
}

/**
 * JSON and form bodies are parsed once: a route marked BODY_AS_BYTES gets the bytes (its verifier
 * parses them), every other route the parsed body, as Nest's own parsers would give it.
 */
export function registerBodyParsers(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  const { onProtoPoisoning, onConstructorPoisoning } = fastify.initialConfig;
  const parseJson = fastify.getDefaultJsonParser(onProtoPoisoning ?? 'error', onConstructorPoisoning ?? 'error');
  app.useBodyParser<Server>('application/json', {}, (request, body, done) => {
    if (wantsBytes(request)) done(null, body);
    // Fastify's own JSON parser (prototype-poisoning checks included) reads a Buffer as well as a string.
    else void parseJson(request, body as unknown as string, done);
  });
  app.useBodyParser<Server>('application/x-www-form-urlencoded', {}, (request, body, done) => {
    done(null, wantsBytes(request) ? body : parseForm(body.toString('utf8')));
  });
}
