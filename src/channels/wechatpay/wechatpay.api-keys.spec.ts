import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigurationError } from '../../platform/config/env-validation';
import { withApiKeysRead } from './wechatpay.api-keys';
import { WechatpayAccount } from './wechatpay.config';

const ACCOUNT: WechatpayAccount = { mchid: '1900009191', appids: [], platformCertPaths: ['/run/keys/cert.pem'] };

describe(withApiKeysRead.name, () => {
  const dir = mkdtempSync(join(tmpdir(), 'api-keys-'));
  const file = (name: string, content: string) => {
    writeFileSync(join(dir, name), content);
    return join(dir, name);
  };

  it('should read each key from its file, a trailing newline trimmed, and leave a string key as it is', () => {
    const v3 = 'a'.repeat(32);
    const v2 = 'b'.repeat(32);
    const [read] = withApiKeysRead([
      { ...ACCOUNT, apiV3KeyPath: file('v3.key', `${v3}\n`), apiV2KeyPath: file('v2.key', `${v2}\r\n`) },
    ]);
    expect(read).toMatchObject({ apiV3Key: v3, apiV2Key: v2 });
    expect(withApiKeysRead([{ ...ACCOUNT, apiV3Key: v3 }])).toEqual([{ ...ACCOUNT, apiV3Key: v3 }]);
  });

  it('should refuse a file whose key is not 32 characters, naming the file and never the key', () => {
    const key = 'c'.repeat(31);
    const path = file('short.key', `${key}\n`);
    expect(() => withApiKeysRead([{ ...ACCOUNT, apiV3KeyPath: path }])).toThrow(ConfigurationError);
    const message = messageOf(() => withApiKeysRead([{ ...ACCOUNT, apiV3KeyPath: path }]));
    expect(message).toContain(path);
    expect(message).toContain('exactly 32 characters');
    expect(message).not.toContain(key);
  });

  it('should refuse a missing file, naming it', () => {
    const path = join(dir, 'missing.key');
    expect(messageOf(() => withApiKeysRead([{ ...ACCOUNT, apiV2KeyPath: path }]))).toMatch(
      new RegExp(`APIv2 key file ${path} of account 1900009191 cannot be read \\(ENOENT\\)`),
    );
  });
});

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('no error');
}
