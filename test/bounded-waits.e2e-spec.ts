import { connect, Socket } from 'node:net';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { ExchangeTap, TEST_RABBITMQ_URL, testExchange } from './support/amqp-tap';
import { eventually, sleep } from './support/eventually';
import { HealthReport } from './support/health-report';
import { TcpProxy } from './support/tcp-proxy';
import {
  count,
  createTestPlatforms,
  HttpAnswer,
  RunningApp,
  startApp,
  TestClient,
  testDatabasePool,
  TestPlatforms,
  uniqueId,
} from './support/test-app';

const QUERY_TIMEOUT_MS = 1000;
const ACQUIRE_TIMEOUT_MS = 500;
const POOL_SIZE = 4;
const QUEUE_LIMIT = 6;
const DELIVERIES = 24;

/** The URL with its host and port replaced by the proxy's. */
function via(proxy: TcpProxy, url: string): string {
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  return proxied.toString();
}

function proxyTo(url: string, defaultPort: number): TcpProxy {
  const target = new URL(url);
  return new TcpProxy(target.hostname, Number(target.port || defaultPort));
}

async function readiness(baseUrl: string): Promise<{ status: number; body: HealthReport }> {
  const response = await fetch(`${baseUrl}/health/ready`, { signal: AbortSignal.timeout(30000) });
  return { status: response.status, body: (await response.json()) as HealthReport };
}

interface Payment {
  orderNo: string;
  transactionId: string;
}

function deliver(client: TestClient, p: Payment, i: number): Promise<HttpAnswer> {
  return i % 2 === 0
    ? client.postWechatpay(
        client.wechatpayPayment({ outTradeNo: p.orderNo, transactionId: p.transactionId, total: 1234 }),
      )
    : client.postAlipay(
        client.alipayPayment({ outTradeNo: p.orderNo, tradeNo: p.transactionId, totalAmount: '12.34' }),
      );
}

function isAck(a: HttpAnswer): boolean {
  return a.status === 204 || (a.status === 200 && a.body === 'success');
}

/**
 * Delivers as a platform does outside the stall under test: again after a 503, a few times. On a
 * loaded machine the tiny pool's 1 s query timeout can turn one delivery away.
 */
async function deliverUntilAcked(client: TestClient, p: Payment, i: number): Promise<HttpAnswer> {
  let answer = await deliver(client, p, i);
  for (let attempt = 1; attempt < 5 && answer.status === 503; attempt++) {
    await sleep(200);
    answer = await deliver(client, p, i);
  }
  return answer;
}

/** Registers an order as the order service would outside the stall under test: again after a 503, a few times. */
async function registerUntilCreated(client: TestClient, orderNo: string): Promise<number> {
  let status = (await client.registerOrder({ orderNo, amount: 1234 })).status;
  for (let attempt = 1; attempt < 5 && status === 503; attempt++) {
    await sleep(200);
    status = (await client.registerOrder({ orderNo, amount: 1234 })).status;
  }
  return status;
}

