import { accountOfMaterial, FileWriter, MaterialError } from './account-material';
import { alipayAccounts } from './alipay/alipay.accounts';
import { unionpayAccounts } from './unionpay/unionpay.accounts';
import { wechatpayAccounts } from './wechatpay/wechatpay.accounts';

/** Records what would be written, answering a path per file named by its option and content. */
function recorder() {
  const written: Array<{ option: string; bytes: Buffer }> = [];
  const write: FileWriter = (option, bytes) => {
    written.push({ option, bytes });
    return `/private/${option}-${written.length}`;
  };
  return { written, write };
}

const PEM = '-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----\n';

describe(accountOfMaterial.name, () => {
  it("should put each file option's content in a private file and its path in the entry (a key's {id, path})", () => {
    const { written, write } = recorder();
    const account = accountOfMaterial(
      wechatpayAccounts,
      {
        entry: {
          mchid: '1900009191',
          apiV3Key: 'a'.repeat(32),
          platformPublicKey: { id: 'PUB_KEY_ID_011423213491' },
          merchantSerialNo: '3775B6A45ACD5888',
        },
        files: { 'platformPublicKey.path': PEM, merchantPrivateKeyPath: 'private' },
      },
      write,
    );
    expect(account).toMatchObject({
      mchid: '1900009191',
      publicKey: { id: 'PUB_KEY_ID_011423213491', path: '/private/platformPublicKey.path-1' },
      merchantPrivateKeyPath: '/private/merchantPrivateKeyPath-2',
    });
    expect(written.map((w) => w.bytes.toString())).toEqual([PEM, 'private']);
  });

  it('should take a list of files for a …Paths option (Alipay certificate mode)', () => {
    const { write } = recorder();
    const account = accountOfMaterial(
      alipayAccounts,
      {
        entry: { appId: '2021000117600001' },
        files: { alipayPublicCertPaths: ['cert a', 'cert b'], alipayRootCertPath: 'root' },
      },
      write,
    );
    expect(account).toMatchObject({
      certificates: {
        publicCertPaths: ['/private/alipayPublicCertPaths-1', '/private/alipayPublicCertPaths-2'],
        rootCertPath: '/private/alipayRootCertPath-3',
      },
    });
  });

  it("should write a binary file given in base64 as its bytes (UnionPay's .pfx), its password staying in the entry", () => {
    const { written, write } = recorder();
    const pfx = Buffer.from([0x30, 0x82, 0x00, 0xff, 0x01]);
    const account = accountOfMaterial(
      unionpayAccounts,
      {
        entry: { merId: '777290058110048', signCertPassword: '000000' },
        files: { signCertPath: { base64: pfx.toString('base64') } },
      },
      write,
    );
    expect(account).toEqual({
      merId: '777290058110048',
      signCert: { path: '/private/signCertPath-1', password: '000000' },
    });
    expect(written[0].bytes.equals(pfx)).toBe(true);
  });

  it.each<[string, unknown, RegExp | string]>([
    ['no entry', { files: {} }, 'entry must be an object: one entry of the accounts file'],
    [
      'a path in the entry',
      { entry: { appId: '1', alipayPublicKeyPath: '/etc/x' } },
      /entry\.alipayPublicKeyPath is a path: give the file's content in files\.alipayPublicKeyPath/,
    ],
    [
      "a key's path in the entry",
      { entry: { mchid: '1', platformPublicKey: { id: 'PUB_KEY_ID_1', path: '/x' } } },
      /entry\.platformPublicKey\.path is a path: give the file's content in files\.platformPublicKey\.path/,
    ],
    [
      'a file option the channel does not have',
      { entry: { appId: '1' }, files: { somethingPath: PEM } },
      'entry.somethingPath is not a known field',
    ],
    [
      'a name that is no file option',
      { entry: { appId: '1' }, files: { sellerId: PEM } },
      /files\.sellerId names no file option/,
    ],
    [
      'an empty file',
      { entry: { appId: '1' }, files: { alipayPublicKeyPath: '' } },
      /files\.alipayPublicKeyPath must hold 1 to/,
    ],
    [
      'a single file for a list',
      { entry: { appId: '1' }, files: { alipayPublicCertPaths: PEM } },
      /files\.alipayPublicCertPaths must be a list/,
    ],
    [
      "the validator's own message",
      { entry: { appId: 'abc' }, files: { alipayPublicKeyPath: PEM } },
      'entry.appId must be digits',
    ],
  ])('should refuse %s, naming the field', (_, material, message) => {
    const { write } = recorder();
    expect(() => accountOfMaterial(alipayAccounts, material, write)).toThrow(MaterialError);
    expect(() => accountOfMaterial(alipayAccounts, material, write)).toThrow(message);
  });
});
