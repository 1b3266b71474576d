import { Pool, RowDataPacket } from 'mysql2/promise';
import { PlatformReply } from '../../src/channels/payment-channel';
import { OutboxRelay } from '../../src/events/outbox.relay';
import { ExchangeTap, TEST_RABBITMQ_URL, testExchange } from '../support/amqp-tap';
import { eventually, sleep } from '../support/eventually';
import { Medium, Replica, startMedium } from '../support/medium';
import { INTAKE_MODULES } from '../support/medium-intake';
import { TcpProxy } from '../support/tcp-proxy';
import { roundsFrom } from '../support/worker-rounds';
import { count, notificationsOnly, uniqueId } from '../support/test-app';

/**
 * The use cases' bounded waits when the database or the broker stalls (a network partition,
 * through a TCP proxy): deliveries handed to NotificationIntake.receive answer within the query and
 * acquire timeouts, readiness as the app composes it, nothing written meanwhile, everything applied
 * once after. The HTTP server's own limits are
 * in test/bounded-waits.e2e-spec.ts.
 */
const QUERY_TIMEOUT_MS = 1000;
const ACQUIRE_TIMEOUT_MS = 500;
/** How long the retries outside the stall under test go on: a safety net, as a platform retries for hours. */
const RETRY_FOR_MS = 20_000;
const DELIVERIES = 24;
const TINY_POOL = {
  DATABASE_POOL_SIZE: '4',
  DATABASE_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
  DATABASE_POOL_ACQUIRE_TIMEOUT_MS: String(ACQUIRE_TIMEOUT_MS),
  DATABASE_POOL_QUEUE_LIMIT: '6',
  DATABASE_CONNECT_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
};

/** The URL with its host and port replaced by the proxy's. */
function via(proxy: TcpProxy, url: string): string {
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  return proxied.toString();
}

async function proxyTo(url: string, defaultPort: number): Promise<TcpProxy> {
  const target = new URL(url);
  const proxy = new TcpProxy(target.hostname, Number(target.port || defaultPort));
  await proxy.start();
  return proxy;
}

interface Payment {
  orderNo: string;
  transactionId: string;
}

function deliver(instance: Replica, p: Payment, i: number): Promise<PlatformReply> {
  const { signed } = instance;
  return i % 2 === 0
    ? instance.wechatpay(
        signed.wechatpayPayment({ outTradeNo: p.orderNo, transactionId: p.transactionId, total: 1234 }),
      )
    : instance.alipay(signed.alipayPayment({ outTradeNo: p.orderNo, tradeNo: p.transactionId, totalAmount: '12.34' }));
}

const isAck = (a: PlatformReply) => a.status === 204 || (a.status === 200 && a.body === 'success');

/**
 * Delivers as a platform does outside the stall under test: again after a 503, every 200 ms for up
 * to RETRY_FOR_MS. On a loaded machine the tiny pool's 1 s query timeout can turn deliveries away.
 */
async function deliverUntilAcked(instance: Replica, p: Payment, i: number): Promise<PlatformReply> {
  const deadline = Date.now() + RETRY_FOR_MS;
  let answer = await deliver(instance, p, i);
  while (answer.status === 503 && Date.now() <= deadline) {
    await sleep(200);
    answer = await deliver(instance, p, i);
  }
  return answer;
}

/** Registers an order as the order service would outside the stall under test: again after a timeout, for a while. */
async function registerUntilCreated(instance: Replica, orderNo: string): Promise<void> {
  const deadline = Date.now() + RETRY_FOR_MS;
  for (;;) {
    try {
      return void (await instance.make.order({ orderNo, amount: 1234 }));
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(200);
    }
  }
}

let medium: Medium;
let pool: Pool;
const databaseUrl = process.env.DATABASE_URL!;

beforeAll(async () => {
  medium = await startMedium({}, { imports: INTAKE_MODULES, fake: false, replicas: 0 });
  pool = medium.pool;
});
afterAll(async () => {
  await medium?.close();
});

