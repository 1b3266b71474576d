import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { validateConfiguration } from './configuration';

const ROOT = join(__dirname, '../..');

/** The variables of README.md's configuration table (`NAME` or `NAME` / `NAME` in the first column). */
function documentedVariables(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const table = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('## Layout'));
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

  it('should list every variable the README documents, and nothing else', () => {
    const documented = documentedVariables();

    expect(documented.length).toBeGreaterThan(40);
    expect(Object.keys(sut).sort()).toEqual([...new Set(documented)].sort());
  });
});
