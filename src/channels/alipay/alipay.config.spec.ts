import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigurationError } from '../../platform/config/env-validation';
import { loadAlipayAccounts, loadAlipayConfig, loadAlipayOptions } from './alipay.config';

describe(loadAlipayOptions.name, () => {
  const sut = loadAlipayOptions;

  it('should default to the production gateway, and treat empty values as unset', () => {
    expect(sut({})).toEqual({
      gatewayUrl: 'https://openapi.alipay.com/gateway.do',
      accounts: [],
      notifyMaxAgeSeconds: 26 * 3600,
    });
    expect(sut({ ALIPAY_GATEWAY_URL: ' ' }).gatewayUrl).toBe('https://openapi.alipay.com/gateway.do');
  });

  it('should read the gateway and the shorthand app with its private key', () => {
    const result = sut({
      ALIPAY_GATEWAY_URL: 'https://openapi-sandbox.dl.alipaydev.com/gateway.do',
      ALIPAY_APP_ID: '2021000117600001',
      ALIPAY_PUBLIC_KEY_PATH: '/run/keys/alipay_public.pem',
      ALIPAY_SELLER_ID: '2088531891668739',
      ALIPAY_APP_PRIVATE_KEY_PATH: '/run/keys/alipay_app_key.pem',
    });

    expect(result.gatewayUrl).toBe('https://openapi-sandbox.dl.alipaydev.com/gateway.do');
    expect(result.accounts).toEqual([
      expect.objectContaining({ appId: '2021000117600001', appPrivateKeyPath: '/run/keys/alipay_app_key.pem' }),
    ]);
  });

  it.each([
    ['ALIPAY_GATEWAY_URL', 'openapi.alipay.com/gateway.do'],
    ['ALIPAY_GATEWAY_URL', 'javascript:alert(1)'],
  ])('should reject %s=%s as not an http(s) URL', (name, value) => {
    expect(() => sut({ [name]: value })).toThrow(ConfigurationError);
    expect(() => sut({ [name]: value })).toThrow(`${name}: ${name} must be an http(s) URL`);
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

describe('certificate mode', () => {
  const certVars = {
    ALIPAY_APP_ID: '2021000117600001',
    ALIPAY_PUBLIC_CERT_PATHS: '/run/keys/alipayCertPublicKey_RSA2.crt, /run/keys/alipayCertPublicKey_RSA2.next.crt',
    ALIPAY_ROOT_CERT_PATH: '/run/keys/alipayRootCert.crt',
    ALIPAY_APP_CERT_PATH: '/run/keys/appCertPublicKey_2021000117600001.crt',
  };

  it('should read the certificates in place of the public key, several Alipay certificates for a rotation', () => {
    expect(loadAlipayConfig(certVars)).toEqual({
      appId: '2021000117600001',
      sellerId: undefined,
      certificates: {
        publicCertPaths: ['/run/keys/alipayCertPublicKey_RSA2.crt', '/run/keys/alipayCertPublicKey_RSA2.next.crt'],
        rootCertPath: '/run/keys/alipayRootCert.crt',
        appCertPath: '/run/keys/appCertPublicKey_2021000117600001.crt',
        validateChain: true,
      },
    });
    expect(loadAlipayConfig({ ...certVars, ALIPAY_VALIDATE_CERT_CHAIN: 'false' })?.certificates?.validateChain).toBe(
      false,
    );
  });

  it('should refuse both modes for one app, and certificates without the root', () => {
    expect(() => loadAlipayConfig({ ...certVars, ALIPAY_PUBLIC_KEY_PATH: '/run/keys/alipay_public.pem' })).toThrow(
      ConfigurationError,
    );
    expect(() => loadAlipayConfig({ ...certVars, ALIPAY_PUBLIC_KEY_PATH: '/run/keys/alipay_public.pem' })).toThrow(
      /both set; choose one/,
    );
    expect(() => loadAlipayConfig({ ...certVars, ALIPAY_ROOT_CERT_PATH: '' })).toThrow(/ALIPAY_ROOT_CERT_PATH/);
    expect(() => loadAlipayConfig({ ...certVars, ALIPAY_ROOT_CERT_PATH: 'a.crt,b.crt' })).toThrow(
      /ALIPAY_ROOT_CERT_PATH takes a single value/,
    );
    expect(() =>
      loadAlipayConfig({
        ALIPAY_APP_ID: '2021000117600001',
        ALIPAY_PUBLIC_KEY_PATH: 'k.pem',
        ALIPAY_VALIDATE_CERT_CHAIN: 'false',
      }),
    ).toThrow(/ALIPAY_VALIDATE_CERT_CHAIN applies to certificate mode/);
    expect(() => loadAlipayConfig({ ...certVars, ALIPAY_VALIDATE_CERT_CHAIN: 'no' })).toThrow(
      /ALIPAY_VALIDATE_CERT_CHAIN must be true or false/,
    );
  });

  describe('in the accounts file', () => {
    let dir: string;
    beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'alipay-accounts-'))));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    function accountsFile(alipay: object[]): NodeJS.ProcessEnv {
      const path = join(dir, `accounts-${Math.random().toString(36).slice(2)}.json`);
      writeFileSync(path, JSON.stringify({ alipay }));
      return { PAYMENT_ACCOUNTS_FILE: path };
    }

    it('should read one app in certificate mode beside one in public key mode', () => {
      const accounts = loadAlipayAccounts(
        accountsFile([
          { appId: '2021000117600001', alipayPublicKeyPath: '/k/a.pem' },
          {
            appId: '2021000117600002',
            alipayPublicCertPaths: ['/k/alipayCertPublicKey_RSA2.crt'],
            alipayRootCertPath: '/k/alipayRootCert.crt',
            appCertPath: '/k/appCertPublicKey.crt',
            validateCertChain: false,
          },
        ]),
      );

      expect(accounts).toEqual([
        expect.objectContaining({ appId: '2021000117600001', publicKeyPath: '/k/a.pem' }),
        expect.objectContaining({
          appId: '2021000117600002',
          certificates: {
            publicCertPaths: ['/k/alipayCertPublicKey_RSA2.crt'],
            rootCertPath: '/k/alipayRootCert.crt',
            appCertPath: '/k/appCertPublicKey.crt',
            validateChain: false,
          },
        }),
      ]);
      expect(accounts[0].certificates).toBeUndefined();
      expect(accounts[1].publicKeyPath).toBeUndefined();
    });

    it.each([
      [
        'both modes',
        { alipayPublicKeyPath: '/k/a.pem', alipayPublicCertPaths: ['/k/c.crt'], alipayRootCertPath: '/k/r.crt' },
        /choose one/,
      ],
      [
        'no key at all',
        {},
        /alipay\[0\]\.alipayPublicKeyPath is missing \(public key mode\), or alipayPublicCertPaths and alipayRootCertPath/,
      ],
      ['certificates without the root', { alipayPublicCertPaths: ['/k/c.crt'] }, /together/],
      [
        'an empty certificate list',
        { alipayPublicCertPaths: [], alipayRootCertPath: '/k/r.crt' },
        /alipayPublicCertPaths/,
      ],
    ])('should refuse an app with %s', (_what, entry, message) => {
      expect(() => loadAlipayAccounts(accountsFile([{ appId: '2021000117600003', ...entry }]))).toThrow(message);
    });
  });
});

