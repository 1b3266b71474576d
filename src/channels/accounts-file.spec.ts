import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ConfigurationError } from '../platform/config/env-validation';
import { readAccountsFile as readAnyAccountsFile } from './accounts-file';
import { AlipayAccount } from './alipay/alipay.config';
import { CHANNEL_REGISTRATIONS } from './registered-channels';
import { WechatpayAccount } from './wechatpay/wechatpay.config';
import { loadAlipayAccounts } from './alipay/alipay.config';
import { loadWechatpayAccounts, loadWechatpayConfig } from './wechatpay/wechatpay.config';

const WECHATPAY_ACCOUNT = {
  mchid: '1900009191',
  appids: ['wxd678efh567hg6787', 'wx2421b1c4370ec43b'],
  apiV3Key: 'a'.repeat(32),
  platformPublicKey: { id: 'PUB_KEY_ID_0114232134912410000000000000', path: '/run/keys/a-pub.pem' },
  merchantPrivateKeyPath: '/run/keys/a-key.pem',
  merchantSerialNo: '3775b6a45acd588826d15e583a95f5dd00000000',
};
const ALIPAY_ACCOUNT = { appId: '2021000117600001', alipayPublicKeyPath: '/run/keys/alipay-pub.pem' };

/** The file as the registered channels read it. */
function readAccountsFile(env: NodeJS.ProcessEnv) {
  const sections = CHANNEL_REGISTRATIONS.map((r) => r.accounts);
  return readAnyAccountsFile(env, sections) as { wechatpay: WechatpayAccount[]; alipay: AlipayAccount[] } | undefined;
}