describe('when the database stalls (a network partition, through a TCP proxy)', () => {
  let proxy: TcpProxy;
  let running: Replica;

  beforeAll(async () => {
    proxy = await proxyTo(databaseUrl, 3306);
    running = await medium.another((p) => ({
      ...notificationsOnly(p.env),
      DATABASE_URL: via(proxy, databaseUrl),
      ...TINY_POOL,
      HEALTH_CHECK_TIMEOUT_MS: '500',
    }));
  });
  afterAll(async () => {
    proxy?.resume();
    await running?.close();
    await proxy?.stop();
  });

  it('should answer every delivery and readiness with 503 while it lasts, write nothing, and pay each once after', async () => {
    const payments = Array.from({ length: DELIVERIES }, () => ({
      orderNo: uniqueId('P'),
      transactionId: uniqueId('42'),
    }));
    for (const p of payments) await registerUntilCreated(running, p.orderNo);
    const orderNos = payments.map((p) => p.orderNo);

    proxy.stall();
    const stalledAt = Date.now();
    const [ready, ...answers] = await Promise.all([
      running.readiness(),
      ...payments.map(async (p, i) => {
        const answer = await deliver(running, p, i);
        return { ...answer, afterMs: Date.now() - stalledAt };
      }),
    ]);
    const longestMs = Math.max(...answers.map((a) => a.afterMs));
    // Read past the proxy while it still holds everything: nothing was written while the partition lasted.
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE order_no IN (?)', [orderNos])).toBe(0);
    expect(await count(pool, 'SELECT COUNT(*) FROM callback_delivery WHERE order_no IN (?)', [orderNos])).toBe(0);
    proxy.resume(); // only now: every answer above came while the database was unreachable

    expect(ready.ready).toBe(false);
    expect(ready.details.database.status).toBe('down');
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 503));
    expect(answers.filter((_, i) => i % 2 === 0).map((a) => (a.body as { code: string }).code)).toEqual(
      answers.filter((_, i) => i % 2 === 0).map(() => 'FAIL'),
    );
    // A bound, not a speed: a query timeout plus the acquire timeout, far below "until the partition heals".
    expect(longestMs).toBeLessThan(QUERY_TIMEOUT_MS + ACQUIRE_TIMEOUT_MS + 3000);

    await eventually('readiness to recover', async () => (await running.readiness()).ready, 15000);
    // The platforms retry later, spread out: one at a time here, as the pool is tiny on purpose.
    const retried: PlatformReply[] = [];
    for (const [i, p] of payments.entries()) retried.push(await deliverUntilAcked(running, p, i));
    expect(retried.filter((a) => !isAck(a)).map((a) => [a.status, a.body])).toEqual([]);
    const paid = `SELECT COUNT(*) FROM payment_order WHERE status = 'PAID' AND order_no IN (?)`;
    expect(await count(pool, paid, [orderNos])).toBe(DELIVERIES);
    for (const table of ['payment_callback', 'outbox_event']) {
      expect(await count(pool, `SELECT COUNT(*) FROM ${table} WHERE order_no IN (?)`, [orderNos])).toBe(DELIVERIES);
    }
    // Each payment was paid by exactly one delivery. A payment's procedure call that the partition
    // held reaches the server when it heals and commits there, although the service had answered
    // 503 (as a COMMIT whose answer is lost does): the platform's retry of that payment is then a
    // recorded DUPLICATE, and no other outcome is.
    const deliveries = `SELECT COUNT(*) FROM callback_delivery WHERE order_no IN (?) AND outcome = ?`;
    expect(await count(pool, deliveries, [orderNos, 'PAID'])).toBe(DELIVERIES);
    expect(
      await count(pool, `SELECT COUNT(*) FROM callback_delivery WHERE order_no IN (?) AND outcome <> 'PAID'`, [
        orderNos,
      ]),
    ).toBe(await count(pool, deliveries, [orderNos, 'DUPLICATE']));
  });
});

