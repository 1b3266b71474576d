import { Logger } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';
import { loadRedisConfig, RedisConfig } from '../../src/payments/idempotency/redis.config';
import { PaymentNotification } from '../../src/domain/notification';
import { CommittedPayments } from '../../src/payments/idempotency/committed-payments';
import { CommittedPaymentsCache } from '../../src/payments/idempotency/committed-payments.cache';
import { FAST_PATH_HITS, REDIS_ERRORS } from '../../src/payments/idempotency/fast-path-metrics';
import { FastPathRedis } from '../../src/payments/idempotency/fast-path-redis';
import { eventually } from '../support/eventually';
import { freeFixedPort } from '../support/payment-storm';
import { RedisServer } from '../support/redis-server';
import { uniqueId } from '../support/test-app';

/** One replica's view: its own memory, its own Redis connection, its own counters. */
interface Replica {
  redis: FastPathRedis;
  sut: CommittedPayments;
  hits(source: 'memory' | 'redis'): Promise<number>;
  errors(operation?: string): Promise<number>;
}

function replica(url: string, overrides: Partial<RedisConfig> = {}): Replica {
  const registers = [new Registry()];
  const hits = new Counter({ name: FAST_PATH_HITS, help: 'hits', labelNames: ['source'], registers });
  const errors = new Counter({ name: REDIS_ERRORS, help: 'errors', labelNames: ['operation'], registers });
  const redis = new FastPathRedis({ ...loadRedisConfig({}), url, ...overrides }, errors);
  const sum = async (counter: Counter<string>, label: string, value?: string) =>
    (await counter.get()).values
      .filter((v) => value === undefined || v.labels[label] === value)
      .reduce((total, v) => total + v.value, 0);
  return {
    redis,
    sut: new CommittedPayments(new CommittedPaymentsCache(), redis, hits),
    hits: (source) => sum(hits, 'source', source),
    errors: (operation) => sum(errors, 'operation', operation),
  };
}

function payment(): PaymentNotification {
  return {
    channel: 'WECHATPAY',
    merchantId: '1900009191',
    eventType: 'TRANSACTION.SUCCESS',
    paid: true,
    outTradeNo: uniqueId('O'),
    transactionId: uniqueId('T'),
    amount: 100,
    currency: 'CNY',
    paidAt: new Date(),
    rawBody: Buffer.from('{}'),
    headers: {},
  };
}

const paidKey = (p: PaymentNotification) => `pcs:paid:${p.channel}:${p.transactionId}`;
const inFlightKey = (p: PaymentNotification) => `pcs:inflight:${p.channel}:${p.transactionId}`;