describe('bounded waits', () => {
  let platforms: TestPlatforms;
  let pool: Pool;
  const databaseUrl = process.env.DATABASE_URL!;

  beforeAll(async () => {
    platforms = await createTestPlatforms();
    pool = testDatabasePool();
  });
  afterAll(async () => {
    process.env.DATABASE_URL = databaseUrl;
    await pool?.end();
  });

  describe('when the database stalls (a network partition, through a TCP proxy)', () => {
    let proxy: TcpProxy;
    let running: RunningApp | undefined;

    beforeAll(async () => {
      proxy = proxyTo(databaseUrl, 3306);
      await proxy.start();
      running = await startApp({
        ...platforms.env,
        DATABASE_URL: via(proxy, databaseUrl),
        DATABASE_POOL_SIZE: String(POOL_SIZE),
        DATABASE_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
        DATABASE_POOL_ACQUIRE_TIMEOUT_MS: String(ACQUIRE_TIMEOUT_MS),
        DATABASE_POOL_QUEUE_LIMIT: String(QUEUE_LIMIT),
        DATABASE_CONNECT_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
        HEALTH_CHECK_TIMEOUT_MS: '500',
      });
    });
    afterAll(async () => {
      proxy?.resume();
      await running?.close();
      await proxy?.stop();
      process.env.DATABASE_URL = databaseUrl;
    });

    it('should answer every delivery and readiness with 503 while it lasts, write nothing, and pay each once after', async () => {
      const client = new TestClient(running!.url, platforms);
      const payments = Array.from({ length: DELIVERIES }, () => ({
        orderNo: uniqueId('P'),
        transactionId: uniqueId('42'),
      }));
      for (const p of payments) expect(await registerUntilCreated(client, p.orderNo)).toBe(201);
      const orderNos = payments.map((p) => p.orderNo);

      proxy.stall();
      const stalledAt = Date.now();
      const [ready, ...answers] = await Promise.all([
        readiness(running!.managementUrl),
        ...payments.map(async (p, i) => {
          const answer = await deliver(client, p, i);
          return { ...answer, afterMs: Date.now() - stalledAt };
        }),
      ]);
      const longestMs = Math.max(...answers.map((a) => a.afterMs));
      proxy.resume(); // only now: every answer above came while the database was unreachable

      expect(ready.status).toBe(503);
      expect(ready.body.details.database.status).toBe('down');
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 503));
      expect(answers.filter((_, i) => i % 2 === 0).map((a) => (JSON.parse(a.body) as { code: string }).code)).toEqual(
        answers.filter((_, i) => i % 2 === 0).map(() => 'FAIL'),
      );
      // A bound, not a speed: a query timeout plus the acquire timeout, far below "until the partition heals".
      expect(longestMs).toBeLessThan(QUERY_TIMEOUT_MS + ACQUIRE_TIMEOUT_MS + 3000);
      expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE order_no IN (?)', [orderNos])).toBe(0);
      expect(await count(pool, 'SELECT COUNT(*) FROM callback_delivery WHERE order_no IN (?)', [orderNos])).toBe(0);

      await eventually(
        'readiness to recover',
        async () => (await readiness(running!.managementUrl)).status === 200,
        15000,
      );
      // The platforms retry later, spread out: one at a time here, as the pool is tiny on purpose.
      const retried: HttpAnswer[] = [];
      for (const [i, p] of payments.entries()) retried.push(await deliverUntilAcked(client, p, i));
      expect(retried.filter((a) => !isAck(a)).map((a) => [a.status, a.body])).toEqual([]);
      expect(
        await count(pool, `SELECT COUNT(*) FROM payment_order WHERE status = 'PAID' AND order_no IN (?)`, [orderNos]),
      ).toBe(DELIVERIES);
      expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE order_no IN (?)', [orderNos])).toBe(
        DELIVERIES,
      );
      expect(await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no IN (?)', [orderNos])).toBe(DELIVERIES);
      expect(await count(pool, 'SELECT COUNT(*) FROM callback_delivery WHERE order_no IN (?)', [orderNos])).toBe(
        DELIVERIES,
      );
    });
  });

  /** Repeats of committed payments need no transaction; only their delivery-log write meets the stall. */
  describe('when the database stalls under repeats of committed payments', () => {
    const STALL_MS = 8000;
    const PROBE_EVERY_MS = 100;
    let proxy: TcpProxy;
    let running: RunningApp | undefined;

    beforeAll(async () => {
      proxy = proxyTo(databaseUrl, 3306);
      await proxy.start();
      running = await startApp({
        ...platforms.env,
        DATABASE_URL: via(proxy, databaseUrl),
        DATABASE_POOL_SIZE: String(POOL_SIZE),
        DATABASE_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
        DATABASE_POOL_ACQUIRE_TIMEOUT_MS: String(ACQUIRE_TIMEOUT_MS),
        DATABASE_POOL_QUEUE_LIMIT: String(QUEUE_LIMIT),
        DATABASE_CONNECT_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
      });
    });
    afterAll(async () => {
      proxy?.resume();
      await running?.close();
      await proxy?.stop();
      process.env.DATABASE_URL = databaseUrl;
    });

    it('should answer every repeat within the query and acquire timeouts, not hold it as long as the stall lasts', async () => {
      const client = new TestClient(running!.url, platforms);
      const payments = Array.from({ length: 4 }, () => ({ orderNo: uniqueId('P'), transactionId: uniqueId('42') }));
      for (const [i, p] of payments.entries()) {
        expect(await registerUntilCreated(client, p.orderNo)).toBe(201);
        const answer = await deliverUntilAcked(client, p, i);
        expect({ status: answer.status, body: answer.body, acked: isAck(answer) }).toMatchObject({ acked: true });
      }
      const orderNos = payments.map((p) => p.orderNo);

      proxy.stall();
      const stalledAt = Date.now();
      const probes: Array<Promise<HttpAnswer & { tookMs: number }>> = [];
      for (let i = 0; Date.now() - stalledAt < STALL_MS; i++) {
        const sentAt = Date.now();
        probes.push(
          deliver(client, payments[i % payments.length], i).then((a) => ({ ...a, tookMs: Date.now() - sentAt })),
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
    let running: RunningApp | undefined;

    beforeAll(async () => {
      exchange = testExchange();
      tap = await ExchangeTap.bind(exchange);
      proxy = proxyTo(TEST_RABBITMQ_URL, 5672);
      await proxy.start();
      running = await startApp({
        ...platforms.env,
        RABBITMQ_URL: via(proxy, TEST_RABBITMQ_URL),
        RABBITMQ_EXCHANGE: exchange,
        RABBITMQ_PUBLISH_TIMEOUT_MS: '200',
        // A single counted attempt would dead-letter an event.
        OUTBOX_MAX_ATTEMPTS: '1',
        OUTBOX_POLL_INTERVAL_MS: '50',
      });
    });
    afterAll(async () => {
      proxy?.resume();
      await running?.close();
      await proxy?.stop();
      await tap?.close();
    });

    it('should count no attempt and dead-letter nothing, stay ready, and publish every event once it resumes', async () => {
      await eventually(
        'broker up',
        async () => (await readiness(running!.managementUrl)).body.details?.rabbitmq?.status === 'up',
        15000,
      );
      const client = new TestClient(running!.url, platforms);
      const payments = Array.from({ length: 5 }, () => ({ orderNo: uniqueId('R'), transactionId: uniqueId('42') }));
      const orderNos = payments.map((p) => p.orderNo);
      for (const p of payments) expect(await registerUntilCreated(client, p.orderNo)).toBe(201);

      proxy.stall();
      const answers = await Promise.all(payments.map((p, i) => deliver(client, p, i)));
      expect(answers.filter((a) => !isAck(a))).toEqual([]);
      // Many publish timeouts long, yet short of the heartbeat noticing: the relay keeps trying a "connected" broker.
      await sleep(2500);
      const during = await readiness(running!.managementUrl);
      expect([during.status, during.body.details.rabbitmq.status]).toEqual([200, 'up']);
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
      await eventually(
        'every event published',
        async () =>
          (await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no IN (?) AND published_at IS NOT NULL', [
            orderNos,
          ])) === 5,
        30000,
      );
      await tap.waitFor(
        () =>
          new Set(tap.messages.filter((m) => orderNos.includes(String(m.body.orderNo))).map((m) => m.messageId))
            .size === 5,
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

  describe('HTTP limits', () => {
    let running: RunningApp | undefined;

    beforeAll(async () => {
      running = await startApp({
        ...platforms.env,
        HTTP_REQUEST_TIMEOUT_MS: '1000',
        HTTP_HEADERS_TIMEOUT_MS: '1000',
      });
    });
    afterAll(async () => {
      await running?.close();
    });

    function port(app: RunningApp): number {
      return Number(new URL(app.url).port);
    }

    it('should cut a body sent at a trickle with 408, and record nothing', async () => {
      const before = await count(pool, 'SELECT COUNT(*) FROM callback_delivery');
      const socket = await open(port(running!));
      const bodyLength = 200;
      socket.write(
        `POST /notify/alipay HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded; charset=utf-8\r\nContent-Length: ${bodyLength}\r\n\r\n`,
      );
      let sent = 0;
      const timer = setInterval(() => {
        if (!socket.destroyed) socket.write('a', () => undefined);
        sent++;
      }, 200);
      try {
        await eventually('the server to close the connection', () => socket.closed, 15000);
      } finally {
        clearInterval(timer);
      }

      expect(sent).toBeLessThan(bodyLength);
      expect(received(socket)).toMatch(/^HTTP\/1\.1 408 /);
      expect(await count(pool, 'SELECT COUNT(*) FROM callback_delivery')).toBe(before);
    });

    it('should close connections that never send a request', async () => {
      const idle = await Promise.all([1, 2, 3].map(() => open(port(running!))));

      await eventually('every idle connection to be closed', () => idle.every((s) => s.closed), 15000);
    });

    it('should refuse connections beyond HTTP_MAX_CONNECTIONS at once', async () => {
      const capped = await startApp({
        ...platforms.env,
        HTTP_MAX_CONNECTIONS: '3',
        HTTP_HEADERS_TIMEOUT_MS: '5000',
        HTTP_REQUEST_TIMEOUT_MS: '5000',
      });
      try {
        const allowed = await Promise.all([1, 2, 3].map(() => open(port(capped))));
        const extra = await open(port(capped));

        await eventually('the extra connection to be closed', () => extra.closed, 4000);
        expect(allowed.map((s) => s.closed)).toEqual([false, false, false]);
        for (const s of allowed) s.destroy();
      } finally {
        await capped.close();
      }
    });

    it('should echo X-Request-Id in every response, and make one up when none is sent', async () => {
      const given = uniqueId('req-');
      const answers = await Promise.all([
        fetch(`${running!.url}/health/live`, { headers: { 'x-request-id': given } }),
        fetch(`${running!.url}/no-such-path`, { headers: { 'x-request-id': given } }),
        fetch(`${running!.url}/notify/wechatpay`, {
          method: 'POST',
          headers: { 'x-request-id': given, 'content-type': 'application/json' },
          body: '{',
        }),
        fetch(`${running!.url}/payment-orders/x`, { headers: { 'x-request-id': given } }),
      ]);
      expect(answers.map((a) => [a.status, a.headers.get('x-request-id')])).toEqual([
        [200, given],
        [404, given],
        [400, given],
        [401, given],
      ]);

      const generated = (await fetch(`${running!.url}/health/live`)).headers.get('x-request-id');
      expect(generated).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      const refused = (
        await fetch(`${running!.url}/health/live`, { headers: { 'x-request-id': 'not a token!' } })
      ).headers.get('x-request-id');
      expect(refused).not.toBe('not a token!');
      expect(refused).toMatch(/^[0-9a-f-]{36}$/);
    });
  });
});

const receivedData = new WeakMap<Socket, string>();

/** A raw TCP connection to the app; `closed` turns true when either side ends it. */
async function open(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  receivedData.set(socket, '');
  socket.on('data', (chunk) => receivedData.set(socket, receivedData.get(socket) + String(chunk)));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return socket;
}

function received(socket: Socket): string {
  return receivedData.get(socket) ?? '';
}
