import { ConfigurationError } from '../../platform/config/env-validation';
import { loadWechatpayAccounts, loadWechatpayApiOptions, loadWechatpayConfig } from './wechatpay.config';

const SHORTHAND = {
  WECHATPAY_MCHID: '1900009191',
  WECHATPAY_APIV3_KEY: 'a'.repeat(32),
  WECHATPAY_PUBLIC_KEY_ID: 'PUB_KEY_ID_0114232134912410000000000000',
  WECHATPAY_PUBLIC_KEY_PATH: '/run/keys/pub.pem',
};

describe(loadWechatpayApiOptions.name, () => {
  const sut = loadWechatpayApiOptions;

  it('should default to the production API, and treat empty values as unset', () => {
    expect(sut({})).toEqual({ baseUrl: 'https://api.mch.weixin.qq.com', refundNotifyUrl: undefined });
    expect(sut({ WECHATPAY_API_BASE_URL: '' }).baseUrl).toBe('https://api.mch.weixin.qq.com');
  });

  it('should read every variable that is set', () => {
    expect(
      sut({
        WECHATPAY_API_BASE_URL: 'http://wechat-mock:8080/base',
        WECHATPAY_REFUND_NOTIFY_URL: 'https://pay.example.com/notify/wechatpay',
      }),
    ).toEqual({ baseUrl: 'http://wechat-mock:8080/base', refundNotifyUrl: 'https://pay.example.com/notify/wechatpay' });
  });

  it.each([
    ['https://api.mch.weixin.qq.com/', 'https://api.mch.weixin.qq.com'],
    ['http://127.0.0.1:9000///', 'http://127.0.0.1:9000'],
    ['http://localhost:9000/v3/', 'http://localhost:9000/v3'],
  ])('should trim the trailing slashes of WECHATPAY_API_BASE_URL %s', (url, expected) => {
    expect(sut({ WECHATPAY_API_BASE_URL: url }).baseUrl).toBe(expected);
  });

  it.each([
    ['WECHATPAY_API_BASE_URL', 'api.mch.weixin.qq.com'],
    ['WECHATPAY_API_BASE_URL', 'ftp://api.mch.weixin.qq.com'],
    ['WECHATPAY_API_BASE_URL', 'not a url'],
    ['WECHATPAY_REFUND_NOTIFY_URL', '/notify/wechatpay'],
  ])('should reject %s=%s as not an http(s) URL', (name, value) => {
    expect(() => sut({ [name]: value })).toThrow(ConfigurationError);
    expect(() => sut({ [name]: value })).toThrow(`${name}: ${name} must be an http(s) URL`);
  });
});

describe('the merchant key of the shorthand account', () => {
  const serialOf = (serial: string) =>
    loadWechatpayAccounts({
      ...SHORTHAND,
      WECHATPAY_MERCHANT_PRIVATE_KEY_PATH: '/k.pem',
      WECHATPAY_MERCHANT_SERIAL_NO: serial,
    })[0].merchantSerialNo;

  it('should read the key path and upper-case the serial number', () => {
    expect(
      loadWechatpayAccounts({
        ...SHORTHAND,
        WECHATPAY_MERCHANT_PRIVATE_KEY_PATH: '/run/keys/apiclient_key.pem',
        WECHATPAY_MERCHANT_SERIAL_NO: '5157f09efdc096de15ebe81a47057a7232f1b8e1',
      })[0],
    ).toMatchObject({
      merchantPrivateKeyPath: '/run/keys/apiclient_key.pem',
      merchantSerialNo: '5157F09EFDC096DE15EBE81A47057A7232F1B8E1',
    });
  });

  it.each([
    ['a non-hex character', '5157F09EFDC096DE15EBE81A47057A7232F1B8EG'],
    ['7 digits', '5157F09'],
    ['65 digits', 'A'.repeat(65)],
    ['a 0x prefix', '0x5157F09EFDC096DE'],
  ])('should reject a WECHATPAY_MERCHANT_SERIAL_NO with %s', (_what, serial) => {
    expect(() => serialOf(serial)).toThrow(/WECHATPAY_MERCHANT_SERIAL_NO must be the certificate serial in hex/);
  });

  it('should accept serial numbers of 8 and 64 hex digits', () => {
    expect(serialOf('abcdef01')).toBe('ABCDEF01');
    expect(serialOf('f'.repeat(64))).toBe('F'.repeat(64));
  });
});

