import { randomUUID } from 'node:crypto';
import { createConnection, createServer, Server, Socket } from 'node:net';
import { Pool, RowDataPacket } from 'mysql2/promise';
import {
  deleteExchange,
  EXAMPLE_CONSUMERS,
  exchangeExists,
  ExchangeTap,
  handlerQueuesConsumed,
  TEST_RABBITMQ_URL,
  testExchange,
} from '../support/amqp-tap';
import { Readiness } from '../../src/platform/health/readiness';
import { OutboxRelay } from '../../src/events/outbox.relay';
import { eventually } from '../support/eventually';
import { handledEverythingBefore } from '../support/handlers-drained';
import { Medium, MediumContext, startMedium } from '../support/medium';
import {
  EFFECT_TABLES,
  effectCounts,
  expectOneEffectPerOrder,
  MediumNotify,
  messagesFor,
  metricSample,
  intakeModules,
  outboxEventIds,
  refusals,
} from '../support/medium-events';
import { stormPayments } from '../support/payment-storm';
import { TcpProxy } from '../support/tcp-proxy';
import { count, notificationsOnly, TestPlatforms, uniqueId } from '../support/test-app';
import { roundsFrom } from '../support/worker-rounds';

/**
 * The after-payment events through the real RabbitMQ, without HTTP: payments delivered to the
 * notify use case of one or two modules on one database (two instances), each with its outbox
 * relay and the example handlers' consumers; the tap listens on the broker as another service
 * would. The readiness
 * report is Readiness.report() (what /health/ready answers on the management port), the acks are
 * the notify use case's replies, the broker gauge is read from the process's registry.
 */
const EVENT_KEYS = ['amount', 'channel', 'currency', 'eventId', 'occurredAt', 'orderNo', 'transactionId', 'type'];

const newPayments = (n: number, prefix: string) => stormPayments(n, prefix, 1000);

let medium: Medium;
let platforms: TestPlatforms;
let pool: Pool;
let notify: MediumNotify;

function eventsEnv(exchange: string, rabbitmqUrl: string): Record<string, string> {
  return {
    ...notificationsOnly(platforms.env),
    RABBITMQ_URL: rabbitmqUrl,
    RABBITMQ_EXCHANGE: exchange,
    OUTBOX_POLL_INTERVAL_MS: '50',
    OUTBOX_BATCH_SIZE: '20',
    RETRY_BASE_DELAY_MS: '50',
    RETRY_MAX_DELAY_MS: '1000',
  };
}

/** An instance: the order service, the notify use case, the relay, the example handlers and readiness. */
const instance = (env: Record<string, string>, examples = true) => medium.another(() => env, intakeModules(examples));

/** What /health/ready answers on the management port: whether the instance is ready, and the report. */
const readinessReport = (ctx: MediumContext) => ctx.get(Readiness).report();

/**
 * Waits until nothing more of the events of `orderNos` can still arrive anywhere: every one marked
 * published, then whole rounds of every relay begun after that (no relay claims a published row,
 * and one that held one of them when they were all marked has published its copy by the end of
 * its round), then a marker payment paid after them, through the tap (its queue hands messages over
 * in order) and through every handler (handledEverythingBefore).
 */
async function nothingMoreOnItsWay(instances: MediumContext[], tap: ExchangeTap, orderNos: string[]): Promise<void> {
  const unpublished = 'SELECT COUNT(*) FROM outbox_event WHERE order_no IN (?) AND published_at IS NULL';
  await eventually(
    'every event marked published',
    async () => (await count(pool, unpublished, [orderNos])) === 0,
    60000,
  );
  await roundsFrom(...instances.map((ctx) => ctx.get(OutboxRelay)))('every event was marked published');
  const [marker] = newPayments(1, 'M');
  await notify.registerAll(instances[0], [marker]);
  expect(refusals(await notify.payAll([instances[0]], [marker]))).toEqual([]);
  await tap.waitFor(() => messagesFor(tap, [marker.orderNo]).length > 0, 60000, 'the marker event at the tap');
  await handledEverythingBefore(instances, pool, marker.orderNo, EFFECT_TABLES);
}

const brokerStatus = async (ctx: MediumContext) => (await readinessReport(ctx)).report.details.rabbitmq?.status;

