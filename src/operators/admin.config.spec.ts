import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdminRole, loadAdminOperators } from './admin.config';
import { ConfigurationError } from '../platform/config/env-validation';

const ALICE_TOKEN = 'alice-Tok3n-0123456789abcdef';
const BOB_TOKEN = 'bob!#$%&*+-./;<=>?@[]^_`{|}~9';

/** The error a call throws, so that no error at all shows up in the assertion instead of a crash. */
function errorOf(call: () => unknown): Error | undefined {
  try {
    call();
  } catch (error) {
    return error as Error;
  }
  return undefined;
}

describe(loadAdminOperators.name, () => {
  const sut = loadAdminOperators;

  it('should return no operators when ADMIN_TOKENS is unset, empty or only separators and spaces', () => {
    expect(sut({})).toEqual([]);
    expect(sut({ ADMIN_TOKENS: '' })).toEqual([]);
    expect(sut({ ADMIN_TOKENS: '   ' })).toEqual([]);
    expect(sut({ ADMIN_TOKENS: ' , ,, ' })).toEqual([]);
  });

  it('should parse every operatorId:token:role entry in order', () => {
    const result = sut({ ADMIN_TOKENS: `alice:${ALICE_TOKEN}:admin,bob.ops@example.com:${BOB_TOKEN}:viewer` });

    expect(result).toEqual([
      { operatorId: 'alice', token: ALICE_TOKEN, role: AdminRole.Admin },
      { operatorId: 'bob.ops@example.com', token: BOB_TOKEN, role: AdminRole.Viewer },
    ]);
  });

  it('should ignore whitespace around entries and empty entries', () => {
    const result = sut({ ADMIN_TOKENS: `\n  alice:${ALICE_TOKEN}:admin ,\t, bob:${BOB_TOKEN}:viewer\n` });

    expect(result).toEqual([
      { operatorId: 'alice', token: ALICE_TOKEN, role: 'admin' },
      { operatorId: 'bob', token: BOB_TOKEN, role: 'viewer' },
    ]);
  });

  it('should accept tokens of exactly 16 and exactly 256 characters', () => {
    const short = 'a'.repeat(16);
    const long = 'b'.repeat(256);

    expect(sut({ ADMIN_TOKENS: `a:${short}:admin,b:${long}:viewer` }).map((o) => o.token)).toEqual([short, long]);
  });

  it.each([
    ['a token of 15 characters', `alice:${'a'.repeat(15)}:admin`, 'the token is 15 characters long, not 16 to 256'],
    ['a token of 257 characters', `alice:${'a'.repeat(257)}:admin`, 'the token is 257 characters long'],
    ['an unknown role', `alice:${ALICE_TOKEN}:root`, 'the role must be admin or viewer'],
    ['a role in upper case', `alice:${ALICE_TOKEN}:ADMIN`, 'the role must be admin or viewer (lower case)'],
    ['no role', `alice:${ALICE_TOKEN}`, "it has 1 ':' separators, not 2"],
    ['no operatorId', `:${ALICE_TOKEN}:admin`, 'the operatorId must be 1 to 64'],
    ['a token with a colon', `alice:${ALICE_TOKEN}:x:admin`, "it has 3 ':' separators, not 2"],
    ['a token with a space inside', `alice:alice-Tok3n 0123456789abcdef:admin`, 'the token must be printable ASCII'],
    ['a token with a non-ASCII character', `alice:alice-Tok3n-0123456789abcdé:admin`, 'the token must be printable'],
    ['an operatorId with a space', `al ice:${ALICE_TOKEN}:admin`, 'the operatorId must be'],
    ['an operatorId of 65 characters', `${'o'.repeat(65)}:${ALICE_TOKEN}:admin`, 'the operatorId must be 1 to 64'],
  ])('should reject an entry with %s, saying which part is wrong', (_what, entry, part) => {
    const error = errorOf(() => sut({ ADMIN_TOKENS: entry }));

    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error?.message).toMatch(/ADMIN_TOKENS entry 1 must be operatorId:token:role/);
    expect(error?.message).toContain(part);
  });

  it('should name the position of the malformed entry', () => {
    const error = errorOf(() =>
      sut({ ADMIN_TOKENS: `alice:${ALICE_TOKEN}:admin, bob:${BOB_TOKEN}:viewer, carol:short:admin` }),
    );

    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error?.message).toContain('entry 3 ');
  });

  it('should reject two entries with the same operatorId', () => {
    const error = errorOf(() => sut({ ADMIN_TOKENS: `alice:${ALICE_TOKEN}:admin,alice:${BOB_TOKEN}:viewer` }));

    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error?.message).toMatch(/repeats an operatorId/);
  });

  it('should read operator ids in lower case, so that alice and ALICE are one operator', () => {
    const token = (c: string) => c.repeat(20);
    expect(sut({ ADMIN_TOKENS: `Alice:${token('a')}:admin` }).map((o) => o.operatorId)).toEqual(['alice']);
    expect(() => sut({ ADMIN_TOKENS: `alice:${token('a')}:admin,ALICE:${token('b')}:admin` })).toThrow(
      /repeats an operatorId/,
    );
  });

  it('should reject two operators with the same token', () => {
    const error = errorOf(() => sut({ ADMIN_TOKENS: `alice:${ALICE_TOKEN}:admin,bob:${ALICE_TOKEN}:viewer` }));

    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error?.message).toMatch(/same token/);
  });

  it('should reject one token given to two operators, once as itself and once as its sha256', () => {
    const hashed = `sha256=${createHash('sha256').update(ALICE_TOKEN).digest('hex')}`;

    for (const value of [
      `alice:${ALICE_TOKEN}:admin,mallory:${hashed}:admin`,
      `alice:${hashed}:admin,mallory:${ALICE_TOKEN}:viewer`,
    ]) {
      const error = errorOf(() => sut({ ADMIN_TOKENS: value }));

      expect(error).toBeInstanceOf(ConfigurationError);
      expect(error?.message).toBe('Invalid configuration: ADMIN_TOKENS gives two operators the same token');
    }
  });

  describe('the error message never quotes a token', () => {
    const secrets = ['S3cr3t-Adm1n-T0ken-XyZ', 'Vi3wer-Secret-Token-0042'];

    it.each([
      ['a bad role', `alice:${secrets[0]}:superuser,bob:${secrets[1]}:viewer`],
      ['a missing role', `alice:${secrets[0]}, bob:${secrets[1]}:viewer`],
      ['an extra field', `alice:${secrets[0]}:admin:extra,bob:${secrets[1]}:viewer`],
      ['a space inside the token', `alice:${secrets[0]} ${secrets[1]}:admin`],
      ['a bad operatorId', `al/ice:${secrets[0]}:admin,bob:${secrets[1]}:viewer`],
      ['a token cut to 15 characters', `alice:${secrets[0].slice(0, 15)}:admin,bob:${secrets[1]}:viewer`],
      ['a malformed second entry', `alice:${secrets[0]}:admin,bob:${secrets[1]}:root`],
      ['a repeated operatorId', `alice:${secrets[0]}:admin,alice:${secrets[1]}:viewer`],
      ['a repeated token', `alice:${secrets[0]}:admin,bob:${secrets[0]}:viewer,carol:${secrets[1]}:viewer`],
    ])('should not include any token text in the error for %s', (_what, value) => {
      const error = errorOf(() => sut({ ADMIN_TOKENS: value }));

      expect(error).toBeInstanceOf(ConfigurationError);
      for (const secret of secrets) {
        expect(error?.message).not.toContain(secret);
        // not even a recognizable piece of it
        expect(error?.message).not.toContain(secret.slice(0, 8));
      }
    });
  });
});