describe('the seller check', () => {
  const APP = { ALIPAY_APP_ID: '2021000117600001', ALIPAY_PUBLIC_KEY_PATH: '/run/keys/alipay_public.pem' };

  it('should refuse an app without a seller id, naming ALIPAY_SELLER_ID and the waiver', () => {
    expect(() => loadAlipayOptions(APP)).toThrow(ConfigurationError);
    expect(() => loadAlipayOptions(APP)).toThrow(/ALIPAY_SELLER_ID.*ALIPAY_SELLER_CHECK_WAIVED=true/);
  });

  it('should load an app without a seller id when the check is explicitly waived, and say so', () => {
    const options = loadAlipayOptions({ ...APP, ALIPAY_SELLER_CHECK_WAIVED: 'true' });

    expect(options.accounts).toEqual([expect.objectContaining({ appId: '2021000117600001', sellerId: undefined })]);
    expect(options.sellerCheckWaived).toBe(true);
  });

  it('should refuse an accounts-file app without sellerId unless waived', () => {
    const dir = mkdtempSync(join(tmpdir(), 'alipay-seller-'));
    const file = join(dir, 'accounts.json');
    writeFileSync(
      file,
      JSON.stringify({ alipay: [{ appId: '2021000117600002', alipayPublicKeyPath: '/run/keys/a.pem' }] }),
    );

    expect(() => loadAlipayOptions({ PAYMENT_ACCOUNTS_FILE: file })).toThrow(/2021000117600002.*sellerId/);
    expect(
      loadAlipayOptions({ PAYMENT_ACCOUNTS_FILE: file, ALIPAY_SELLER_CHECK_WAIVED: 'true' }).accounts,
    ).toHaveLength(1);
    rmSync(dir, { recursive: true, force: true });
  });
});
