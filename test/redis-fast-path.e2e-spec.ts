import { Pool } from 'mysql2/promise';
import { FAST_PATH_HITS, REDIS_ERRORS } from '../src/payments/idempotency/fast-path-metrics';
import { FastPathRedis } from '../src/payments/idempotency/fast-path-redis';
import { eventually, sleep } from './support/eventually';
import { metricValue, OrderEffects } from './support/order-effects';
import {
  deliver,
  freeFixedPort,
  inParallel,
  isAck,
  paymentEffects,
  registerAll,
  StormPayment,
  stormPayments,
} from './support/payment-storm';
import { RedisServer } from './support/redis-server';
import {
  createTestPlatforms,
  HttpAnswer,
  notificationsOnly,
  RunningApp,
  startApp,
  TestClient,
  TestPlatforms,
  testDatabasePool,
} from './support/test-app';

const STORM_PAYMENTS = 50;
const DELIVERIES_PER_PAYMENT = 6;
const PAYMENTS_IN_FLIGHT = 10;
const MAX_ATTEMPTS = 5;

/** Counters of the test process: both apps run in it and share prom-client's registry. */
async function counters(app: RunningApp) {
  const text = await (await fetch(`${app.managementUrl}/metrics`)).text();
  return {
    redisHits: metricValue(text, FAST_PATH_HITS, { source: 'redis' }),
    memoryHits: metricValue(text, FAST_PATH_HITS, { source: 'memory' }),
    redisErrors: metricValue(text, REDIS_ERRORS, {}),
    connectionErrors: metricValue(text, REDIS_ERRORS, { operation: 'connection' }),
  };
}

