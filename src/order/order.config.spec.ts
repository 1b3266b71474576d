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
});