describe(readAnyAccountsFile.name, () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(path.join(tmpdir(), 'accounts-file-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    writeFileSync(file, text);
    return { PAYMENT_ACCOUNTS_FILE: file };
  };
  const json = (document: unknown) => write(`accounts-${Math.random()}.json`, JSON.stringify(document));
  const errorOf = (env: NodeJS.ProcessEnv) => {
    try {
      readAccountsFile(env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigurationError);
      return (error as Error).message;
    }
    throw new Error('expected a ConfigurationError');
  };

  it('should return undefined when the variable is not set', () => {
    expect(readAccountsFile({})).toBeUndefined();
    expect(readAccountsFile({ PAYMENT_ACCOUNTS_FILE: ' ' })).toBeUndefined();
  });

  it('should read two accounts per channel from JSON', () => {
    const second = {
      ...WECHATPAY_ACCOUNT,
      mchid: '1900009192',
      platformPublicKey: undefined,
      platformCertPaths: ['/c.pem'],
    };
    const sut = readAccountsFile(
      json({
        wechatpay: [WECHATPAY_ACCOUNT, second],
        alipay: [ALIPAY_ACCOUNT, { ...ALIPAY_ACCOUNT, appId: '2021000117600002', appPrivateKeyPath: '/k.pem' }],
      }),
    );

    expect(sut?.wechatpay).toEqual([
      {
        mchid: '1900009191',
        appids: WECHATPAY_ACCOUNT.appids,
        apiV3Key: 'a'.repeat(32),
        publicKey: { id: WECHATPAY_ACCOUNT.platformPublicKey.id, path: '/run/keys/a-pub.pem' },
        platformCertPaths: [],
        merchantPrivateKeyPath: '/run/keys/a-key.pem',
        merchantSerialNo: '3775B6A45ACD588826D15E583A95F5DD00000000',
        subMchids: [],
      },
      expect.objectContaining({ mchid: '1900009192', publicKey: undefined, platformCertPaths: ['/c.pem'] }),
    ]);
    expect(sut?.alipay).toEqual([
      {
        appId: '2021000117600001',
        sellerId: undefined,
        publicKeyPath: '/run/keys/alipay-pub.pem',
        appPrivateKeyPath: undefined,
      },
      expect.objectContaining({ appId: '2021000117600002', appPrivateKeyPath: '/k.pem' }),
    ]);
  });

  it('should read the same accounts from YAML', () => {
    const yaml = [
      'wechatpay:',
      '  - mchid: "1900009191"',
      '    appids: [wxd678efh567hg6787]',
      `    apiV3Key: "${'a'.repeat(32)}"`,
      '    platformCertPaths: [/run/keys/cert.pem]',
      'alipay:',
      '  - appId: "2021000117600001"',
      '    alipayPublicKeyPath: /run/keys/alipay-pub.pem',
    ].join('\n');

    const sut = readAccountsFile(write('accounts.yaml', yaml));

    expect(sut?.wechatpay.map((a) => [a.mchid, a.appids, a.platformCertPaths])).toEqual([
      ['1900009191', ['wxd678efh567hg6787'], ['/run/keys/cert.pem']],
    ]);
    expect(sut?.alipay.map((a) => a.appId)).toEqual(['2021000117600001']);
  });

  it.each([
    [
      'a short APIv3 key',
      { wechatpay: [{ ...WECHATPAY_ACCOUNT, apiV3Key: 'short' }] },
      'wechatpay[0].apiV3Key must be exactly 32',
    ],
    [
      'a mchid that is not digits',
      { wechatpay: [{ ...WECHATPAY_ACCOUNT, mchid: 'abc' }] },
      'wechatpay[0].mchid must be',
    ],
    [
      'an account without platform keys',
      { wechatpay: [{ ...WECHATPAY_ACCOUNT, platformPublicKey: undefined }] },
      'wechatpay[0] needs platformPublicKey or platformCertPaths',
    ],
    [
      'a bad public key id',
      { wechatpay: [{ ...WECHATPAY_ACCOUNT, platformPublicKey: { id: 'KEY', path: '/p' } }] },
      'wechatpay[0].platformPublicKey.id must start with PUB_KEY_ID_',
    ],
    [
      'a merchant key without its serial',
      { wechatpay: [{ ...WECHATPAY_ACCOUNT, merchantSerialNo: undefined }] },
      'wechatpay[0] needs merchantPrivateKeyPath and merchantSerialNo together',
    ],
    [
      'a bad merchant serial',
      { wechatpay: [{ ...WECHATPAY_ACCOUNT, merchantSerialNo: '0xZZ' }] },
      'wechatpay[0].merchantSerialNo must be the certificate serial in hex',
    ],
    [
      'an APIv3 key and its file both',
      { wechatpay: [{ ...WECHATPAY_ACCOUNT, apiV3KeyPath: '/run/keys/apiv3.key' }] },
      'wechatpay[0] has apiV3Key and apiV3KeyPath',
    ],
    [
      'an APIv2 key and its file both',
      { wechatpay: [{ ...WECHATPAY_ACCOUNT, apiV2Key: 'b'.repeat(32), apiV2KeyPath: '/run/keys/apiv2.key' }] },
      'wechatpay[0] has apiV2Key and apiV2KeyPath',
    ],
    ['an unknown field', { wechatpay: [{ ...WECHATPAY_ACCOUNT, apiKey: 'x' }] }, 'wechatpay[0].apiKey'],
    [
      'the second entry wrong',
      { alipay: [ALIPAY_ACCOUNT, { appId: 'x2021', alipayPublicKeyPath: '/p' }] },
      'alipay[1].appId must be digits',
    ],
    ['a missing public key path', { alipay: [{ appId: '2021000117600001' }] }, 'alipay[0].alipayPublicKeyPath'],
    [
      'the same mchid twice',
      { wechatpay: [WECHATPAY_ACCOUNT, WECHATPAY_ACCOUNT] },
      'wechatpay[1].mchid 1900009191 appears twice',
    ],
    ['a list that is an object', { alipay: ALIPAY_ACCOUNT }, 'alipay must be a list of accounts'],
    ['an unknown channel', { stripe: [] }, 'unknown key stripe'],
  ])('should refuse %s, naming the entry and field', (_what, document, message) => {
    const error = errorOf(json(document));
    expect(error).toContain('PAYMENT_ACCOUNTS_FILE');
    expect(error).toContain(message);
  });

  it('should take the APIv3 and APIv2 keys as files (apiV3KeyPath, apiV2KeyPath) in place of the strings', () => {
    const { apiV3Key: _key, ...withoutKey } = WECHATPAY_ACCOUNT;
    const withFiles = { ...withoutKey, apiV3KeyPath: '/run/keys/apiv3.key', apiV2KeyPath: '/run/keys/apiv2.key' };
    const [account] = readAccountsFile(json({ wechatpay: [withFiles] }))!.wechatpay;
    expect(account).toMatchObject({ apiV3KeyPath: '/run/keys/apiv3.key', apiV2KeyPath: '/run/keys/apiv2.key' });
    expect(account.apiV3Key).toBeUndefined();
    // An APIv2-only entry by its key file.
    const [v2Only] = readAccountsFile(
      json({ wechatpay: [{ mchid: '1900009191', apiV2KeyPath: '/run/keys/apiv2.key' }] }),
    )!.wechatpay;
    expect(v2Only).toMatchObject({ mchid: '1900009191', apiV2KeyPath: '/run/keys/apiv2.key' });
    // Without either form of the APIv3 key, an entry with platform keys is incomplete.
    expect(errorOf(json({ wechatpay: [withoutKey] }))).toContain('wechatpay[0] needs apiV3Key');
  });

  it('should refuse a file it cannot read or parse, naming it', () => {
    expect(errorOf({ PAYMENT_ACCOUNTS_FILE: path.join(dir, 'missing.json') })).toMatch(/cannot read .*missing\.json/);
    expect(errorOf(write('broken.json', '{"wechatpay": ['))).toMatch(/neither JSON nor YAML/);
    expect(errorOf(write('list.json', '[]'))).toMatch(/must hold an object/);
  });

  it('should refuse the per-account variables beside the file', () => {
    const env = json({ wechatpay: [WECHATPAY_ACCOUNT], alipay: [ALIPAY_ACCOUNT] });
    expect(() =>
      loadWechatpayAccounts({
        ...env,
        WECHATPAY_MCHID: '1',
        WECHATPAY_APIV3_KEY: 'a'.repeat(32),
        WECHATPAY_PUBLIC_KEY_PATH: '/p',
        WECHATPAY_PUBLIC_KEY_ID: 'PUB_KEY_ID_1',
      }),
    ).toThrow(
      /WECHATPAY_MCHID, WECHATPAY_APIV3_KEY, WECHATPAY_PUBLIC_KEY_ID, WECHATPAY_PUBLIC_KEY_PATH are set beside PAYMENT_ACCOUNTS_FILE/,
    );
    expect(() => loadAlipayAccounts({ ...env, ALIPAY_APP_PRIVATE_KEY_PATH: '/k.pem' })).toThrow(
      /ALIPAY_APP_PRIVATE_KEY_PATH is set beside PAYMENT_ACCOUNTS_FILE/,
    );
    expect(loadWechatpayAccounts(env).map((a) => a.mchid)).toEqual(['1900009191']);
  });
});

