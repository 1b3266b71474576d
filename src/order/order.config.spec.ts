import { loadOrderConfig } from './order.config';
import { ConfigurationError } from '../platform/config/env-validation';

describe(loadOrderConfig.name, () => {
  const sut = loadOrderConfig;

  it('should accept CNY only by default', () => {
    expect(sut({})).toEqual({ currencies: ['CNY'], paymentExpirySeconds: 1800 });
    expect(sut({ CURRENCIES: ' ' }).currencies).toEqual(['CNY']);
  });

  it('should read a comma-separated list, once each', () => {
    expect(sut({ CURRENCIES: 'CNY, USD,HKD,USD' }).currencies).toEqual(['CNY', 'USD', 'HKD']);
  });

  it.each(['cny', 'YUAN', 'CNY,', ',CNY', 'CNY;USD', 'CNY,,USD'])('should refuse CURRENCIES=%s naming it', (value) => {
    expect(() => sut({ CURRENCIES: value })).toThrow(ConfigurationError);
    expect(() => sut({ CURRENCIES: value })).toThrow(/CURRENCIES/);
  });

  it('should read PUBLIC_BASE_URL without its trailing slash, and the payment expiry', () => {
    expect(sut({ PUBLIC_BASE_URL: 'https://pay.example.com/', PAYMENT_EXPIRY_SECONDS: '900' })).toMatchObject({
      publicBaseUrl: 'https://pay.example.com',
      paymentExpirySeconds: 900,
    });
    expect(sut({}).publicBaseUrl).toBeUndefined();
  });

  it.each([
    ['PUBLIC_BASE_URL', 'pay.example.com'],
    ['PUBLIC_BASE_URL', 'ftp://pay.example.com'],
    ['PAYMENT_EXPIRY_SECONDS', '59'],
    ['PAYMENT_EXPIRY_SECONDS', '604801'],
  ])('should refuse %s=%s naming it', (name, value) => {
    expect(() => sut({ [name]: value })).toThrow(new RegExp(name));
  });
});
