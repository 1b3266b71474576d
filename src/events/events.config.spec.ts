import { loadEventsConfig, retryDelayMs } from './events.config';

describe(retryDelayMs.name, () => {
  const config = { ...loadEventsConfig({}), retryBaseDelayMs: 1000, retryMaxDelayMs: 60000 };

  it('should double the ceiling with every attempt, and spread each delay over its upper half', () => {
    expect([1, 2, 3, 4].map((attempt) => retryDelayMs(config, attempt, () => 0))).toEqual([500, 1000, 2000, 4000]);
    expect([1, 2, 3, 4].map((attempt) => retryDelayMs(config, attempt, () => 1))).toEqual([1000, 2000, 4000, 8000]);
  });

  it('should never exceed the configured maximum, however many attempts', () => {
    expect(retryDelayMs(config, 7, () => 1)).toBe(60000);
    expect(retryDelayMs(config, 1000, () => 1)).toBe(60000);
  });
});

describe(loadEventsConfig.name, () => {
  it('should default to the embedded mode and the payments exchange', () => {
    const sut = loadEventsConfig({});
    expect([sut.rabbitmqUrl, sut.exchange, sut.outboxMaxAttempts, sut.handlerMaxAttempts]).toEqual([
      undefined,
      'payments',
      10,
      5,
    ]);
  });

  it('should name the variable that is wrong', () => {
    expect(() => loadEventsConfig({ RABBITMQ_URL: 'http://broker' })).toThrow(/RABBITMQ_URL/);
    expect(() => loadEventsConfig({ OUTBOX_BATCH_SIZE: '0' })).toThrow(/OUTBOX_BATCH_SIZE/);
  });
});
