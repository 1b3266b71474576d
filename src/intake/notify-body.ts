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

/** Route config (`@RouteConfig(BODY_AS_BYTES)`) for the notify routes: signatures are checked over the exact bytes (JSON, form or XML). */
export const BODY_AS_BYTES = { bodyAsBytes: true } as const;

const WANTS_BYTES = Symbol('wantsBytes');

/**
 * Asked three times per request (request logging, the body parser, the known-repeat step), read
 * once: Fastify builds a new `routeOptions` object on every read.
 */
export function wantsBytes(request: FastifyRequest): boolean {
  const marked = request as FastifyRequest & { [WANTS_BYTES]?: boolean };
  return (marked[WANTS_BYTES] ??= request.routeOptions.config.bodyAsBytes === true);
}

/** Far deeper than any DTO here; deep enough bodies overflow the stack of the recursive validation. */
export const MAX_JSON_NESTING = 32;

const OPEN_BRACKETS = new Set([0x5b, 0x7b]); // [ {
const CLOSE_BRACKETS = new Set([0x5d, 0x7d]); // ] }
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Whether arrays and objects nest deeper than `max`, counted over the bytes before anything is parsed. */
export function jsonNestingExceeds(body: Buffer, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const byte = body[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (OPEN_BRACKETS.has(byte) && ++depth > max) return true;
    else if (CLOSE_BRACKETS.has(byte)) depth--;
  }
  return false;
}

function tooDeeplyNested(): Error {
  return Object.assign(new Error(`the JSON body nests deeper than ${MAX_JSON_NESTING} levels`), { statusCode: 400 });
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
    else if (jsonNestingExceeds(body, MAX_JSON_NESTING)) done(tooDeeplyNested(), undefined);
    // Fastify's own JSON parser (prototype-poisoning checks included) reads a Buffer as well as a string.
    else void parseJson(request, body as unknown as string, done);
  });
  app.useBodyParser<Server>('application/x-www-form-urlencoded', {}, (request, body, done) => {
    done(null, wantsBytes(request) ? body : parseForm(body.toString('utf8')));
  });
  // XML notifications (a channel's older dialect) reach their verifier as bytes; no other route takes XML.
  for (const type of ['text/xml', 'application/xml']) {
    app.useBodyParser<Server>(type, {}, (request, body, done) => {
      if (wantsBytes(request)) done(null, body);
      else done(Object.assign(new Error(`Unsupported Media Type: ${type}`), { statusCode: 415 }), undefined);
    });
  }
}
