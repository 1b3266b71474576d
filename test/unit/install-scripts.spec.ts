import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Which dependencies may run install scripts: every one that has them is
 * decided in package.json's allowScripts, so `npm ci` has none to warn about, and Scarf's
 * telemetry (@scarf/scarf, pulled in by swagger-ui-dist) is denied and opted out of.
 */
const ROOT = join(__dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  allowScripts?: Record<string, boolean>;
  scarfSettings?: { enabled?: boolean };
};
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { hasInstallScript?: boolean }>;
};

describe('install scripts', () => {
  it('should decide every dependency that has install scripts in allowScripts', () => {
    const withScripts = Object.entries(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));

    expect(withScripts.length).toBeGreaterThan(0);
    expect(withScripts.filter((name) => pkg.allowScripts?.[name] === undefined)).toEqual([]);
  });

  it("should deny Scarf's install-time telemetry, and opt out of it for npm versions without allowScripts", () => {
    expect(pkg.allowScripts?.['@scarf/scarf']).toBe(false);
    expect(pkg.scarfSettings).toEqual({ enabled: false });
  });
});
