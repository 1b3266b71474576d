import { randomUUID } from 'node:crypto';
import { createConnection, createServer, Server, Socket } from 'node:net';
import { Pool, RowDataPacket } from 'mysql2/promise';
import {
  deleteExchange,
  EXAMPLE_CONSUMERS,
  exchangeExists,
  ExchangeTap,
  handlerQueuesConsumed,
  TappedMessage,
  TEST_RABBITMQ_URL,
  testExchange,
} from './support/amqp-tap';
import { TcpProxy } from './support/tcp-proxy';
import {
  count,
  createTestPlatforms,
  HttpAnswer,
  RunningApp,
  startApp,
  TestClient,
  TestPlatforms,
  testDatabasePool,
  uniqueId,
} from './support/test-app';
import { deliver, registerAll as registerAllBy, StormPayment, stormPayments } from './support/payment-storm';
import { eventually, sleep } from './support/eventually';
import { HealthReport } from './support/health-report';

const EFFECT_TABLES = ['points_grant', 'coupon_issue', 'shipment_request'];
const EVENT_KEYS = ['amount', 'channel', 'currency', 'eventId', 'occurredAt', 'orderNo', 'transactionId', 'type'];
const PAYMENTS_IN_FLIGHT = 25;
/** Long enough for a relay or consumer that would duplicate something to have done it. */
const SETTLE_MS = 1000;
/**
 * Longer than the publisher's confirm timeout (5 s): a relay that published into the outage would
 * by then have seen its publishes fail and counted attempts.
 */
const OUTAGE_MS = 6500;

type Payment = StormPayment;

const newPayments = (n: number, prefix: string) => stormPayments(n, prefix, 1000);

function eventsEnv(platforms: TestPlatforms, exchange: string, rabbitmqUrl: string): Record<string, string> {
  return {
    ...platforms.env,
    EXAMPLE_HANDLERS: 'true',
    RABBITMQ_URL: rabbitmqUrl,
    RABBITMQ_EXCHANGE: exchange,
    OUTBOX_POLL_INTERVAL_MS: '50',
    OUTBOX_BATCH_SIZE: '20',
    RETRY_BASE_DELAY_MS: '50',
    RETRY_MAX_DELAY_MS: '1000',
  };
}

function isAck(a: HttpAnswer): boolean {
  return a.status === 204 || (a.status === 200 && a.body === 'success');
}

const registerAll = (client: TestClient, payments: Payment[]) => registerAllBy(client, payments, PAYMENTS_IN_FLIGHT);

/** Each payment delivered `clients.length` times at the same moment, once to every client. */
async function payAll(clients: TestClient[], payments: Payment[]): Promise<HttpAnswer[]> {
  const answers: HttpAnswer[] = [];
  for (let i = 0; i < payments.length; i += PAYMENTS_IN_FLIGHT) {
    const batch = payments.slice(i, i + PAYMENTS_IN_FLIGHT);
    answers.push(...(await Promise.all(batch.map((p) => Promise.all(clients.map((c) => deliver(c, p)))))).flat());
  }
  return answers;
}

async function health(baseUrl: string): Promise<{ status: number; body: HealthReport }> {
  const response = await fetch(`${baseUrl}/health/ready`);
  return { status: response.status, body: (await response.json()) as HealthReport };
}

/** The rabbitmq_connected gauge as Prometheus reads it. */
async function brokerConnectedMetric(baseUrl: string): Promise<number | undefined> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const match = /^rabbitmq_connected (\d+)$/m.exec(text);
  return match ? Number(match[1]) : undefined;
}

function messagesFor(tap: ExchangeTap, orderNos: string[]): TappedMessage[] {
  const wanted = new Set(orderNos);
  return tap.messages.filter((m) => wanted.has(String(m.body.orderNo)));
}

async function effectCounts(pool: Pool, orderNos: string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of EFFECT_TABLES) {
    counts[table] = await count(pool, `SELECT COUNT(*) FROM ${table} WHERE order_no IN (?)`, [orderNos]);
  }
  return counts;
}

