import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const PACKAGE_NAME = 'payment-callback-service';
/** src/platform/lifecycle in a clone, dist/src/platform/lifecycle in a build or the image. */
const MAX_LEVELS_UP = 5;

/**
 * The service's version: package.json's, the one file that states it (the start line, /health/live
 * and the image's org.opencontainers.image.version label all report it). Read once, at load.
 */
export const SERVICE_VERSION = readServiceVersion(__dirname);

export function readServiceVersion(from: string): string {
  let dir = from;
  for (let level = 0; level <= MAX_LEVELS_UP; level++) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === PACKAGE_NAME && pkg.version) return pkg.version;
    }
    dir = dirname(dir);
  }
  return 'unknown';
}
