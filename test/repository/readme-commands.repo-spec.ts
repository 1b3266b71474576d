import { execFile } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * The README's "Two commands": one that sets up a fresh Debian or Ubuntu machine and starts the
 * service, one that passes the tests; both on the set-up functions CI uses (tools/machine/setup.sh),
 * and CI runs the README's test command itself.
 */

const ROOT = join(__dirname, '../..');
const run = promisify(execFile);
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The commands of the README's "Two commands" code block, comments dropped. */
function twoCommands(): string[] {
  const readme = read('README.md');
  const section = readme.slice(readme.indexOf('## Two commands'));
  const block = /```bash\n([\s\S]*?)```/.exec(section)![1];
  return block
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '');
}

/** The names of the shell functions a script defines. */
function functionsOf(script: string): string[] {
  return [...script.matchAll(/^([a-z_0-9]+)\(\) \{/gm)].map((m) => m[1]);
}

describe("the README's two commands", () => {
  it('should be two commands: one starts the service, one passes the tests', () => {
    expect(twoCommands()).toEqual(['bash tools/start.sh', 'bash tools/test.sh']);
  });

  it.each(['tools/start.sh', 'tools/test.sh', '.ci/run', 'tools/machine/setup.sh'])(
    'should keep %s valid bash',
    async (script) => {
      await expect(run('bash', ['-n', join(ROOT, script)])).resolves.toBeDefined();
    },
  );

  it('should bring Node 24 and MariaDB, create the database, migrate and start, in that order', () => {
    const start = read('tools/start.sh');
    accessSync(join(ROOT, 'tools/start.sh'), constants.X_OK);
    const steps = [
      '. tools/machine/setup.sh',
      'ensure_node24',
      'install_node_modules',
      'ensure_mariadb',
      'choose_service_database_url',
      'npm run build',
      'npm run db:create',
      'npm run migrate',
      'exec npm start',
    ];
    const at = steps.map((step) => new RegExp(`^${step.replace(/\./g, '\\.')}$`, 'm').exec(start)?.index ?? -1);

    expect(at.every((index) => index >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });

  it('should bring what the tests need, then run npm test, then the suites that hold the whole server alone', () => {
    const test = read('tools/test.sh');
    for (const step of [
      'ensure_node24',
      'ensure_mariadb',
      'choose_test_admin_url',
      'ensure_rabbitmq',
      'ensure_redis_server',
      'ensure_chromium',
    ]) {
      expect([step, new RegExp(`^${step}$`, 'm').test(test)]).toEqual([step, true]);
    }
    const commands = test
      .trimEnd()
      .split('\n')
      .filter((line) => /^npm /.test(line));
    expect(commands.slice(-2)).toEqual(['npm test', 'npm run test:serial']);
    expect(test.trimEnd().split('\n').pop()).toBe('npm run test:serial');
  });

  it("should be what CI runs: .ci/run runs the README's test command, on the same set-up functions", () => {
    const ci = read('.ci/run');
    const main = ci.slice(ci.indexOf('main() {'));

    expect(main).toMatch(new RegExp(`^  ${twoCommands()[1]}$`, 'm'));
    expect(ci).toContain('tools/machine/setup.sh');
    // One place for each set-up step: CI defines none of them again.
    expect(functionsOf(ci)).toEqual(['main']);
    expect(functionsOf(read('tools/machine/setup.sh'))).toEqual(
      expect.arrayContaining([
        'ensure_node24',
        'ensure_mariadb',
        'choose_test_admin_url',
        'choose_service_database_url',
      ]),
    );
  });
});