/** CommittedPayments of two replicas sharing a real redis-server of the suite's own (no database, no HTTP). */
describe(CommittedPayments.name, () => {
  let server: RedisServer;
  const replicas: Replica[] = [];
  const warnings: string[] = [];
  let a: Replica;
  let b: Replica;

  async function connected(url: string, overrides: Partial<RedisConfig> = {}): Promise<Replica> {
    const r = replica(url, overrides);
    replicas.push(r);
    await eventually('the replica connected to Redis', () => r.redis.connected, 60_000);
    return r;
  }

  beforeAll(async () => {
    Logger.overrideLogger({ log: () => undefined, error: () => undefined, warn: (m) => warnings.push(String(m)) });
    server = await RedisServer.start();
    a = await connected(server.url);
    b = await connected(server.url);
  });
  afterAll(async () => {
    for (const r of replicas) r.redis.onApplicationShutdown();
    await server?.stop();
    Logger.overrideLogger(['error', 'warn']);
  });

  it('should tell one replica of a payment another marked committed, then answer from its own memory', async () => {
    const p = payment();
    expect(await b.sut.isCommitted(p)).toBe(false);

    await a.sut.markCommitted(p);

    const [redisBefore, memoryBefore] = [await b.hits('redis'), await b.hits('memory')];
    expect(await b.sut.isCommitted(p)).toBe(true);
    expect(await b.sut.isCommitted(p)).toBe(true);
    expect([(await b.hits('redis')) - redisBefore, (await b.hits('memory')) - memoryBefore]).toEqual([1, 1]);
    const ttl = Number(await server.command('TTL', paidKey(p)));
    expect(ttl).toBeGreaterThan(48 * 3600 - 60);
    expect(ttl).toBeLessThanOrEqual(48 * 3600);
  });

  /** The MGETs the server has answered: a waiter's reads of a payment's keys. */
  const mgets = async () =>
    Number(/cmdstat_mget:calls=(\d+)/.exec(String(await server.command('INFO', 'commandstats')))?.[1] ?? 0);

  it('should make a repeat on another replica wait for the first delivery, and learn its commit', async () => {
    const p = payment();
    const first = await a.sut.claimFirst(p);
    expect(first.heldElsewhere).toBe(false);
    const repeat = await b.sut.claimFirst(p);
    expect(repeat.heldElsewhere).toBe(true);

    const polledBefore = await mgets();
    let settled = false;
    const waited = b.sut.waitForFirst(p).finally(() => (settled = true));
    // The waiter has read the payment's keys twice and found the first delivery still in flight.
    await eventually('two reads of the keys by the waiter', async () => (await mgets()) >= polledBefore + 2);
    expect(settled).toBe(false);
    await a.sut.markCommitted(p);
    await first.release();

    expect(await waited).toBe(true);
    expect(await server.command('EXISTS', inFlightKey(p))).toBe(0);
    expect(await b.sut.isCommitted(p)).toBe(true);
  });

  it('should send the repeat to the database when the first delivery ends without a commit', async () => {
    const p = payment();
    const first = await a.sut.claimFirst(p);
    expect((await b.sut.claimFirst(p)).heldElsewhere).toBe(true);
    const waited = b.sut.waitForFirst(p);

    await first.release();

    expect(await waited).toBe(false);
    expect(await b.sut.isCommitted(p)).toBe(false);
  });

  it("should end the wait when the first delivery's replica died and its marker expired", async () => {
    const shortLived = await connected(server.url, { inFlightMs: 300 });
    const p = payment();
    await shortLived.sut.claimFirst(p); // never released: its replica "died"
    const other = await connected(server.url, { inFlightMs: 300 });
    expect((await other.sut.claimFirst(p)).heldElsewhere).toBe(true);

    expect(await other.sut.waitForFirst(p)).toBe(false);
    expect(await server.command('EXISTS', inFlightKey(p))).toBe(0);
  });

  it('should never delete a marker it no longer holds', async () => {
    const slow = await connected(server.url, { inFlightMs: 200 });
    const p = payment();
    const expired = await slow.sut.claimFirst(p);
    await eventually('the marker expired', async () => (await server.command('EXISTS', inFlightKey(p))) === 0);
    const current = await b.sut.claimFirst(p);
    expect(current.heldElsewhere).toBe(false);

    await expired.release();

    expect(await server.command('EXISTS', inFlightKey(p))).toBe(1);
    await current.release();
    expect(await server.command('EXISTS', inFlightKey(p))).toBe(0);
  });

  it('should know nothing after FLUSHALL, so that everything goes to the database', async () => {
    const p = payment();
    await a.sut.markCommitted(p);
    await a.sut.claimFirst(p);

    await server.command('FLUSHALL');

    const fresh = await connected(server.url);
    expect(await fresh.sut.isCommitted(p)).toBe(false);
    expect((await fresh.sut.claimFirst(p)).heldElsewhere).toBe(false);
  });

  it('should fail over to the database within one command timeout while Redis is stalled, then recover', async () => {
    const stalled = await connected(server.url, { commandTimeoutMs: 100 });
    const p = payment();
    server.pause();
    try {
      expect(await stalled.sut.isCommitted(p)).toBe(false);
      expect(await stalled.errors('lookup')).toBe(1);
      // Just failed: the next calls leave Redis alone instead of waiting out a timeout each.
      expect((await stalled.sut.claimFirst(p)).heldElsewhere).toBe(false);
      await stalled.sut.markCommitted(p);
      expect(await stalled.errors()).toBe(1);
      // The memory still answers.
      expect(await stalled.sut.isCommitted(p)).toBe(true);
    } finally {
      server.resume();
    }

    const q = payment();
    await eventually(
      'the stalled replica writes to Redis again',
      async () => {
        await stalled.sut.markCommitted(q);
        return (await server.command('EXISTS', paidKey(q))) === 1;
      },
      60_000,
    );
    expect(await b.sut.isCommitted(q)).toBe(true);
  });

  it('should answer at once, count and log rate-limited, when Redis is unreachable', async () => {
    warnings.length = 0;
    const nobody = replica(`redis://127.0.0.1:${await freeFixedPort()}`);
    replicas.push(nobody);
    const p = payment();

    await eventually('several connection failures', async () => (await nobody.errors('connection')) >= 3, 60_000);
    expect(await nobody.sut.isCommitted(p)).toBe(false);
    expect((await nobody.sut.claimFirst(p)).heldElsewhere).toBe(false);
    expect(await nobody.sut.waitForFirst(p)).toBe(false);
    await nobody.sut.markCommitted(p);
    await (await nobody.sut.claimFirst(p)).release();

    expect(await nobody.sut.isCommitted(p)).toBe(true);
    expect(await nobody.hits('memory')).toBe(1);
    expect(await nobody.errors()).toBe(await nobody.errors('connection'));
    expect(warnings.filter((w) => /Redis connection failed/.test(w))).toHaveLength(1);
  });
});
