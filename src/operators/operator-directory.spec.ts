import { createHash } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { register } from 'prom-client';
import { loadAdminConfig } from './admin.config';
import { ADMIN_TOKENS_FILE_STALE, OperatorDirectory } from './operator-directory';

const ALICE_TOKEN = 'alice-Tok3n-0123456789abcdef';
const CAROL_TOKEN = 'carol-Tok3n-0123456789abcdef';
const DAVE_TOKEN = 'dave-T0ken-0123456789abcdefg';
const sha256 = (token: string) => `sha256=${createHash('sha256').update(token).digest('hex')}`;
/** Longer than a check (TOKENS_FILE_CHECK_MS), bounded. */
const BOUND_MS = 10_000;

/** Polls `condition` until it holds; fails naming `what` after `timeoutMs`. */
async function eventually(what: string, condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe(OperatorDirectory.name, () => {
  let file: string;
  let sut: OperatorDirectory;

  /** Written beside, then renamed over: a reader never sees half a file. */
  const writeTokens = (lines: string[]) => {
    writeFileSync(`${file}.next`, `${lines.join('\n')}\n`);
    renameSync(`${file}.next`, file);
  };
  const operatorIds = async () => (await sut.current()).map((o) => o.operatorId);
  const stale = async () => (await register.getSingleMetric(ADMIN_TOKENS_FILE_STALE)!.get()).values[0]?.value;

  beforeEach(() => {
    file = join(mkdtempSync(join(tmpdir(), 'pcs-directory-')), 'admin-tokens');
    writeTokens([`carol:${sha256(CAROL_TOKEN)}:admin`]);
    sut = new OperatorDirectory(
      loadAdminConfig({ ADMIN_TOKENS: `alice:${ALICE_TOKEN}:admin`, ADMIN_TOKENS_FILE: file }),
    );
  });

  it('should read a new version of the file and report it fresh', async () => {
    writeTokens([`carol:${sha256(CAROL_TOKEN)}:admin`, `dave:${DAVE_TOKEN}:viewer`]);

    await eventually('the new version to be read', async () => (await operatorIds()).includes('dave'), BOUND_MS);
    expect(await operatorIds()).toEqual(['alice', 'carol', 'dave']);
    expect(await stale()).toBe(0);
  });

  it.each([
    ["ADMIN_TOKENS's token under another name, as its sha256", () => [`mallory:${sha256(ALICE_TOKEN)}:admin`]],
    [
      "another line's token under another name",
      () => [`carol:${sha256(CAROL_TOKEN)}:admin`, `mallory:${CAROL_TOKEN}:admin`],
    ],
    ['a malformed line', () => [`carol:${sha256(CAROL_TOKEN)}:admin`, 'mallory:short:admin']],
  ])(
    'should refuse a re-read file that gives %s, keeping the last good operators and reporting them stale',
    async (_what, lines) => {
      writeTokens(lines());

      // The broken version was read: the metric says so, then the operators are those of the last good one.
      await eventually('admin_tokens_file_stale to be 1', async () => (await stale()) === 1, BOUND_MS);
      expect(await operatorIds()).toEqual(['alice', 'carol']);

      writeTokens([`dave:${DAVE_TOKEN}:admin`]);
      await eventually('the fixed file to be read', async () => (await stale()) === 0, BOUND_MS);
      expect(await operatorIds()).toEqual(['alice', 'dave']);
    },
  );

  it('should keep the last good operators of a deleted file and report them stale until it is back', async () => {
    rmSync(file);

    await eventually('admin_tokens_file_stale to be 1', async () => (await stale()) === 1, BOUND_MS);
    expect(await operatorIds()).toEqual(['alice', 'carol']);

    writeTokens([`carol:${sha256(CAROL_TOKEN)}:admin`]);
    await eventually('the file to be read again', async () => (await stale()) === 0, BOUND_MS);
    expect(await operatorIds()).toEqual(['alice', 'carol']);
  });
});
