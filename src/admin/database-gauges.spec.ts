import { toSnapshot } from './database-gauges';

describe(toSnapshot.name, () => {
  const now = Date.parse('2026-12-01T06:00:00.000Z');

  it('should report every anomaly type and refund status, zero when the query has no row for it', () => {
    const sut = toSnapshot([], now);

    expect(sut).toEqual({
      outboxPending: 0,
      outboxOldestPendingAgeSeconds: 0,
      deadLetters: { outbox: 0, handler: 0 },
      openAnomalies: {
        DUPLICATE_PAYMENT: 0,
        PAID_AFTER_CLOSE: 0,
        AMOUNT_MISMATCH: 0,
        MERCHANT_MISMATCH: 0,
        MALFORMED_NOTIFICATION: 0,
      },
      refunds: {
        AWAITING_APPROVAL: 0,
        PENDING: 0,
        PROCESSING: 0,
        SUCCEEDED: 0,
        CLOSED: 0,
        ABNORMAL: 0,
        RESOLVED_OFFLINE: 0,
        REJECTED: 0,
      },
      refundOldestOpenAgeSeconds: 0,
    });
  });

  it('should read counts as numbers and ages in whole seconds from the oldest timestamp', () => {
    const sut = toSnapshot(
      [
        { metric: 'outbox_pending', label: null, value: '12', oldest: new Date(now - 90_400) },
        { metric: 'dead_letters', label: 'outbox', value: '1', oldest: null },
        { metric: 'dead_letters', label: 'handler', value: 3, oldest: null },
        { metric: 'open_anomalies', label: 'AMOUNT_MISMATCH', value: '2', oldest: null },
        { metric: 'refunds', label: 'PROCESSING', value: '4', oldest: null },
        { metric: 'refunds', label: 'SUCCEEDED', value: '40', oldest: null },
        { metric: 'refund_oldest_open', label: null, value: '4', oldest: '2026-12-01T05:00:00.000Z' },
      ],
      now,
    );

    expect(sut.outboxPending).toBe(12);
    expect(sut.outboxOldestPendingAgeSeconds).toBe(90);
    expect(sut.deadLetters).toEqual({ outbox: 1, handler: 3 });
    expect(sut.openAnomalies.AMOUNT_MISMATCH).toBe(2);
    expect(sut.openAnomalies.DUPLICATE_PAYMENT).toBe(0);
    expect(sut.refunds).toMatchObject({ PROCESSING: 4, SUCCEEDED: 40, PENDING: 0 });
    expect(sut.refundOldestOpenAgeSeconds).toBe(3600);
  });

  it('should never report a negative age when the database clock runs ahead', () => {
    const sut = toSnapshot([{ metric: 'outbox_pending', label: null, value: '1', oldest: new Date(now + 5000) }], now);

    expect(sut.outboxOldestPendingAgeSeconds).toBe(0);
  });
});