describe(loadWechatpayConfig.name, () => {
  it('should disable the channel when none of its variables is set, and treat empty values as unset', () => {
    expect(loadWechatpayConfig({})).toBeUndefined();
    expect(loadWechatpayConfig({ WECHATPAY_MCHID: '', WECHATPAY_APIV3_KEY: ' ' })).toBeUndefined();
  });

  it('should accept public key mode, certificate mode, and both at once', () => {
    expect(loadWechatpayConfig(SHORTHAND)?.publicKey).toEqual({
      id: SHORTHAND.WECHATPAY_PUBLIC_KEY_ID,
      path: '/run/keys/pub.pem',
    });
    const { WECHATPAY_PUBLIC_KEY_ID, WECHATPAY_PUBLIC_KEY_PATH, ...certOnly } = SHORTHAND;
    expect(
      loadWechatpayConfig({ ...certOnly, WECHATPAY_PLATFORM_CERT_PATHS: 'a.pem, b.pem' })?.platformCertPaths,
    ).toEqual(['a.pem', 'b.pem']);
    expect(loadWechatpayConfig({ ...SHORTHAND, WECHATPAY_PLATFORM_CERT_PATHS: 'a.pem' })?.platformCertPaths).toEqual([
      'a.pem',
    ]);
  });

  it('should take the APIv3 and APIv2 keys as files (WECHATPAY_APIV3_KEY_PATH, WECHATPAY_APIV2_KEY_PATH)', () => {
    const { WECHATPAY_APIV3_KEY: _key, ...withoutKey } = SHORTHAND;
    const config = loadWechatpayConfig({
      ...withoutKey,
      WECHATPAY_APIV3_KEY_PATH: '/run/keys/apiv3.key',
      WECHATPAY_APIV2_KEY_PATH: '/run/keys/apiv2.key',
    });
    expect(config).toMatchObject({ apiV3KeyPath: '/run/keys/apiv3.key', apiV2KeyPath: '/run/keys/apiv2.key' });
    expect(config?.apiV3Key).toBeUndefined();
    expect(config?.apiV2Key).toBeUndefined();
    // The string form names no file.
    expect(loadWechatpayConfig(SHORTHAND)).not.toHaveProperty('apiV3KeyPath');
    // An APIv2-only account by its key file.
    expect(
      loadWechatpayConfig({ WECHATPAY_MCHID: '1900009191', WECHATPAY_APIV2_KEY_PATH: '/run/keys/apiv2.key' }),
    ).toMatchObject({ mchid: '1900009191', apiV2KeyPath: '/run/keys/apiv2.key' });
  });

  it.each([
    ['WECHATPAY_APIV3_KEY', 'WECHATPAY_APIV3_KEY_PATH'],
    ['WECHATPAY_APIV2_KEY', 'WECHATPAY_APIV2_KEY_PATH'],
  ])('should refuse %s and %s both set, naming them', (key, path) => {
    const env = { ...SHORTHAND, [key]: 'k'.repeat(32), [path]: '/run/keys/api.key' };
    expect(() => loadWechatpayConfig(env)).toThrow(ConfigurationError);
    expect(() => loadWechatpayConfig(env)).toThrow(`${key} and ${path} are both set`);
  });

  it('should refuse a partial configuration, naming what is missing', () => {
    expect(() => loadWechatpayConfig({ WECHATPAY_MCHID: '1900009191' })).toThrow(/WECHATPAY_APIV3_KEY/);
    const { WECHATPAY_PUBLIC_KEY_ID, ...noKeyId } = SHORTHAND;
    expect(() => loadWechatpayConfig(noKeyId)).toThrow(/WECHATPAY_PUBLIC_KEY_ID/);
    expect(() => loadWechatpayConfig({ ...SHORTHAND, WECHATPAY_APIV3_KEY: 'short' })).toThrow(
      /WECHATPAY_APIV3_KEY must be exactly 32/,
    );
  });
});
