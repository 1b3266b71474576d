import { Pool } from 'mysql2/promise';
import { PlatformReply } from '../../src/channels/payment-channel';
import { FAST_PATH_HITS, REDIS_ERRORS } from '../../src/payments/idempotency/fast-path-metrics';
import { FastPathRedis } from '../../src/payments/idempotency/fast-path-redis';
import { eventually, sleep } from '../support/eventually';
import { Medium, Replica, startMedium } from '../support/medium';
import { INTAKE_MODULES, isAck, metric } from '../support/medium-intake';
import { OrderEffects } from '../support/order-effects';
import { freeFixedPort, inParallel, paymentEffects, StormPayment, stormPayments } from '../support/payment-storm';
import { RedisServer } from '../support/redis-server';
import { notificationsOnly } from '../support/test-app';

/**
 * The Redis fast path over two instances sharing one database and one Redis (a redis-server of the
 * suite's own), as deployed with REDIS_URL: deliveries handed to NotificationIntake.receive, the
 * effects counted in the database, the hits in the process's metrics (both instances share
 * prom-client's registry).
 */
const STORM_PAYMENTS = 50;
const DELIVERIES_PER_PAYMENT = 6;
const PAYMENTS_IN_FLIGHT = 10;
/** How long a delivery is retried (every 200 ms) after a 503, as a platform retries: a safety net, not a speed. */
const RETRY_FOR_MS = 30_000;

async function counters() {
  return {
    redisHits: await metric(FAST_PATH_HITS, { source: 'redis' }),
    memoryHits: await metric(FAST_PATH_HITS, { source: 'memory' }),
    redisErrors: await metric(REDIS_ERRORS),
    connectionErrors: await metric(REDIS_ERRORS, { operation: 'connection' }),
  };
}

let medium: Medium;
let redis: RedisServer;
let instances: Replica[];
let pool: Pool;
let effects: OrderEffects;

const redisConnected = (i: Replica) => i.get(FastPathRedis).connected;

beforeAll(async () => {
  redis = await RedisServer.start();
  // One garbage collection of a large test process can hold its event loop for more than 500 ms:
  // every command in flight would then time out, only costing hits, but failing the count of
  // errors. Only a real stall (SIGSTOP) lasts 3 s.
  const env = { REDIS_URL: redis.url, REDIS_COMMAND_TIMEOUT_MS: '3000' };
  medium = await startMedium((p) => ({ ...notificationsOnly(p.env), ...env }), {
    imports: INTAKE_MODULES,
    fake: false,
    replicas: 2,
  });
  ({ replicas: instances, pool } = medium);
  effects = new OrderEffects(pool);
  await eventually('both instances connected to Redis', () => instances.every(redisConnected), 60_000);
});
afterAll(async () => {
  await medium?.close();
  await redis?.stop();
});

/** One payment committed through A, then delivered again on B: is that repeat a Redis hit? */
async function repeatOnOtherInstanceIsRedisHit(): Promise<boolean> {
  const [p] = stormPayments(1, 'RP');
  await instances[0].registerAll([p]);
  expect(isAck(p, await instances[0].deliver(p))).toBe(true);
  const before = await counters();
  expect(isAck(p, await instances[1].deliver(p))).toBe(true);
  return (await counters()).redisHits - before.redisHits === 1;
}

