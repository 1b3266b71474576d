import { createHash } from 'node:crypto';
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomAlphanumeric } from '../tools/simulator/platform-signers';
import { eventually } from './support/eventually';
import { createTestPlatforms, RunningApp, startApp, TestClient, TestPlatforms } from './support/test-app';

/**
 * Admin tokens rotated without a restart: ADMIN_TOKENS_FILE is re-read when it
 * changes, hashed tokens are accepted, and ADMIN_TOKENS keeps working beside it; a version with a
 * mistake keeps the last good operators and sets admin_tokens_file_stale.
 */
const ROTATION_BOUND_MS = 15_000;
const sha256 = (token: string) => `sha256=${createHash('sha256').update(token).digest('hex')}`;

let platforms: TestPlatforms;
let app: RunningApp;
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

/** admin_tokens_file_stale's value, as a scrape of the management port serves it. */
const staleMetric = async () => {
  const text = await (await fetch(`${app.managementUrl}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  return /^admin_tokens_file_stale (\S+)$/m.exec(text)?.[1];
};

const me = async (token: string) => {
  const answer = await client.admin('GET', '/admin/me', token);
  return answer.status === 200 ? answer.json<{ operatorId: string; role: string }>() : answer.status;
};

beforeAll(async () => {
  platforms = await createTestPlatforms();
  file = join(mkdtempSync(join(tmpdir(), 'pcs-tokens-')), 'admin-tokens');
  writeTokens(['# operators of the admin API', `frank:${frank}:admin`, '', `gina:${sha256(gina)}:viewer`]);
  app = await startApp({ ...platforms.env, ADMIN_TOKENS_FILE: file });
  client = new TestClient(app.url, platforms);
});

afterAll(async () => {
  await app?.close();
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

  it('should keep the last good operators when the file has a mistake, and say so in admin_tokens_file_stale', async () => {
    expect(await staleMetric()).toBe('0');
    writeTokens([`frank:short:admin`]);

    // A scrape looks at the file as a request does: the broken version was read.
    await eventually('admin_tokens_file_stale 1', async () => (await staleMetric()) === '1', ROTATION_BOUND_MS);
    expect(await me(frankRotated)).toEqual({ operatorId: 'frank', role: 'admin' });

    writeTokens([`frank:${frank}:admin`]);
    await eventually('the fixed file to be read', async () => (await me(frank)) !== 401, ROTATION_BOUND_MS);
    expect(await me(frankRotated)).toBe(401);
    expect(await staleMetric()).toBe('0');
  });

  it('should refuse a file that gives an operator of ADMIN_TOKENS another name, keeping the last good operators', async () => {
    // alice's token (ADMIN_TOKENS), as its hash, under another name: the same token as two operators.
    writeTokens([`frank:${frank}:admin`, `mallory:${sha256(platforms.admins.admin)}:admin`]);

    await eventually('admin_tokens_file_stale 1', async () => (await staleMetric()) === '1', ROTATION_BOUND_MS);
    expect(await me(platforms.admins.admin)).toEqual({ operatorId: 'alice', role: 'admin' });
    expect(await me(frank)).toEqual({ operatorId: 'frank', role: 'admin' });
  });
});
