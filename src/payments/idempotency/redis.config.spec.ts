import { loadRedisConfig } from './redis.config';
import { ConfigurationError } from '../../platform/config/env-validation';

describe(loadRedisConfig.name, () => {
  const sut = loadRedisConfig;

  it('should default to no Redis, keys kept 48 h, a 5 s in-flight marker and a 100 ms command timeout', () => {
    expect(sut({})).toEqual({
      url: undefined,
      keyPrefix: 'pcs:',
      paidTtlSeconds: 172800,
      inFlightMs: 5000,
      commandTimeoutMs: 100,
    });
  });

  it('should read every variable that is set', () => {
    expect(
      sut({
        REDIS_URL: 'redis://:secret@redis:6379/2',
        REDIS_KEY_PREFIX: 'payments-prod:',
        REDIS_PAID_TTL_SECONDS: '90000',
        REDIS_IN_FLIGHT_MS: '3000',
        REDIS_COMMAND_TIMEOUT_MS: '50',
      }),
    ).toEqual({
      url: 'redis://:secret@redis:6379/2',
      keyPrefix: 'payments-prod:',
      paidTtlSeconds: 90000,
      inFlightMs: 3000,
      commandTimeoutMs: 50,
    });
  });

  it.each([
    ['REDIS_URL', 'http://redis:6379'],
    ['REDIS_URL', 'redis:6379'],
    ['REDIS_KEY_PREFIX', 'has space'],
    ['REDIS_PAID_TTL_SECONDS', '0'],
    ['REDIS_PAID_TTL_SECONDS', '1.5'],
    ['REDIS_IN_FLIGHT_MS', '10'],
    ['REDIS_COMMAND_TIMEOUT_MS', '0'],
    ['REDIS_COMMAND_TIMEOUT_MS', 'fast'],
  ])('should refuse %s=%s naming it', (name, value) => {
    expect(() => sut({ [name]: value })).toThrow(ConfigurationError);
    expect(() => sut({ [name]: value })).toThrow(new RegExp(name));
  });
});