describe(loadWechatpayAccounts.name, () => {
  const ENV = {
    WECHATPAY_MCHID: '1900009191',
    WECHATPAY_APIV3_KEY: 'a'.repeat(32),
    WECHATPAY_PUBLIC_KEY_ID: 'PUB_KEY_ID_0114232134912410000000000000',
    WECHATPAY_PUBLIC_KEY_PATH: '/run/keys/pub.pem',
  };

  it('should make one account of the variables, with its merchant key', () => {
    const sut = loadWechatpayAccounts({
      ...ENV,
      WECHATPAY_MERCHANT_PRIVATE_KEY_PATH: '/k.pem',
      WECHATPAY_MERCHANT_SERIAL_NO: 'abcdef01',
    });
    expect(sut).toEqual([
      expect.objectContaining({ mchid: '1900009191', merchantPrivateKeyPath: '/k.pem', merchantSerialNo: 'ABCDEF01' }),
    ]);
    expect(loadWechatpayAccounts({})).toEqual([]);
  });

  it('should take several app ids, and the old single WECHATPAY_APPID too', () => {
    expect(loadWechatpayConfig({ ...ENV, WECHATPAY_APPIDS: 'wx1, wx2,wx3' })?.appids).toEqual(['wx1', 'wx2', 'wx3']);
    expect(loadWechatpayConfig({ ...ENV, WECHATPAY_APPID: 'wx1' })?.appids).toEqual(['wx1']);
    expect(loadWechatpayConfig(ENV)?.appids).toEqual([]);
  });

  it.each(['WECHATPAY_MCHID', 'WECHATPAY_APPID', 'WECHATPAY_PUBLIC_KEY_PATH'])(
    'should refuse a list in the single-value variable %s, naming it',
    (name) => {
      expect(() => loadWechatpayConfig({ ...ENV, [name]: '1900009191,1900009192' })).toThrow(
        new RegExp(`${name}: ${name} takes a single value`),
      );
    },
  );

  it('should refuse a list in ALIPAY_APP_ID, naming it', () => {
    expect(() => loadAlipayAccounts({ ALIPAY_APP_ID: '2021,2022', ALIPAY_PUBLIC_KEY_PATH: '/p' })).toThrow(
      /ALIPAY_APP_ID/,
    );
  });
});