/** Two replicas sharing one database and one Redis (a redis-server of the suite's own), as deployed with REDIS_URL. */
describe('the Redis fast path over two replicas', () => {
  let platforms: TestPlatforms;
  let redis: RedisServer;
  let instances: RunningApp[];
  let clients: TestClient[];
  let pool: Pool;
  let effects: OrderEffects;

  const redisConnected = (app: RunningApp) => app.app.get(FastPathRedis, { strict: false }).connected;

  beforeAll(async () => {
    platforms = await createTestPlatforms();
    redis = await RedisServer.start();
    // Late in an in-band run the test process's heap is large, and one garbage collection can hold
    // its event loop (both replicas and the load) for more than 500 ms: every command in flight
    // would then time out, only costing hits, but failing the count of errors. Only a real stall
    // (SIGSTOP) lasts 3 s.
    const env = { ...notificationsOnly(platforms.env), REDIS_URL: redis.url, REDIS_COMMAND_TIMEOUT_MS: '3000' };
    instances = [await startApp(env), await startApp(env)];
    clients = instances.map((i) => new TestClient(i.url, platforms));
    pool = testDatabasePool();
    effects = new OrderEffects(pool);
    await eventually('both replicas connected to Redis', () => instances.every(redisConnected), 10_000);
  });
  afterAll(async () => {
    await Promise.all(instances?.map((i) => i.close()) ?? []);
    await pool?.end();
    await redis?.stop();
  });

  /** One payment committed through A, then delivered again on B: is that repeat a Redis hit? */
  async function repeatOnOtherReplicaIsRedisHit(): Promise<boolean> {
    const [p] = stormPayments(1, 'RP');
    await registerAll(clients[0], [p]);
    expect(isAck(p, await deliver(clients[0], p))).toBe(true);
    const before = await counters(instances[0]);
    expect(isAck(p, await deliver(clients[1], p))).toBe(true);
    return (await counters(instances[0])).redisHits - before.redisHits === 1;
  }

  it('should answer a repeat on B of a payment committed through A without a transaction', async () => {
    const [p] = stormPayments(1, 'RB');
    await registerAll(clients[0], [p]);
    expect(isAck(p, await deliver(clients[0], p))).toBe(true);
    const before = await counters(instances[0]);

    for (let i = 0; i < 3; i++) expect(isAck(p, await deliver(clients[1], p))).toBe(true);

    const after = await counters(instances[0]);
    // B's first repeat learned the commit from Redis, the next two from its memory: none reached the database.
    expect([after.redisHits - before.redisHits, after.memoryHits - before.memoryHits]).toEqual([1, 2]);
    expect(await effects.deliveryOutcomes(p.channel, p.transactionId)).toEqual([
      'PAID',
      'DUPLICATE',
      'DUPLICATE',
      'DUPLICATE',
    ]);
    expect(await paymentEffects(pool, [p])).toMatchObject({
      paidOrders: 1,
      ordersNotExactlyOnce: [],
      outboxEvents: 1,
      callbacks: 1,
      deliveries: 4,
      anomalies: 0,
    });
  });

  it('should let repeats on the other replica wait for a first delivery in flight instead of its row lock', async () => {
    const before = await counters(instances[0]);

    const { payments, answers } = await storm('RW', () => Promise.resolve());

    const after = await counters(instances[0]);
    expectEveryPaymentExactlyOnce(await paymentEffects(pool, payments), answers);
    // Each payment arrives on both replicas at once: the one that loses the marker learns the commit from Redis.
    expect(after.redisHits - before.redisHits).toBeGreaterThanOrEqual(STORM_PAYMENTS / 2);
    expect(after.redisErrors - before.redisErrors).toBe(0);
  });

  it('should pay every order exactly once when Redis is killed in the middle of a storm and restarted', async () => {
    const before = await counters(instances[0]);

    const { payments, answers } = await storm('RK', async (halfway) => {
      await redis.kill();
      await halfway();
      await redis.start();
    });

    expectEveryPaymentExactlyOnce(await paymentEffects(pool, payments), answers);
    expect((await counters(instances[0])).connectionErrors - before.connectionErrors).toBeGreaterThan(0);
    await eventually('the fast path works again after the restart', repeatOnOtherReplicaIsRedisHit, 30_000);
  });

  it('should pay every order exactly once when Redis is flushed in the middle of a storm', async () => {
    const { payments, answers } = await storm('RF', async (halfway) => {
      await redis.command('FLUSHALL');
      await halfway();
      await redis.command('FLUSHALL');
    });

    expectEveryPaymentExactlyOnce(await paymentEffects(pool, payments), answers);
    expect(await repeatOnOtherReplicaIsRedisHit()).toBe(true);
  });

  it('should pay every order exactly once when Redis stalls (SIGSTOP) in the middle of a storm, and resume', async () => {
    const before = await counters(instances[0]);

    const { payments, answers } = await storm('RS', async (halfway) => {
      redis.pause();
      try {
        await halfway();
      } finally {
        redis.resume();
      }
    });

    expectEveryPaymentExactlyOnce(await paymentEffects(pool, payments), answers);
    expect((await counters(instances[0])).redisErrors - before.redisErrors).toBeGreaterThan(0);
    await eventually('the fast path works again after the stall', repeatOnOtherReplicaIsRedisHit, 30_000);
  });

  it('should take every delivery when Redis is unreachable from the start', async () => {
    const nobody = `redis://127.0.0.1:${await freeFixedPort()}`;
    const alone = await startApp({ ...notificationsOnly(platforms.env), REDIS_URL: nobody });
    try {
      const client = new TestClient(alone.url, platforms);
      const payments = stormPayments(20, 'RU');
      await registerAll(client, payments);
      const before = await counters(alone);
      const unacked: HttpAnswer[] = [];

      await inParallel(payments, PAYMENTS_IN_FLIGHT, async (p) => {
        const answers = await Promise.all(Array.from({ length: 4 }, () => deliver(client, p)));
        unacked.push(...answers.filter((answer) => !isAck(p, answer)));
      });

      const after = await counters(alone);
      expect(unacked).toEqual([]);
      expect(await paymentEffects(pool, payments)).toMatchObject({
        paidOrders: 20,
        ordersNotExactlyOnce: [],
        outboxEvents: 20,
        callbacks: 20,
        deliveries: 80,
        paidDeliveries: 20,
        anomalies: 0,
      });
      expect(after.redisHits - before.redisHits).toBe(0);
      // Reconnection attempts back off to one every 2 s: a fast storm can end between two of them.
      await eventually(
        'a failed reconnection to be counted after the storm began',
        async () => (await counters(alone)).connectionErrors > before.connectionErrors,
        10_000,
      );
    } finally {
      await alone.close();
    }
  });

  /**
   * STORM_PAYMENTS payments, each delivered DELIVERIES_PER_PAYMENT times at once over both
   * replicas, retried like a platform until acked. `fault` runs once a third of the deliveries are
   * acked; its `halfway` resolves once a further third are.
   */
  async function storm(prefix: string, fault: (halfway: () => Promise<void>) => Promise<void>) {
    const payments = stormPayments(STORM_PAYMENTS, prefix);
    await registerAll(clients[0], payments);
    const total = STORM_PAYMENTS * DELIVERIES_PER_PAYMENT;
    const answers: Array<{ payment: StormPayment; answer: HttpAnswer }> = [];
    let acked = 0;
    let unacked = 0;

    const deliveries = inParallel(payments, PAYMENTS_IN_FLIGHT, async (payment) => {
      await Promise.all(
        Array.from({ length: DELIVERIES_PER_PAYMENT }, async (_, i) => {
          for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
            const answer = await deliver(clients[i % clients.length], payment);
            answers.push({ payment, answer });
            if (isAck(payment, answer)) return void acked++;
            await sleep(200);
          }
          unacked++;
        }),
      );
    });
    await eventually('a third of the storm acked', () => acked >= total / 3);
    const ackedAtFault = acked;
    await fault(() => eventually('another third acked', () => acked >= ackedAtFault + total / 3));
    await deliveries;

    expect(ackedAtFault).toBeLessThan(total);
    expect(unacked).toBe(0);
    return { payments, answers };
  }

  function expectEveryPaymentExactlyOnce(
    found: Awaited<ReturnType<typeof paymentEffects>>,
    answers: Array<{ payment: StormPayment; answer: HttpAnswer }>,
  ): void {
    // Nothing but acks and the retryable 503: a Redis problem is never a 500.
    expect(answers.filter(({ payment, answer }) => !isAck(payment, answer) && answer.status !== 503)).toEqual([]);
    const acked = answers.filter(({ payment, answer }) => isAck(payment, answer)).length;
    expect(acked).toBe(STORM_PAYMENTS * DELIVERIES_PER_PAYMENT);
    expect(found).toEqual({
      paidOrders: STORM_PAYMENTS,
      ordersNotExactlyOnce: [],
      paidTransitions: STORM_PAYMENTS,
      outboxEvents: STORM_PAYMENTS,
      callbacks: STORM_PAYMENTS,
      deliveries: acked,
      paidDeliveries: STORM_PAYMENTS,
      anomalies: 0,
    });
  }
});
