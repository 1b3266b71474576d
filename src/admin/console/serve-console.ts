import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import fastifyStatic from '@fastify/static';
import { Logger } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';

/** Where `npm run build` puts the console (Vite's outDir, see console/vite.config.mjs). */
const BUILD_DIR = join('dist', 'console');

export const CONSOLE_PREFIX = '/console/';

/**
 * Everything the console loads comes from this origin: no inline script or style, no CDN, no
 * framing. The admin API is called with fetch (connect-src 'self').
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

/** The project root (the folder with package.json), found upwards from here: src/admin/console in tests, dist/src/admin/console built. */
function projectRoot(from = __dirname): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/** The built console, or undefined when it was not built. */
export function consoleAssetsDir(): string | undefined {
  const root = projectRoot();
  const dir = root && join(root, BUILD_DIR);
  return dir && existsSync(join(dir, 'index.html')) ? dir : undefined;
}

/** The console's static files at /console/ (hashed assets cached for good, index.html always revalidated). */
export async function serveConsole(app: NestFastifyApplication): Promise<void> {
  const root = consoleAssetsDir();
  if (!root) {
    new Logger('Console').warn(`the console is not built (${BUILD_DIR} is missing): run npm run build`);
    return;
  }
  await app.register(fastifyStatic, {
    root,
    prefix: CONSOLE_PREFIX,
    redirect: true,
    decorateReply: false,
    wildcard: false,
    cacheControl: false,
    setHeaders(reply, path) {
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) reply.header(name, value);
      reply.header('cache-control', path.endsWith('index.html') ? 'no-cache' : 'public, max-age=31536000, immutable');
    },
  });
}
