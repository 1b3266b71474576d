import { ConfigurationError } from '../platform/config/env-validation';
import { loadReconciliationConfig } from './reconciliation.config';

describe(loadReconciliationConfig.name, () => {
  it('should default to 10:30 Beijing time, hourly retries and a five-minute boundary', () => {
    const sut = loadReconciliationConfig({});

    expect(sut).toEqual({ dailyAtMinute: 630, retrySeconds: 3600, boundarySeconds: 300, pollIntervalMs: 60000 });
  });

  it('should read RECONCILE_AT as a time of day, and off as no schedule', () => {
    expect(loadReconciliationConfig({ RECONCILE_AT: '00:05' }).dailyAtMinute).toBe(5);
    expect(loadReconciliationConfig({ RECONCILE_AT: '23:59' }).dailyAtMinute).toBe(1439);
    expect(loadReconciliationConfig({ RECONCILE_AT: 'off' }).dailyAtMinute).toBeUndefined();
  });

  it.each(['24:00', '9:30', '10:60', 'never', '10:30:00'])('should refuse RECONCILE_AT=%s, naming it', (value) => {
    expect(() => loadReconciliationConfig({ RECONCILE_AT: value })).toThrow(ConfigurationError);
    expect(() => loadReconciliationConfig({ RECONCILE_AT: value })).toThrow(/RECONCILE_AT/);
  });

  it('should refuse a retry delay of zero and a boundary over an hour', () => {
    expect(() => loadReconciliationConfig({ RECONCILE_RETRY_SECONDS: '0' })).toThrow(/RECONCILE_RETRY_SECONDS/);
    expect(() => loadReconciliationConfig({ RECONCILE_BOUNDARY_SECONDS: '3601' })).toThrow(
      /RECONCILE_BOUNDARY_SECONDS/,
    );
  });
});