/** Every example handler's table holds exactly one row per order, carrying the order's one event id. */
async function expectOneEffectPerOrder(pool: Pool, eventIdByOrder: Map<string, string>): Promise<void> {
  const orderNos = [...eventIdByOrder.keys()];
  for (const table of EFFECT_TABLES) {
    const [rows] = await pool.query<Array<RowDataPacket & { order_no: string; event_id: string }>>(
      `SELECT order_no, COUNT(*) AS n, MIN(event_id) AS event_id FROM ${table} WHERE order_no IN (?) GROUP BY order_no`,
      [orderNos],
    );
    expect({ table, orders: rows.length }).toEqual({ table, orders: orderNos.length });
    const wrong = rows.filter((r) => Number(r.n) !== 1 || r.event_id !== eventIdByOrder.get(r.order_no));
    expect({ table, wrong }).toEqual({ table, wrong: [] });
  }
  const eventIds = [...eventIdByOrder.values()];
  const [processed] = await pool.query<Array<RowDataPacket & { consumer: string }>>(
    `SELECT consumer, event_id, COUNT(*) AS n FROM processed_event WHERE event_id IN (?) GROUP BY consumer, event_id`,
    [eventIds],
  );
  expect(processed).toHaveLength(eventIds.length * EXAMPLE_CONSUMERS.length);
  expect(processed.filter((r) => Number(r.n) !== 1)).toEqual([]);
  expect([...new Set(processed.map((r) => r.consumer))].sort()).toEqual([...EXAMPLE_CONSUMERS].sort());
}

async function outboxEventIds(pool: Pool, orderNos: string[]): Promise<Map<string, string>> {
  const [rows] = await pool.query<RowDataPacket[]>(
    `SELECT order_no, COUNT(*) AS n, MIN(event_id) AS event_id FROM outbox_event WHERE order_no IN (?) GROUP BY order_no`,
    [orderNos],
  );
  expect(rows).toHaveLength(orderNos.length);
  expect(rows.filter((r) => Number(r.n) !== 1)).toEqual([]);
  return new Map(rows.map((r) => [String(r.order_no), String(r.event_id)]));
}

const EXCHANGE_DECLARE = { classId: 40, methodId: 10 };

/**
 * Forwards to the broker, except that the first `cuts` connections are cut at the moment the app
 * declares its exchange: the broker lost while the app's channels are being set up, as when a
 * broker restarts or a network flaps right after a (re)connect.
 */
class SetupCuttingProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;
  cutsDone = 0;

  constructor(
    private readonly target: URL,
    private cutsLeft: number,
  ) {}

  async start(): Promise<void> {
    const server = createServer((client) => this.relay(client));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  private relay(client: Socket): void {
    const upstream = createConnection(Number(this.target.port || 5672), this.target.hostname);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    upstream.pipe(client);
    if (this.cutsLeft <= 0) {
      client.pipe(upstream);
      return;
    }
    // Read the app's frames until it declares the exchange; that frame never reaches the broker.
    let pending = Buffer.alloc(0);
    let headerSeen = false;
    client.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      if (!headerSeen && pending.length >= 8) {
        upstream.write(pending.subarray(0, 8));
        pending = pending.subarray(8);
        headerSeen = true;
      }
      while (headerSeen && pending.length >= 7) {
        const frameLength = 7 + pending.readUInt32BE(3) + 1;
        if (pending.length < frameLength) return;
        const isMethod = pending[0] === 1 && frameLength >= 12;
        if (
          isMethod &&
          pending.readUInt16BE(7) === EXCHANGE_DECLARE.classId &&
          pending.readUInt16BE(9) === EXCHANGE_DECLARE.methodId &&
          this.cutsLeft > 0
        ) {
          this.cutsLeft--;
          this.cutsDone++;
          client.destroy();
          upstream.destroy();
          return;
        }
        upstream.write(pending.subarray(0, frameLength));
        pending = pending.subarray(frameLength);
      }
    });
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe('after-payment events through RabbitMQ', () => {
  let pool: Pool;
  let platforms: TestPlatforms;

  beforeAll(async () => {
    platforms = await createTestPlatforms();
    pool = testDatabasePool();
  });
  afterAll(async () => {
    await pool?.end();
  });

  /** Two replicas sharing one database and one broker: each runs its relay and its consumers. */
  describe('with two instances', () => {
    let tap: ExchangeTap;
    const instances: RunningApp[] = [];
    let clients: TestClient[];

    beforeAll(async () => {
      const exchange = testExchange();
      tap = await ExchangeTap.bind(exchange);
      const env = eventsEnv(platforms, exchange, TEST_RABBITMQ_URL);
      instances.push(await startApp(env));
      instances.push(await startApp(env));
      clients = instances.map((i) => new TestClient(i.url, platforms));
    });
    afterAll(async () => {
      await Promise.all(instances.map((i) => i.close()));
      await tap?.close(EXAMPLE_CONSUMERS);
    });

    it('should report the database, the broker and the outbox backlog as ready', async () => {
      for (const instance of instances) {
        await eventually(
          'broker up',
          async () => (await health(instance.managementUrl)).body.details?.rabbitmq?.status === 'up',
          15000,
        );
        const { status, body } = await health(instance.managementUrl);
        expect(status).toBe(200);
        expect(body.status).toBe('ok');
        expect(body.details.database.status).toBe('up');
        expect(body.details.rabbitmq.status).toBe('up');
        expect(body.details.outbox.status).toBe('up');
        for (const key of ['pending', 'oldestPendingAgeSeconds', 'deadLettered']) {
          expect({ key, type: typeof body.details.outbox[key] }).toEqual({ key, type: 'number' });
          expect(Number.isFinite(body.details.outbox[key])).toBe(true);
          expect(body.details.outbox[key]).toBeGreaterThanOrEqual(0);
        }
      }
    });

    it('should publish every payment.succeeded event once and have each handler take effect once per order', async () => {
      const payments = newPayments(500, 'E');
      const orderNos = payments.map((p) => p.orderNo);
      const byOrder = new Map(payments.map((p) => [p.orderNo, p]));
      await registerAll(clients[0], payments);

      const answers = await payAll(clients, payments);
      expect(answers).toHaveLength(1000);
      expect(answers.filter((a) => !isAck(a)).map((a) => [a.status, a.body])).toEqual([]);
      expect(
        await count(pool, `SELECT COUNT(*) FROM payment_order WHERE status = 'PAID' AND order_no IN (?)`, [orderNos]),
      ).toBe(500);
      const eventIdByOrder = await outboxEventIds(pool, orderNos);

      await tap.waitFor(
        () => new Set(messagesFor(tap, orderNos).map((m) => m.messageId)).size >= 500,
        120000,
        '500 events at the tap',
      );
      await eventually(
        '500 effects in every handler table',
        async () => Object.values(await effectCounts(pool, orderNos)).every((n) => n >= 500),
        120000,
      );
      await sleep(SETTLE_MS);

      const messages = messagesFor(tap, orderNos);
      const ids = new Set(messages.map((m) => m.messageId));
      expect(ids.size).toBe(500);
      expect([...ids].sort()).toEqual([...eventIdByOrder.values()].sort());
      for (const m of messages) {
        const payment = byOrder.get(String(m.body.orderNo))!;
        expect({
          routingKey: m.routingKey,
          persistent: m.persistent,
          contentType: m.contentType,
          messageId: m.messageId,
          keys: Object.keys(m.body).sort(),
        }).toEqual({
          routingKey: 'payment.succeeded',
          persistent: true,
          contentType: 'application/json',
          messageId: m.body.eventId,
          keys: EVENT_KEYS,
        });
        expect(m.body).toEqual({
          eventId: eventIdByOrder.get(payment.orderNo),
          type: 'payment.succeeded',
          occurredAt: expect.any(String),
          orderNo: payment.orderNo,
          transactionId: payment.transactionId,
          channel: payment.channel,
          amount: payment.amount,
          currency: 'CNY',
        });
        expect(Number.isInteger(m.body.amount)).toBe(true);
        expect(Number.isNaN(Date.parse(String(m.body.occurredAt)))).toBe(false);
      }

      expect(await effectCounts(pool, orderNos)).toEqual({
        points_grant: 500,
        coupon_issue: 500,
        shipment_request: 500,
      });
      await expectOneEffectPerOrder(pool, eventIdByOrder);
      expect(
        await count(pool, `SELECT COUNT(*) FROM outbox_event WHERE order_no IN (?) AND published_at IS NULL`, [
          orderNos,
        ]),
      ).toBe(0);
      expect(
        await count(
          pool,
          `SELECT COUNT(*) FROM outbox_event WHERE order_no IN (?) AND (attempts > 0 OR dead_lettered_at IS NOT NULL)`,
          [orderNos],
        ),
      ).toBe(0);
      expect(
        await count(pool, `SELECT COUNT(*) FROM handler_retry WHERE event_id IN (?)`, [[...eventIdByOrder.values()]]),
      ).toBe(0);
      // Nothing failed, so no relay had a reason to publish a row twice: a duplicate here is a double claim.
      expect({ duplicatePublishes: messages.length - ids.size }).toEqual({ duplicatePublishes: 0 });
      const [[points]] = await pool.query<RowDataPacket[]>(
        `SELECT SUM(points) AS total FROM points_grant WHERE order_no IN (?)`,
        [orderNos],
      );
      expect(Number(points.total)).toBe(payments.reduce((sum, p) => sum + Math.floor(p.amount / 100), 0));
    });

    it("should publish each order's events in the order they were written, with both relays running", async () => {
      const ORDERS = 20;
      const EVENTS_PER_ORDER = 3;
      const orderNos = Array.from({ length: ORDERS }, () => uniqueId('S'));
      // The relay's input, as three state changes per order would have written it: interleaved across orders.
      const rows: unknown[][] = [];
      for (let k = 0; k < EVENTS_PER_ORDER; k++) {
        for (const orderNo of orderNos) {
          const event = {
            eventId: randomUUID(),
            type: 'payment.succeeded',
            occurredAt: new Date().toISOString(),
            orderNo,
            transactionId: uniqueId('T'),
            channel: 'WECHATPAY',
            amount: 1000 + k,
            currency: 'CNY',
          };
          rows.push([event.eventId, event.type, orderNo, JSON.stringify(event), new Date()]);
        }
      }
      await pool.query(`INSERT INTO outbox_event (event_id, type, order_no, payload, created_at) VALUES ?`, [rows]);
      const [written] = await pool.query<RowDataPacket[]>(
        `SELECT order_no, event_id FROM outbox_event WHERE order_no IN (?) ORDER BY id`,
        [orderNos],
      );
      expect(written).toHaveLength(ORDERS * EVENTS_PER_ORDER);

      await tap.waitFor(
        () => new Set(messagesFor(tap, orderNos).map((m) => m.messageId)).size >= ORDERS * EVENTS_PER_ORDER,
        60000,
        'the ordering events at the tap',
      );
      await eventually(
        'an effect for every ordering event',
        async () => Object.values(await effectCounts(pool, orderNos)).every((n) => n >= ORDERS * EVENTS_PER_ORDER),
        120000,
      );
      await sleep(SETTLE_MS);

      const arrived = messagesFor(tap, orderNos);
      expect(arrived.length).toBe(ORDERS * EVENTS_PER_ORDER);
      for (const orderNo of orderNos) {
        const expected = written.filter((w) => w.order_no === orderNo).map((w) => String(w.event_id));
        const actual = arrived.filter((m) => m.body.orderNo === orderNo).map((m) => m.messageId);
        expect({ orderNo, order: actual }).toEqual({ orderNo, order: expected });
      }
      expect(await effectCounts(pool, orderNos)).toEqual({
        points_grant: ORDERS * EVENTS_PER_ORDER,
        coupon_issue: ORDERS * EVENTS_PER_ORDER,
        shipment_request: ORDERS * EVENTS_PER_ORDER,
      });
      expect(
        await count(pool, `SELECT COUNT(*) FROM outbox_event WHERE order_no IN (?) AND published_at IS NULL`, [
          orderNos,
        ]),
      ).toBe(0);
    });
  });

  /** The broker behind a TCP hop the test can cut: callbacks keep being acked, events wait in the outbox. */
  describe('while the broker is unreachable', () => {
    let exchange: string;
    let tap: ExchangeTap;
    let proxy: TcpProxy;
    let instance: RunningApp | undefined;
    let client: TestClient;

    beforeAll(async () => {
      exchange = testExchange();
      tap = await ExchangeTap.bind(exchange);
      const broker = new URL(TEST_RABBITMQ_URL);
      proxy = new TcpProxy(broker.hostname, Number(broker.port || 5672));
      await proxy.start();
      const viaProxy = new URL(TEST_RABBITMQ_URL);
      viaProxy.hostname = '127.0.0.1';
      viaProxy.port = String(proxy.port);
      instance = await startApp({ ...eventsEnv(platforms, exchange, viaProxy.toString()), OUTBOX_MAX_ATTEMPTS: '2' });
      client = new TestClient(instance.url, platforms);
    });
    afterAll(async () => {
      await instance?.close();
      await proxy?.stop();
      await tap?.close(EXAMPLE_CONSUMERS);
    });

    it('should accept payments, keep their events in the outbox without counting attempts, and publish all once it returns', async () => {
      await eventually(
        'broker up',
        async () => (await health(instance!.managementUrl)).body.details?.rabbitmq?.status === 'up',
        15000,
      );
      // The app's channels are set up before the broker goes (losing it during setup is the next test's case).
      await eventually('the handlers to consume their queues', () => handlerQueuesConsumed(exchange), 15000);

      await proxy.stop();
      await eventually(
        'the broker to be reported down',
        async () => (await health(instance!.managementUrl)).body.details?.rabbitmq?.status === 'down',
        15000,
      );
      // The outbox absorbs the outage: the instance stays ready, and says why events wait.
      const down = await health(instance!.managementUrl);
      expect(down.status).toBe(200);
      expect(down.body.details.rabbitmq.status).toBe('down');
      expect(down.body.details.database.status).toBe('up');
      expect(await brokerConnectedMetric(instance!.managementUrl)).toBe(0);

      const payments = newPayments(50, 'B');
      const orderNos = payments.map((p) => p.orderNo);
      await registerAll(client, payments);
      const answers = await payAll([client], payments);
      expect(answers.filter((a) => !isAck(a)).map((a) => [a.status, a.body])).toEqual([]);
      expect(
        await count(pool, `SELECT COUNT(*) FROM payment_order WHERE status = 'PAID' AND order_no IN (?)`, [orderNos]),
      ).toBe(50);
      const eventIdByOrder = await outboxEventIds(pool, orderNos);

      // Give the relay time to wrongly count the outage as failed attempts, had it tried to publish.
      await sleep(OUTAGE_MS);
      const [waiting] = await pool.query<RowDataPacket[]>(
        `SELECT COUNT(*) AS n, SUM(published_at IS NULL) AS unpublished, SUM(attempts = 0) AS unattempted,
                SUM(dead_lettered_at IS NULL) AS alive, SUM(last_error IS NULL) AS without_error
         FROM outbox_event WHERE order_no IN (?)`,
        [orderNos],
      );
      expect(Object.fromEntries(Object.entries(waiting[0]).map(([k, v]) => [k, Number(v)]))).toEqual({
        n: 50,
        unpublished: 50,
        unattempted: 50,
        alive: 50,
        without_error: 50,
      });
      const backlog = await health(instance!.managementUrl);
      expect(backlog.status).toBe(200);
      expect(backlog.body.details.outbox.pending).toBeGreaterThanOrEqual(50);
      expect(messagesFor(tap, orderNos)).toHaveLength(0);
      expect(await effectCounts(pool, orderNos)).toEqual({ points_grant: 0, coupon_issue: 0, shipment_request: 0 });

      await proxy.start();
      await tap.waitFor(
        () => new Set(messagesFor(tap, orderNos).map((m) => m.messageId)).size >= 50,
        60000,
        '50 events at the tap',
      );
      await eventually(
        '50 effects in every handler table',
        async () => Object.values(await effectCounts(pool, orderNos)).every((n) => n >= 50),
        60000,
      );
      await sleep(SETTLE_MS);

      const ids = new Set(messagesFor(tap, orderNos).map((m) => m.messageId));
      expect([...ids].sort()).toEqual([...eventIdByOrder.values()].sort());
      expect(
        await count(pool, `SELECT COUNT(*) FROM outbox_event WHERE order_no IN (?) AND published_at IS NOT NULL`, [
          orderNos,
        ]),
      ).toBe(50);
      expect(
        await count(pool, `SELECT COUNT(*) FROM outbox_event WHERE order_no IN (?) AND dead_lettered_at IS NOT NULL`, [
          orderNos,
        ]),
      ).toBe(0);
      expect(await effectCounts(pool, orderNos)).toEqual({ points_grant: 50, coupon_issue: 50, shipment_request: 50 });
      await expectOneEffectPerOrder(pool, eventIdByOrder);

      await eventually(
        'the broker to be reported up again',
        async () => (await health(instance!.managementUrl)).body.details?.rabbitmq?.status === 'up',
        15000,
      );
      expect((await health(instance!.managementUrl)).status).toBe(200);
      expect(await brokerConnectedMetric(instance!.managementUrl)).toBe(1);
    });
  });

  describe('when the broker is lost while the channels are being set up', () => {
    let exchange: string;
    let tap: ExchangeTap;
    let proxy: SetupCuttingProxy;
    let instance: RunningApp | undefined;

    beforeAll(async () => {
      exchange = testExchange();
      tap = await ExchangeTap.bind(exchange);
      proxy = new SetupCuttingProxy(new URL(TEST_RABBITMQ_URL), 2);
      await proxy.start();
    });
    afterAll(async () => {
      await instance?.close();
      await proxy?.stop();
      await tap?.close(EXAMPLE_CONSUMERS);
    });

    it('should reconnect and deliver events instead of failing on the interrupted setup', async () => {
      const viaProxy = new URL(TEST_RABBITMQ_URL);
      viaProxy.hostname = '127.0.0.1';
      viaProxy.port = String(proxy.port);
      instance = await startApp(eventsEnv(platforms, exchange, viaProxy.toString()));
      const client = new TestClient(instance.url, platforms);

      await eventually('two setups cut short', () => proxy.cutsDone === 2, 15000);
      await eventually('the handlers to consume their queues', () => handlerQueuesConsumed(exchange), 15000);
      await eventually('readiness', async () => (await health(instance!.managementUrl)).status === 200, 15000);

      const payments = newPayments(10, 'F');
      const orderNos = payments.map((p) => p.orderNo);
      await registerAll(client, payments);
      const answers = await payAll([client], payments);
      expect(answers.filter((a) => !isAck(a)).map((a) => [a.status, a.body])).toEqual([]);
      const eventIdByOrder = await outboxEventIds(pool, orderNos);

      await tap.waitFor(
        () => new Set(messagesFor(tap, orderNos).map((m) => m.messageId)).size >= 10,
        30000,
        '10 events at the tap',
      );
      await eventually(
        '10 effects in every handler table',
        async () => Object.values(await effectCounts(pool, orderNos)).every((n) => n >= 10),
        30000,
      );
      await sleep(SETTLE_MS);
      expect(await effectCounts(pool, orderNos)).toEqual({ points_grant: 10, coupon_issue: 10, shipment_request: 10 });
      await expectOneEffectPerOrder(pool, eventIdByOrder);
    });
  });

  /** Another service's consumer may start before the first payment: it must find the exchange to bind to. */
  describe('on a fresh broker, before any event was published', () => {
    const exchange = testExchange();
    let instance: RunningApp | undefined;

    afterAll(async () => {
      await instance?.close();
      await deleteExchange(exchange).catch(() => undefined);
    });

    it('should have declared the exchange as soon as it connected', async () => {
      expect(await exchangeExists(exchange)).toBe(false);

      // No example handlers: no consumer channel of the app's own declares anything, and nothing is published.
      instance = await startApp({ ...eventsEnv(platforms, exchange, TEST_RABBITMQ_URL), EXAMPLE_HANDLERS: 'false' });

      await eventually('the exchange declared', () => exchangeExists(exchange), 10000);
    });
  });

  /** A backlog waiting for the first start against a new exchange: no handler queue exists yet. */
  describe('when events wait for a broker no handler has subscribed on yet', () => {
    let exchange: string;
    let tap: ExchangeTap;
    const instances: RunningApp[] = [];

    beforeAll(async () => {
      exchange = testExchange();
      tap = await ExchangeTap.bind(exchange);
    });
    afterAll(async () => {
      await Promise.all(instances.map((i) => i.close()));
      await tap?.close(EXAMPLE_CONSUMERS);
    });

    it('should still reach every handler, because the publisher declares their queues before it publishes', async () => {
      // Port 1: nothing listens, so events pile up unpublished in the outbox.
      const offline = await startApp(eventsEnv(platforms, exchange, 'amqp://guest:guest@127.0.0.1:1'));
      instances.push(offline);
      const client = new TestClient(offline.url, platforms);
      const payments = newPayments(30, 'Q');
      const orderNos = payments.map((p) => p.orderNo);
      await registerAll(client, payments);
      expect((await payAll([client], payments)).filter((a) => !isAck(a))).toEqual([]);
      await offline.close();
      instances.pop();
      const eventIdByOrder = await outboxEventIds(pool, orderNos);

      // Fast polling, so that the relay publishes before the consumers' own set-up could run.
      instances.push(
        await startApp({ ...eventsEnv(platforms, exchange, TEST_RABBITMQ_URL), OUTBOX_POLL_INTERVAL_MS: '10' }),
      );
      await eventually(
        '30 effects in every handler table',
        async () => Object.values(await effectCounts(pool, orderNos)).every((n) => n >= 30),
        30000,
      );
      await sleep(SETTLE_MS);
      expect(await effectCounts(pool, orderNos)).toEqual({ points_grant: 30, coupon_issue: 30, shipment_request: 30 });
      await expectOneEffectPerOrder(pool, eventIdByOrder);
    });
  });
});
