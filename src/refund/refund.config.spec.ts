import { loadRefundConfig } from './refund.config';
import { ConfigurationError } from '../platform/config/env-validation';

describe(loadRefundConfig.name, () => {
  const sut = loadRefundConfig;

  it('should default to the documented timings', () => {
    expect(sut({})).toEqual({
      retryBaseDelayMs: 5000,
      retryMaxDelayMs: 600000,
      pollIntervalMs: 1000,
      processingMaxAgeSeconds: 86400,
    });
  });

  it('should treat empty values as unset', () => {
    const result = sut({ REFUND_POLL_INTERVAL_MS: '  ' });

    expect(result.pollIntervalMs).toBe(1000);
  });

  it('should read every variable that is set', () => {
    const result = sut({
      REFUND_RETRY_BASE_DELAY_MS: '100',
      REFUND_RETRY_MAX_DELAY_MS: '60000',
      REFUND_POLL_INTERVAL_MS: '250',
      REFUND_PROCESSING_MAX_AGE_SECONDS: '3600',
    });

    expect(result).toEqual({
      retryBaseDelayMs: 100,
      retryMaxDelayMs: 60000,
      pollIntervalMs: 250,
      processingMaxAgeSeconds: 3600,
    });
    expect(Number.isInteger(result.retryBaseDelayMs)).toBe(true);
  });

  describe.each([
    ['REFUND_RETRY_BASE_DELAY_MS', 'retryBaseDelayMs', 1, 3600000],
    ['REFUND_RETRY_MAX_DELAY_MS', 'retryMaxDelayMs', 1, 86400000],
    ['REFUND_POLL_INTERVAL_MS', 'pollIntervalMs', 10, 600000],
    ['REFUND_PROCESSING_MAX_AGE_SECONDS', 'processingMaxAgeSeconds', 1, 2592000],
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
        sut({ REFUND_RETRY_BASE_DELAY_MS: 'soon', REFUND_POLL_INTERVAL_MS: '0' });
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();

    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error?.message).toContain('REFUND_RETRY_BASE_DELAY_MS');
    expect(error?.message).toContain('REFUND_POLL_INTERVAL_MS');
  });
});
