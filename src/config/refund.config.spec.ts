import { loadRefundConfig } from './refund.config';
import { ConfigurationError } from './validate-env';

describe(loadRefundConfig.name, () => {
  const sut = loadRefundConfig;

  it('should default to the production gateways and the documented timings', () => {
    expect(sut({})).toEqual({
      wechatpay: {
        apiBaseUrl: 'https://api.mch.weixin.qq.com',
        merchantPrivateKeyPath: undefined,
        merchantSerialNo: undefined,
        notifyUrl: undefined,
      },
      alipay: { gatewayUrl: 'https://openapi.alipay.com/gateway.do', appPrivateKeyPath: undefined },
      requestTimeoutMs: 10000,
      billDownloadTimeoutMs: 600000,
      retryBaseDelayMs: 5000,
      retryMaxDelayMs: 600000,
      pollIntervalMs: 1000,
      processingMaxAgeSeconds: 86400,
      approvalThreshold: undefined,
    });
  });

  it('should treat empty values as unset', () => {
    const result = sut({
      WECHATPAY_API_BASE_URL: '',
      ALIPAY_GATEWAY_URL: ' ',
      REFUND_REQUEST_TIMEOUT_MS: '',
      REFUND_POLL_INTERVAL_MS: '  ',
    });

    expect(result.wechatpay.apiBaseUrl).toBe('https://api.mch.weixin.qq.com');
    expect(result.alipay.gatewayUrl).toBe('https://openapi.alipay.com/gateway.do');
    expect(result.requestTimeoutMs).toBe(10000);
    expect(result.pollIntervalMs).toBe(1000);
  });

  it('should read every variable that is set', () => {
    const result = sut({
      WECHATPAY_API_BASE_URL: 'http://wechat-mock:8080/base',
      WECHATPAY_MERCHANT_PRIVATE_KEY_PATH: '/run/keys/apiclient_key.pem',
      WECHATPAY_MERCHANT_SERIAL_NO: '3775b6a45acd588826d15e583a95f5dd00000000',
      WECHATPAY_REFUND_NOTIFY_URL: 'https://pay.example.com/notify/wechatpay',
      ALIPAY_GATEWAY_URL: 'https://openapi-sandbox.dl.alipaydev.com/gateway.do',
      ALIPAY_APP_PRIVATE_KEY_PATH: '/run/keys/alipay_app_key.pem',
      REFUND_REQUEST_TIMEOUT_MS: '2500',
      BILL_DOWNLOAD_TIMEOUT_MS: '120000',
      REFUND_RETRY_BASE_DELAY_MS: '100',
      REFUND_RETRY_MAX_DELAY_MS: '60000',
      REFUND_POLL_INTERVAL_MS: '250',
      REFUND_PROCESSING_MAX_AGE_SECONDS: '3600',
      REFUND_APPROVAL_THRESHOLD: '500000',
    });

    expect(result).toEqual({
      wechatpay: {
        apiBaseUrl: 'http://wechat-mock:8080/base',
        merchantPrivateKeyPath: '/run/keys/apiclient_key.pem',
        merchantSerialNo: '3775B6A45ACD588826D15E583A95F5DD00000000',
        notifyUrl: 'https://pay.example.com/notify/wechatpay',
      },
      alipay: {
        gatewayUrl: 'https://openapi-sandbox.dl.alipaydev.com/gateway.do',
        appPrivateKeyPath: '/run/keys/alipay_app_key.pem',
      },
      requestTimeoutMs: 2500,
      billDownloadTimeoutMs: 120000,
      retryBaseDelayMs: 100,
      retryMaxDelayMs: 60000,
      pollIntervalMs: 250,
      processingMaxAgeSeconds: 3600,
      approvalThreshold: 500000,
    });
    expect(Number.isInteger(result.requestTimeoutMs)).toBe(true);
  });

  it.each([
    ['https://api.mch.weixin.qq.com/', 'https://api.mch.weixin.qq.com'],
    ['http://127.0.0.1:9000///', 'http://127.0.0.1:9000'],
    ['http://localhost:9000/v3/', 'http://localhost:9000/v3'],
  ])('should trim the trailing slashes of WECHATPAY_API_BASE_URL %s', (url, expected) => {
    expect(sut({ WECHATPAY_API_BASE_URL: url }).wechatpay.apiBaseUrl).toBe(expected);
  });

  it('should upper-case the merchant serial number', () => {
    expect(sut({ WECHATPAY_MERCHANT_SERIAL_NO: '5157f09efdc096de15ebe81a47057a7232f1b8e1' }).wechatpay).toMatchObject({
      merchantSerialNo: '5157F09EFDC096DE15EBE81A47057A7232F1B8E1',
    });
  });

  it.each([
    ['WECHATPAY_API_BASE_URL', 'api.mch.weixin.qq.com'],
    ['WECHATPAY_API_BASE_URL', 'ftp://api.mch.weixin.qq.com'],
    ['WECHATPAY_API_BASE_URL', 'not a url'],
    ['WECHATPAY_REFUND_NOTIFY_URL', '/notify/wechatpay'],
    ['ALIPAY_GATEWAY_URL', 'openapi.alipay.com/gateway.do'],
    ['ALIPAY_GATEWAY_URL', 'javascript:alert(1)'],
  ])('should reject %s=%s as not an http(s) URL', (name, value) => {
    expect(() => sut({ [name]: value })).toThrow(ConfigurationError);
    expect(() => sut({ [name]: value })).toThrow(`${name}: ${name} must be an http(s) URL`);
  });

  it.each([
    ['a non-hex character', '5157F09EFDC096DE15EBE81A47057A7232F1B8EG'],
    ['7 digits', '5157F09'],
    ['65 digits', 'A'.repeat(65)],
    ['a 0x prefix', '0x5157F09EFDC096DE'],
  ])('should reject a WECHATPAY_MERCHANT_SERIAL_NO with %s', (_what, serial) => {
    expect(() => sut({ WECHATPAY_MERCHANT_SERIAL_NO: serial })).toThrow(
      /WECHATPAY_MERCHANT_SERIAL_NO must be the certificate serial in hex/,
    );
  });

  it('should accept serial numbers of 8 and 64 hex digits', () => {
    expect(sut({ WECHATPAY_MERCHANT_SERIAL_NO: 'abcdef01' }).wechatpay.merchantSerialNo).toBe('ABCDEF01');
    expect(sut({ WECHATPAY_MERCHANT_SERIAL_NO: 'f'.repeat(64) }).wechatpay.merchantSerialNo).toBe('F'.repeat(64));
  });

  describe.each([
    ['REFUND_REQUEST_TIMEOUT_MS', 'requestTimeoutMs', 100, 120000],
    ['REFUND_RETRY_BASE_DELAY_MS', 'retryBaseDelayMs', 1, 3600000],
    ['REFUND_RETRY_MAX_DELAY_MS', 'retryMaxDelayMs', 1, 86400000],
    ['REFUND_POLL_INTERVAL_MS', 'pollIntervalMs', 10, 600000],
    ['REFUND_PROCESSING_MAX_AGE_SECONDS', 'processingMaxAgeSeconds', 1, 2592000],
    ['REFUND_APPROVAL_THRESHOLD', 'approvalThreshold', 1, 10_000_000_000_000],
  ] as const)('%s', (name, field, min, max) => {
    it(`should accept the bounds ${min} and ${max}`, () => {
      expect(sut({ [name]: String(min) })[field]).toBe(min);
      expect(sut({ [name]: String(max) })[field]).toBe(max);
    });

    it.each([String(min - 1), String(max + 1), '-5', '1.5', 'ten', '10s'])(
      'should reject %s, naming the variable',
      (value) => {
        expect(() => sut({ [name]: value })).toThrow(ConfigurationError);
        expect(() => sut({ [name]: value })).toThrow(new RegExp(`- ${name}: ${name} must`));
      },
    );
  });

  it('should name every bad variable at once', () => {
    const error = (() => {
      try {
        sut({ ALIPAY_GATEWAY_URL: 'nope', REFUND_POLL_INTERVAL_MS: '0' });
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();

    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error?.message).toContain('ALIPAY_GATEWAY_URL');
    expect(error?.message).toContain('REFUND_POLL_INTERVAL_MS');
  });
});