/** The test broker's URL with its address replaced by `127.0.0.1:port` (a proxy in front of it). */
function brokerUrlVia(port: number): string {
  const viaProxy = new URL(TEST_RABBITMQ_URL);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(port);
  return viaProxy.toString();
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

beforeAll(async () => {
  // The relays and the handlers take every due event of the database: only this suite's.
  medium = await startMedium({}, { fake: false, replicas: 0, ownDatabase: true });
  ({ platforms, pool } = medium);
  notify = new MediumNotify(platforms);
});
afterAll(async () => {
  await medium?.close();
});

/** Two instances sharing one database and one broker: each runs its relay and its consumers. */
describe('with two instances', () => {
  let tap: ExchangeTap;
  const instances: MediumContext[] = [];

  beforeAll(async () => {
    const exchange = testExchange();
    tap = await ExchangeTap.bind(exchange);
    const env = eventsEnv(exchange, TEST_RABBITMQ_URL);
    instances.push(await instance(env));
    instances.push(await instance(env));
  });
  afterAll(async () => {
    await Promise.all(instances.map((i) => i.close()));
    await tap?.close(EXAMPLE_CONSUMERS);
  });

  it('should report the database, the broker and the outbox backlog as ready', async () => {
    for (const ctx of instances) {
      await eventually('broker up', async () => (await brokerStatus(ctx)) === 'up', 15000);
      const { ready, report } = await readinessReport(ctx);
      expect(ready).toBe(true);
      expect(report.status).toBe('ok');
      expect(report.details.database.status).toBe('up');
      expect(report.details.rabbitmq.status).toBe('up');
      const outbox = report.details.outbox as Record<string, unknown>;
      expect(outbox.status).toBe('up');
      for (const key of ['pending', 'oldestPendingAgeSeconds', 'deadLettered']) {
        expect({ key, type: typeof outbox[key] }).toEqual({ key, type: 'number' });
        expect(Number.isFinite(outbox[key])).toBe(true);
        expect(outbox[key]).toBeGreaterThanOrEqual(0);
      }
    }
  });

  it('should publish every payment.succeeded event once and have each handler take effect once per order', async () => {
    const payments = newPayments(500, 'E');
    const orderNos = payments.map((p) => p.orderNo);
    const byOrder = new Map(payments.map((p) => [p.orderNo, p]));
    await notify.registerAll(instances[0], payments);

    const replies = await notify.payAll(instances, payments);
    expect(replies).toHaveLength(1000);
    expect(refusals(replies)).toEqual([]);
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
    await nothingMoreOnItsWay(instances, tap, orderNos);

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
      await count(pool, `SELECT COUNT(*) FROM outbox_event WHERE order_no IN (?) AND published_at IS NULL`, [orderNos]),
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
    await nothingMoreOnItsWay(instances, tap, orderNos);

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
      await count(pool, `SELECT COUNT(*) FROM outbox_event WHERE order_no IN (?) AND published_at IS NULL`, [orderNos]),
    ).toBe(0);
  });
});

/** The broker behind a TCP hop the test can cut: callbacks keep being acked, events wait in the outbox. */
describe('while the broker is unreachable', () => {
  let exchange: string;
  let tap: ExchangeTap;
  let proxy: TcpProxy;
  let ctx: MediumContext | undefined;

  beforeAll(async () => {
    exchange = testExchange();
    tap = await ExchangeTap.bind(exchange);
    const broker = new URL(TEST_RABBITMQ_URL);
    proxy = new TcpProxy(broker.hostname, Number(broker.port || 5672));
    await proxy.start();
    ctx = await instance({ ...eventsEnv(exchange, brokerUrlVia(proxy.port)), OUTBOX_MAX_ATTEMPTS: '2' });
  });
  afterAll(async () => {
    await ctx?.close();
    await proxy?.stop();
    await tap?.close(EXAMPLE_CONSUMERS);
  });

  it('should accept payments, keep their events in the outbox without counting attempts, and publish all once it returns', async () => {
    await eventually('broker up', async () => (await brokerStatus(ctx!)) === 'up', 15000);
    // The channels are set up before the broker goes (losing it during setup is the next case).
    await eventually('the handlers to consume their queues', () => handlerQueuesConsumed(exchange), 15000);

    await proxy.stop();
    await eventually('the broker to be reported down', async () => (await brokerStatus(ctx!)) === 'down', 15000);
    // The outbox absorbs the outage: the instance stays ready, and says why events wait.
    const down = await readinessReport(ctx!);
    expect(down.ready).toBe(true);
    expect(down.report.details.rabbitmq.status).toBe('down');
    expect(down.report.details.database.status).toBe('up');
    expect(await metricSample('rabbitmq_connected')).toBe(0);

    const payments = newPayments(50, 'B');
    const orderNos = payments.map((p) => p.orderNo);
    await notify.registerAll(ctx!, payments);
    expect(refusals(await notify.payAll([ctx!], payments))).toEqual([]);
    expect(
      await count(pool, `SELECT COUNT(*) FROM payment_order WHERE status = 'PAID' AND order_no IN (?)`, [orderNos]),
    ).toBe(50);
    const eventIdByOrder = await outboxEventIds(pool, orderNos);

    // Whole relay rounds begun with the events committed: a relay that published into the outage has
    // seen its publishes fail (the confirm timeout) and counted attempts by then.
    await roundsFrom(ctx!.get(OutboxRelay))('the events were committed');
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
    const backlog = await readinessReport(ctx!);
    expect(backlog.ready).toBe(true);
    expect(backlog.report.details.outbox.pending).toBeGreaterThanOrEqual(50);
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
    await nothingMoreOnItsWay([ctx!], tap, orderNos);

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

    await eventually('the broker to be reported up again', async () => (await brokerStatus(ctx!)) === 'up', 15000);
    expect((await readinessReport(ctx!)).ready).toBe(true);
    expect(await metricSample('rabbitmq_connected')).toBe(1);
  });
});

