import { ConfigurationError } from '../platform/config/env-validation';
import { loadChannelCallsConfig } from './channel-calls.config';

describe(loadChannelCallsConfig.name, () => {
  const sut = loadChannelCallsConfig;

  it('should default to the documented timeouts, and treat empty values as unset', () => {
    expect(sut({})).toEqual({ requestTimeoutMs: 10000, billDownloadTimeoutMs: 600000 });
    expect(sut({ REFUND_REQUEST_TIMEOUT_MS: '', BILL_DOWNLOAD_TIMEOUT_MS: ' ' })).toEqual({
      requestTimeoutMs: 10000,
      billDownloadTimeoutMs: 600000,
    });
  });

  it('should read every variable that is set', () => {
    const result = sut({ REFUND_REQUEST_TIMEOUT_MS: '2500', BILL_DOWNLOAD_TIMEOUT_MS: '120000' });

    expect(result).toEqual({ requestTimeoutMs: 2500, billDownloadTimeoutMs: 120000 });
    expect(Number.isInteger(result.requestTimeoutMs)).toBe(true);
  });

  describe.each([
    ['REFUND_REQUEST_TIMEOUT_MS', 'requestTimeoutMs', 100, 120000],
    ['BILL_DOWNLOAD_TIMEOUT_MS', 'billDownloadTimeoutMs', 1000, 3600000],
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
});