/** Repeats of committed payments need no transaction; only their delivery-log write meets the stall. */
describe('when the database stalls under repeats of committed payments', () => {
  const STALL_MS = 8000;
  const PROBE_EVERY_MS = 100;
  let proxy: TcpProxy;
  let running: Replica;

  beforeAll(async () => {
    proxy = await proxyTo(databaseUrl, 3306);
    running = await medium.another((p) => ({
      ...notificationsOnly(p.env),
      DATABASE_URL: via(proxy, databaseUrl),
      ...TINY_POOL,
    }));
  });
  afterAll(async () => {
    proxy?.resume();
    await running?.close();
    await proxy?.stop();
  });

  it('should answer every repeat within the query and acquire timeouts, not hold it as long as the stall lasts', async () => {
    const payments = Array.from({ length: 4 }, () => ({ orderNo: uniqueId('P'), transactionId: uniqueId('42') }));
    for (const [i, p] of payments.entries()) {
      await registerUntilCreated(running, p.orderNo);
      const answer = await deliverUntilAcked(running, p, i);
      expect({ status: answer.status, body: answer.body, acked: isAck(answer) }).toMatchObject({ acked: true });
    }
    const orderNos = payments.map((p) => p.orderNo);

    proxy.stall();
    const stalledAt = Date.now();
    const probes: Array<Promise<PlatformReply & { tookMs: number }>> = [];
    for (let i = 0; Date.now() - stalledAt < STALL_MS; i++) {
      const sentAt = Date.now();
      probes.push(
        deliver(running, payments[i % payments.length], i).then((a) => ({ ...a, tookMs: Date.now() - sentAt })),
      );
      await sleep(PROBE_EVERY_MS);
    }
    proxy.resume();
    const answers = await Promise.all(probes);

    const longestMs = Math.max(...answers.map((a) => a.tookMs));
    // The answer's deadline is the query timeout plus the acquire timeout after arrival; the rest is a loaded machine's slack.
    expect(longestMs).toBeLessThan(QUERY_TIMEOUT_MS + ACQUIRE_TIMEOUT_MS + 1500);
    expect(answers.filter((a) => a.status !== 503 && !isAck(a)).map((a) => [a.status, a.body])).toEqual([]);
    expect(answers.filter((a) => a.status === 503).length).toBeGreaterThan(answers.length / 2);
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE order_no IN (?)', [orderNos])).toBe(4);
    expect(await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no IN (?)', [orderNos])).toBe(4);
  });
});

describe('when the broker stalls (connected, but nothing confirmed)', () => {
  let proxy: TcpProxy;
  let tap: ExchangeTap;
  let exchange: string;
  let running: Replica;

  beforeAll(async () => {
    exchange = testExchange();
    tap = await ExchangeTap.bind(exchange);
    proxy = await proxyTo(TEST_RABBITMQ_URL, 5672);
    running = await medium.another((p) => ({
      ...notificationsOnly(p.env),
      RABBITMQ_URL: via(proxy, TEST_RABBITMQ_URL),
      RABBITMQ_EXCHANGE: exchange,
      RABBITMQ_PUBLISH_TIMEOUT_MS: '200',
      // A single counted attempt would dead-letter an event.
      OUTBOX_MAX_ATTEMPTS: '1',
      OUTBOX_POLL_INTERVAL_MS: '50',
    }));
  });
  afterAll(async () => {
    proxy?.resume();
    await running?.close();
    await proxy?.stop();
    await tap?.close();
  });

  it('should count no attempt and dead-letter nothing, stay ready, and publish every event once it resumes', async () => {
    await eventually('broker up', async () => (await running.readiness()).details.rabbitmq?.status === 'up', 15000);
    const payments = Array.from({ length: 5 }, () => ({ orderNo: uniqueId('R'), transactionId: uniqueId('42') }));
    const orderNos = payments.map((p) => p.orderNo);
    for (const p of payments) await registerUntilCreated(running, p.orderNo);

    proxy.stall();
    const answers = await Promise.all(payments.map((p, i) => deliver(running, p, i)));
    expect(answers.filter((a) => !isAck(a))).toEqual([]);
    // Whole relay rounds begun with the events committed, each of whose publishes timed out against the
    // "connected" broker: a relay that counted them has made attempts (and dead-lettered) by then.
    await roundsFrom(running.get(OutboxRelay))('the events were committed');
    const during = await running.readiness();
    expect([during.ready, during.details.rabbitmq.status]).toEqual([true, 'up']);
    const [rows] = await pool.query<RowDataPacket[]>(
      `SELECT SUM(attempts) AS attempts, SUM(dead_lettered_at IS NOT NULL) AS dead, SUM(last_error IS NOT NULL) AS errors,
              SUM(published_at IS NOT NULL) AS published
       FROM outbox_event WHERE order_no IN (?)`,
      [orderNos],
    );
    expect(Object.fromEntries(Object.entries(rows[0]).map(([k, v]) => [k, Number(v)]))).toEqual({
      attempts: 0,
      dead: 0,
      errors: 0,
      published: 0,
    });

    proxy.resume();
    const published = 'SELECT COUNT(*) FROM outbox_event WHERE order_no IN (?) AND published_at IS NOT NULL';
    await eventually('every event published', async () => (await count(pool, published, [orderNos])) === 5, 30000);
    await tap.waitFor(
      () =>
        new Set(tap.messages.filter((m) => orderNos.includes(String(m.body.orderNo))).map((m) => m.messageId)).size ===
        5,
      30000,
      'five events at the tap',
    );
    expect(
      await count(
        pool,
        'SELECT COUNT(*) FROM outbox_event WHERE order_no IN (?) AND (attempts > 0 OR dead_lettered_at IS NOT NULL)',
        [orderNos],
      ),
    ).toBe(0);
  });
});
