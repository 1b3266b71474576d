import { loadRetentionConfig } from './retention.config';
import { ConfigurationError } from './env-validation';

describe(loadRetentionConfig.name, () => {
  const sut = loadRetentionConfig;

  it('should default to 180 days of raw bytes, 30 days of events and refusals, small batches with a pause', () => {
    expect(sut({})).toEqual({
      rawDays: 180,
      eventsDays: 30,
      refusedDays: 30,
      batchSize: 500,
      batchPauseMs: 1000,
      intervalMs: 600000,
    });
  });

  it('should read every variable that is set', () => {
    expect(
      sut({
        RETENTION_RAW_DAYS: '365',
        RETENTION_EVENTS_DAYS: '90',
        RETENTION_REFUSED_DAYS: '7',
        RETENTION_BATCH_SIZE: '100',
        RETENTION_BATCH_PAUSE_MS: '0',
        RETENTION_INTERVAL_MS: '60000',
      }),
    ).toEqual({ rawDays: 365, eventsDays: 90, refusedDays: 7, batchSize: 100, batchPauseMs: 0, intervalMs: 60000 });
  });

  it.each([
    ['RETENTION_RAW_DAYS', '0'],
    ['RETENTION_RAW_DAYS', '1.5'],
    ['RETENTION_EVENTS_DAYS', '-30'],
    ['RETENTION_EVENTS_DAYS', 'thirty'],
    ['RETENTION_REFUSED_DAYS', '0'],
    ['RETENTION_BATCH_SIZE', '0'],
    ['RETENTION_BATCH_SIZE', '100000'],
    ['RETENTION_BATCH_PAUSE_MS', '-1'],
    ['RETENTION_INTERVAL_MS', '5'],
  ])('should refuse %s=%s naming it', (name, value) => {
    expect(() => sut({ [name]: value })).toThrow(ConfigurationError);
    expect(() => sut({ [name]: value })).toThrow(new RegExp(name));
  });
});