describe('when the broker is lost while the channels are being set up', () => {
  let exchange: string;
  let tap: ExchangeTap;
  let proxy: SetupCuttingProxy;
  let ctx: MediumContext | undefined;

  beforeAll(async () => {
    exchange = testExchange();
    tap = await ExchangeTap.bind(exchange);
    proxy = new SetupCuttingProxy(new URL(TEST_RABBITMQ_URL), 2);
    await proxy.start();
  });
  afterAll(async () => {
    await ctx?.close();
    await proxy?.stop();
    await tap?.close(EXAMPLE_CONSUMERS);
  });

  it('should reconnect and deliver events instead of failing on the interrupted setup', async () => {
    ctx = await instance(eventsEnv(exchange, brokerUrlVia(proxy.port)));

    await eventually('two setups cut short', () => proxy.cutsDone === 2, 15000);
    await eventually('the handlers to consume their queues', () => handlerQueuesConsumed(exchange), 15000);
    await eventually('readiness', async () => (await readinessReport(ctx!)).ready, 15000);

    const payments = newPayments(10, 'F');
    const orderNos = payments.map((p) => p.orderNo);
    await notify.registerAll(ctx, payments);
    expect(refusals(await notify.payAll([ctx], payments))).toEqual([]);
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
    await nothingMoreOnItsWay([ctx], tap, orderNos);
    expect(await effectCounts(pool, orderNos)).toEqual({ points_grant: 10, coupon_issue: 10, shipment_request: 10 });
    await expectOneEffectPerOrder(pool, eventIdByOrder);
  });
});

/** Another service's consumer may start before the first payment: it must find the exchange to bind to. */
describe('on a fresh broker, before any event was published', () => {
  const exchange = testExchange();
  let ctx: MediumContext | undefined;

  afterAll(async () => {
    await ctx?.close();
    await deleteExchange(exchange).catch(() => undefined);
  });

  it('should have declared the exchange as soon as it connected', async () => {
    expect(await exchangeExists(exchange)).toBe(false);

    // No example handlers: no consumer channel of the instance declares anything, and nothing is published.
    ctx = await instance(eventsEnv(exchange, TEST_RABBITMQ_URL), false);

    await eventually('the exchange declared', () => exchangeExists(exchange), 60_000);
  });
});

/** A backlog waiting for the first start against a new exchange: no handler queue exists yet. */
describe('when events wait for a broker no handler has subscribed on yet', () => {
  let exchange: string;
  let tap: ExchangeTap;
  const instances: MediumContext[] = [];

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
    const offline = await instance(eventsEnv(exchange, 'amqp://guest:guest@127.0.0.1:1'));
    instances.push(offline);
    const payments = newPayments(30, 'Q');
    const orderNos = payments.map((p) => p.orderNo);
    await notify.registerAll(offline, payments);
    expect(refusals(await notify.payAll([offline], payments))).toEqual([]);
    await offline.close();
    instances.pop();
    const eventIdByOrder = await outboxEventIds(pool, orderNos);

    // Fast polling, so that the relay publishes before the consumers' own set-up could run.
    instances.push(await instance({ ...eventsEnv(exchange, TEST_RABBITMQ_URL), OUTBOX_POLL_INTERVAL_MS: '10' }));
    await eventually(
      '30 effects in every handler table',
      async () => Object.values(await effectCounts(pool, orderNos)).every((n) => n >= 30),
      30000,
    );
    await nothingMoreOnItsWay(instances, tap, orderNos);
    expect(await effectCounts(pool, orderNos)).toEqual({ points_grant: 30, coupon_issue: 30, shipment_request: 30 });
    await expectOneEffectPerOrder(pool, eventIdByOrder);
  });
});