it('should answer a repeat on B of a payment committed through A without a transaction', async () => {
  const [p] = stormPayments(1, 'RB');
  await instances[0].registerAll([p]);
  expect(isAck(p, await instances[0].deliver(p))).toBe(true);
  const before = await counters();

  for (let i = 0; i < 3; i++) expect(isAck(p, await instances[1].deliver(p))).toBe(true);

  const after = await counters();
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

it('should let repeats on the other instance wait for a first delivery in flight instead of its row lock', async () => {
  const before = await counters();

  const { payments, answers } = await storm('RW', () => Promise.resolve());

  const after = await counters();
  expectEveryPaymentExactlyOnce(await paymentEffects(pool, payments), answers);
  // Each payment arrives on both instances at once: the one that loses the marker learns the commit from Redis.
  expect(after.redisHits - before.redisHits).toBeGreaterThanOrEqual(STORM_PAYMENTS / 2);
  expect(after.redisErrors - before.redisErrors).toBe(0);
});

it('should pay every order exactly once when Redis is killed in the middle of a storm and restarted', async () => {
  const before = await counters();

  const { payments, answers } = await storm('RK', async (halfway) => {
    await redis.kill();
    await halfway();
    await redis.start();
  });

  expectEveryPaymentExactlyOnce(await paymentEffects(pool, payments), answers);
  expect((await counters()).connectionErrors - before.connectionErrors).toBeGreaterThan(0);
  await eventually('the fast path works again after the restart', repeatOnOtherInstanceIsRedisHit, 30_000);
});

it('should pay every order exactly once when Redis is flushed in the middle of a storm', async () => {
  const { payments, answers } = await storm('RF', async (halfway) => {
    await redis.command('FLUSHALL');
    await halfway();
    await redis.command('FLUSHALL');
  });

  expectEveryPaymentExactlyOnce(await paymentEffects(pool, payments), answers);
  expect(await repeatOnOtherInstanceIsRedisHit()).toBe(true);
});

it('should pay every order exactly once when Redis stalls (SIGSTOP) in the middle of a storm, and resume', async () => {
  const before = await counters();

  const { payments, answers } = await storm('RS', async (halfway) => {
    redis.pause();
    try {
      await halfway();
    } finally {
      redis.resume();
    }
  });

  expectEveryPaymentExactlyOnce(await paymentEffects(pool, payments), answers);
  expect((await counters()).redisErrors - before.redisErrors).toBeGreaterThan(0);
  await eventually('the fast path works again after the stall', repeatOnOtherInstanceIsRedisHit, 30_000);
});

it('should take every delivery when Redis is unreachable from the start', async () => {
  const nobody = `redis://127.0.0.1:${await freeFixedPort()}`;
  const alone = await medium.another((p) => ({ ...notificationsOnly(p.env), REDIS_URL: nobody }));
  try {
    const payments = stormPayments(20, 'RU');
    await alone.registerAll(payments);
    const before = await counters();
    const unacked: PlatformReply[] = [];

    await inParallel(payments, PAYMENTS_IN_FLIGHT, async (p) => {
      const answers = await Promise.all(Array.from({ length: 4 }, () => alone.deliver(p)));
      unacked.push(...answers.filter((answer) => !isAck(p, answer)));
    });

    const after = await counters();
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
      async () => (await counters()).connectionErrors > before.connectionErrors,
      60_000,
    );
  } finally {
    await alone.close();
  }
});

/**
 * STORM_PAYMENTS payments, each delivered DELIVERIES_PER_PAYMENT times at once over both
 * instances, retried like a platform until acked. `fault` runs once a third of the deliveries are
 * acked; its `halfway` resolves once a further third are.
 */
async function storm(prefix: string, fault: (halfway: () => Promise<void>) => Promise<void>) {
  const payments = stormPayments(STORM_PAYMENTS, prefix);
  await instances[0].registerAll(payments);
  const total = STORM_PAYMENTS * DELIVERIES_PER_PAYMENT;
  const answers: Array<{ payment: StormPayment; answer: PlatformReply }> = [];
  let acked = 0;
  let unacked = 0;

  const deliveries = inParallel(payments, PAYMENTS_IN_FLIGHT, async (payment) => {
    await Promise.all(
      Array.from({ length: DELIVERIES_PER_PAYMENT }, async (_, i) => {
        for (const deadline = Date.now() + RETRY_FOR_MS; Date.now() <= deadline;) {
          const answer = await instances[i % instances.length].deliver(payment);
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
  answers: Array<{ payment: StormPayment; answer: PlatformReply }>,
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
