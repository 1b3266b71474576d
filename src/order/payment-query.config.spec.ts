import { loadPaymentQueryConfig, nextQueryAt } from './payment-query.config';
import { ConfigurationError } from '../platform/config/env-validation';

describe(loadPaymentQueryConfig.name, () => {
  const sut = loadPaymentQueryConfig;

  it('should default to the documented schedule and bounds', () => {
    expect(sut({})).toEqual({
      scheduleSeconds: [60, 300, 900, 1800, 3600, 7200, 21600, 86400],
      concurrency: 4,
      ratePerSecond: 20,
      pollIntervalMs: 1000,
    });
  });

  it('should read every variable', () => {
    expect(
      sut({
        PAYMENT_QUERY_SCHEDULE_SECONDS: ' 1, 2 ,30',
        PAYMENT_QUERY_CONCURRENCY: '2',
        PAYMENT_QUERY_RATE_PER_SECOND: '5',
        PAYMENT_QUERY_POLL_INTERVAL_MS: '100',
      }),
    ).toEqual({ scheduleSeconds: [1, 2, 30], concurrency: 2, ratePerSecond: 5, pollIntervalMs: 100 });
  });

  it.each([
    ['PAYMENT_QUERY_SCHEDULE_SECONDS', '60;300'],
    ['PAYMENT_QUERY_SCHEDULE_SECONDS', '1.5'],
    ['PAYMENT_QUERY_SCHEDULE_SECONDS', '300,60'],
    ['PAYMENT_QUERY_SCHEDULE_SECONDS', '0,60'],
    ['PAYMENT_QUERY_SCHEDULE_SECONDS', '60,60'],
    ['PAYMENT_QUERY_CONCURRENCY', '0'],
    ['PAYMENT_QUERY_CONCURRENCY', '65'],
    ['PAYMENT_QUERY_RATE_PER_SECOND', '0'],
    ['PAYMENT_QUERY_POLL_INTERVAL_MS', 'fast'],
  ])('should refuse %s=%s, naming the variable', (name, value) => {
    expect(() => sut({ [name]: value })).toThrow(ConfigurationError);
    expect(() => sut({ [name]: value })).toThrow(name);
  });
});

describe(nextQueryAt.name, () => {
  const schedule = [60, 300, 900];
  const created = new Date('2026-12-01T00:00:00.000Z');
  const at = (seconds: number) => new Date(created.getTime() + seconds * 1000);

  it('should give the first age at registration', () => {
    expect(nextQueryAt(schedule, created, created)).toEqual(at(60));
  });

  it('should give the next age once one is reached, never the same one again', () => {
    expect(nextQueryAt(schedule, created, at(60))).toEqual(at(300));
    expect(nextQueryAt(schedule, created, at(61))).toEqual(at(300));
    expect(nextQueryAt(schedule, created, at(300))).toEqual(at(900));
  });

  it('should skip the ages a backlog let pass, to the next one still ahead', () => {
    expect(nextQueryAt(schedule, created, at(850))).toEqual(at(900));
  });

  it('should give null after the last age', () => {
    expect(nextQueryAt(schedule, created, at(900))).toBeNull();
    expect(nextQueryAt(schedule, created, at(86400 * 30))).toBeNull();
  });
});
