import { ConfigurationError } from '../../domain/env-validation';
import { loadAlipayConfig, loadAlipayOptions } from './alipay.config';

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
