import { asReceivedAt, verificationClock } from './verification-clock';

describe('verificationClock', () => {
  const sut = verificationClock;
  const received = new Date('2026-11-29T08:00:00.000Z');

  it('should read now outside a re-verification', () => {
    const before = Date.now();

    expect(sut()).toBeGreaterThanOrEqual(before);
  });

  it('should read the moment received during the synchronous part of the work', () => {
    expect(asReceivedAt(received, () => sut())).toBe(received.getTime());
  });

  it('should read now again after the first await, and after the work', async () => {
    const readings = await asReceivedAt(received, async () => {
      const during = sut();
      await Promise.resolve();
      return [during, sut()];
    });

    expect(readings[0]).toBe(received.getTime());
    expect(readings[1]).toBeGreaterThan(received.getTime() + 1000);
    expect(sut()).toBeGreaterThan(received.getTime() + 1000);
  });

  it('should read now in a timer set up during the work', async () => {
    const inTimer = await asReceivedAt(
      received,
      () => new Promise<number>((resolve) => setTimeout(() => resolve(sut()), 1)),
    );

    expect(inTimer).toBeGreaterThan(received.getTime() + 1000);
  });
});
