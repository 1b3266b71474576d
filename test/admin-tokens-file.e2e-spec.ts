import { createHash } from 'node:crypto';
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomAlphanumeric } from '../tools/simulator/platform-signers';
import { AppProcess, startAppProcess } from './support/app-process';
import { eventually } from './support/eventually';
import { createTestPlatforms, TestClient, TestPlatforms } from './support/test-app';

/**
 * Admin tokens rotated without a restart: ADMIN_TOKENS_FILE is re-read when it changes, hashed
 * tokens are accepted, and ADMIN_TOKENS keeps working beside it. The app runs in a process of its
 * own, so that the test can read its log: the line that says it read a broken file and kept the
 * operators it had.
 */
const ROTATION_BOUND_MS = 15_000;
const sha256 = (token: string) => `sha256=${createHash('sha256').update(token).digest('hex')}`;

let platforms: TestPlatforms;
let app: AppProcess;
let client: TestClient;
let file: string;
const frank = randomAlphanumeric(40);
const frankRotated = randomAlphanumeric(40);
const gina = randomAlphanumeric(40);

/** Written beside, then renamed over: a reader never sees half a file. */
function writeTokens(lines: string[]): void {
  const next = `${file}.next`;
  writeFileSync(next, `${lines.join('\n')}\n`);
  renameSync(next, file);
}

const me = async (token: string) => {
  const answer = await client.admin('GET', '/admin/me', token);
  return answer.status === 200 ? answer.json<{ operatorId: string; role: string }>() : answer.status;
};

beforeAll(async () => {
  platforms = await createTestPlatforms();
  file = join(mkdtempSync(join(tmpdir(), 'pcs-tokens-')), 'admin-tokens');
  writeTokens(['# operators of the admin API', `frank:${frank}:admin`, '', `gina:${sha256(gina)}:viewer`]);
  app = await startAppProcess({ ...platforms.env, ADMIN_TOKENS_FILE: file, LOG_LEVEL: 'error' });
  client = new TestClient(app.url, platforms);
});

afterAll(async () => {
  app?.child.kill('SIGKILL');
  await app?.exited;
});

describe('ADMIN_TOKENS_FILE', () => {
  it("should accept the file's tokens, hashed ones too, beside ADMIN_TOKENS's", async () => {
    expect(await me(frank)).toEqual({ operatorId: 'frank', role: 'admin' });
    expect(await me(gina)).toEqual({ operatorId: 'gina', role: 'viewer' });
    expect(await me(platforms.admins.admin)).toEqual({ operatorId: 'alice', role: 'admin' });
    // The hash itself is not a token.
    expect(await me(sha256(gina))).toBe(401);
  });

  it('should rotate and revoke tokens without a restart', async () => {
    writeTokens([`frank:${sha256(frankRotated)}:admin`]);

    await eventually('the rotated token to work', async () => (await me(frankRotated)) !== 401, ROTATION_BOUND_MS);
    expect(await me(frankRotated)).toEqual({ operatorId: 'frank', role: 'admin' });
    expect(await me(frank)).toBe(401);
    expect(await me(gina)).toBe(401);
    expect(await me(platforms.admins.admin2)).toEqual({ operatorId: 'bob', role: 'admin' });
  });

  it('should keep the last good operators when the file has a mistake', async () => {
    writeTokens([`frank:short:admin`]);
    // A request makes the service look at the file again (at most every few seconds); it says so when it refuses it.
    const refusedBefore = app.output().split('ADMIN_TOKENS_FILE not re-read').length;
    await eventually(
      'the broken file to be read and refused',
      async () => {
        await me(frankRotated);
        return app.output().split('ADMIN_TOKENS_FILE not re-read').length > refusedBefore;
      },
      ROTATION_BOUND_MS,
    );

    expect(await me(frankRotated)).toEqual({ operatorId: 'frank', role: 'admin' });

    writeTokens([`frank:${frank}:admin`]);
    await eventually('the fixed file to be read', async () => (await me(frank)) !== 401, ROTATION_BOUND_MS);
    expect(await me(frankRotated)).toBe(401);
  });
});
