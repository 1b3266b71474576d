import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { validateConfiguration } from './configuration';
import { DEFAULT_METRICS_PORT, loadServerConfig } from '../platform/config/server.config';

const ROOT = join(__dirname, '../..');

/**
 * The variables of the table of docs/configuration.md, the page up to its first section
 * (`NAME` or `NAME` / `NAME` in the first column).
 */
function documentedVariables(): string[] {
  const page = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8');
  const table = page.slice(0, page.indexOf('\n## '));
  return table
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...line.split('|')[1].matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]));
}

describe('.env.example', () => {
  const sut = parseEnv(readFileSync(join(ROOT, '.env.example'), 'utf8'));

  it('should be a valid configuration as it stands', () => {
    expect(() => validateConfiguration(sut)).not.toThrow();
  });

  it("should give PORT and METRICS_PORT the service's own defaults", () => {
    const defaults = loadServerConfig({});

    expect(sut.PORT).toBe(String(defaults.port));
    expect(sut.METRICS_PORT).toBe(String(DEFAULT_METRICS_PORT));
    expect(defaults.metricsPort).toBe(DEFAULT_METRICS_PORT);
  });

  it('should list every variable docs/configuration.md documents, and nothing else', () => {
    const documented = documentedVariables();

    expect(documented.length).toBeGreaterThan(40);
    expect(Object.keys(sut).sort()).toEqual([...new Set(documented)].sort());
  });
});
