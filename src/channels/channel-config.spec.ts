import { loadAlipayConfig } from './alipay/alipay.config';
import { loadDatabaseConfig } from '../config/database.config';
import { loadServerConfig } from '../config/server.config';
import { loadWechatpayConfig } from './wechatpay/wechatpay.config';

const WECHATPAY = {
  WECHATPAY_MCHID: '1900009191',
  WECHATPAY_APIV3_KEY: 'a'.repeat(32),
  WECHATPAY_PUBLIC_KEY_ID: 'PUB_KEY_ID_0114232134912410000000000000',
  WECHATPAY_PUBLIC_KEY_PATH: '/run/keys/pub.pem',
};

describe(loadWechatpayConfig.name, () => {
  it('should disable the channel when none of its variables is set, and treat empty values as unset', () => {
    expect(loadWechatpayConfig({})).toBeUndefined();
    expect(loadWechatpayConfig({ WECHATPAY_MCHID: '', WECHATPAY_APIV3_KEY: ' ' })).toBeUndefined();
  });

  it('should accept public key mode, certificate mode, and both at once', () => {
    expect(loadWechatpayConfig(WECHATPAY)?.publicKey).toEqual({
      id: WECHATPAY.WECHATPAY_PUBLIC_KEY_ID,
      path: '/run/keys/pub.pem',
    });
    const { WECHATPAY_PUBLIC_KEY_ID, WECHATPAY_PUBLIC_KEY_PATH, ...certOnly } = WECHATPAY;
    expect(
      loadWechatpayConfig({ ...certOnly, WECHATPAY_PLATFORM_CERT_PATHS: 'a.pem, b.pem' })?.platformCertPaths,
    ).toEqual(['a.pem', 'b.pem']);
    expect(loadWechatpayConfig({ ...WECHATPAY, WECHATPAY_PLATFORM_CERT_PATHS: 'a.pem' })?.platformCertPaths).toEqual([
      'a.pem',
    ]);
  });

  it('should refuse a partial configuration, naming what is missing', () => {
    expect(() => loadWechatpayConfig({ WECHATPAY_MCHID: '1900009191' })).toThrow(/WECHATPAY_APIV3_KEY/);
    const { WECHATPAY_PUBLIC_KEY_ID, ...noKeyId } = WECHATPAY;
    expect(() => loadWechatpayConfig(noKeyId)).toThrow(/WECHATPAY_PUBLIC_KEY_ID/);
    expect(() => loadWechatpayConfig({ ...WECHATPAY, WECHATPAY_APIV3_KEY: 'short' })).toThrow(
      /WECHATPAY_APIV3_KEY must be exactly 32/,
    );
  });
});

describe(loadAlipayConfig.name, () => {
  it('should be disabled without variables and refuse half of them', () => {
    expect(loadAlipayConfig({})).toBeUndefined();
    expect(() => loadAlipayConfig({ ALIPAY_APP_ID: '2021000117600001' })).toThrow(/ALIPAY_PUBLIC_KEY_PATH/);
    expect(() => loadAlipayConfig({ ALIPAY_APP_ID: 'abc', ALIPAY_PUBLIC_KEY_PATH: 'k.pem' })).toThrow(
      /ALIPAY_APP_ID must be digits/,
    );
  });
});

describe('server and database configuration', () => {
  it('should default to port 3000 and the local MariaDB, and name a bad variable', () => {
    expect(loadServerConfig({})).toEqual({
      port: 3000,
      metricsPort: undefined,
      internalApiToken: undefined,
      http: { requestTimeoutMs: 10000, headersTimeoutMs: 5000, keepAliveTimeoutMs: 65000, maxConnections: 2000 },
      healthCheckTimeoutMs: 1000,
      shutdownDrainMs: 5000,
      shutdownGraceMs: 20000,
      exampleHandlers: false,
    });
    expect(loadDatabaseConfig({}).url).toBe('mariadb://root@127.0.0.1:3306/payments');
    expect(() => loadServerConfig({ INTERNAL_API_TOKEN: 'short' })).toThrow(/INTERNAL_API_TOKEN must be at least 16/);
    expect(() => loadDatabaseConfig({ DATABASE_URL: 'postgres://x/y' })).toThrow(/DATABASE_URL/);
    expect(() => loadServerConfig({ PORT: 'eighty' })).toThrow(/PORT/);
  });
});