describe('ADMIN_TOKENS_FILE and hashed tokens', () => {
  const HASH = `sha256=${'ab'.repeat(32)}`;
  const fileWith = (text: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'pcs-admin-'));
    writeFileSync(join(dir, 'tokens'), text);
    return join(dir, 'tokens');
  };

  it('should read one entry a line, skipping comments and blank lines, with hashed tokens', () => {
    const file = fileWith(`# admins\n\ncarol:${HASH}:admin\n  dave:${ALICE_TOKEN}:viewer  \n`);

    expect(loadAdminOperators({ ADMIN_TOKENS: `alice:${BOB_TOKEN}:admin`, ADMIN_TOKENS_FILE: file })).toEqual([
      { operatorId: 'alice', token: BOB_TOKEN, role: 'admin' },
      { operatorId: 'carol', token: HASH, role: 'admin' },
      { operatorId: 'dave', token: ALICE_TOKEN, role: 'viewer' },
    ]);
  });

  it('should name the line that is wrong without quoting it, and refuse a malformed hash', () => {
    const file = fileWith(`carol:${HASH}:admin\ndave:sha256=${'AB'.repeat(32)}:viewer\n`);

    const error = errorOf(() => loadAdminOperators({ ADMIN_TOKENS_FILE: file }));

    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error?.message).toBe(
      'Invalid configuration: ADMIN_TOKENS_FILE line 2 must be operatorId:token:role: ' +
        'a hashed token must be sha256= and 64 lower-case hex digits',
    );
    expect(error?.message).not.toContain('AB'.repeat(32));
  });

  it('should refuse an operatorId in both, and a file that cannot be read', () => {
    const file = fileWith(`alice:${HASH}:admin\n`);

    expect(
      errorOf(() => loadAdminOperators({ ADMIN_TOKENS: `alice:${ALICE_TOKEN}:admin`, ADMIN_TOKENS_FILE: file }))
        ?.message,
    ).toBe('Invalid configuration: ADMIN_TOKENS_FILE (with ADMIN_TOKENS) repeats an operatorId');
    expect(errorOf(() => loadAdminOperators({ ADMIN_TOKENS_FILE: join(tmpdir(), 'no-such-pcs-file') }))?.message).toBe(
      `Invalid configuration: ADMIN_TOKENS_FILE ${join(tmpdir(), 'no-such-pcs-file')} cannot be read (ENOENT)`,
    );
  });

  it('should refuse a token in the file that ADMIN_TOKENS or another line of the file gives, hashed or not', () => {
    const hashed = `sha256=${createHash('sha256').update(ALICE_TOKEN).digest('hex')}`;
    const twinOfEnv = fileWith(`mallory:${hashed}:admin\n`);
    const twinInFile = fileWith(`carol:${ALICE_TOKEN}:admin\nmallory:${hashed}:viewer\n`);

    expect(
      errorOf(() => loadAdminOperators({ ADMIN_TOKENS: `alice:${ALICE_TOKEN}:admin`, ADMIN_TOKENS_FILE: twinOfEnv }))
        ?.message,
    ).toBe('Invalid configuration: ADMIN_TOKENS_FILE (with ADMIN_TOKENS) gives two operators the same token');
    expect(errorOf(() => loadAdminOperators({ ADMIN_TOKENS_FILE: twinInFile }))?.message).toBe(
      'Invalid configuration: ADMIN_TOKENS_FILE gives two operators the same token',
    );
  });
});
