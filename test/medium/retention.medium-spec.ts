import { randomBytes, randomUUID } from 'node:crypto';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { AdminModule } from '../../src/admin/admin.module';
import { AdminQueries } from '../../src/admin/admin.queries';
import { PublishedEventsRetention } from '../../src/events/published-events.retention';
import { ProcessedEventsRetention } from '../../src/events/subscribers/processed-events.retention';
import { WebhooksModule } from '../../src/events/webhooks/webhooks.module';
import { AdminRole } from '../../src/operators/admin.config';
import { DeliveryBytesRetention } from '../../src/payments/idempotency/delivery-bytes.retention';
import {
  RefusedHoursRetention,
  RefusedNotificationsRetention,
} from '../../src/payments/refused-notification/refused-notifications.retention';
import { PruneCounts, RetentionPruner } from '../../src/platform/retention/retention-pruner';
import { RetentionModule } from '../../src/platform/retention/retention.module';
import { RETENTION_REPOSITORIES } from '../../src/app.module';
import { EXAMPLE_CONSUMERS } from '../support/amqp-tap';
import { eventually, sleep } from '../support/eventually';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { MediumNotify, metricSample, notifyModules } from '../support/medium-events';
import { isAck } from '../support/medium-intake';
import { StormPayment, stormPayments } from '../support/payment-storm';
import { count, notificationsOnly, TestPlatforms, uniqueId } from '../support/test-app';

/**
 * Retention as a service: the pruner's rounds (RetentionPruner, with the tasks app.module.ts
 * gives it, in its order) of two instances on one database, and its background worker while
 * payments keep being delivered to the notify use case; the operators' view of a pruned delivery
 * is the admin read (AdminQueries.delivery) that GET /admin/deliveries/:id answers.
 * The suite has a database of its own: it
 * counts whole tables, and the worker prunes every old row of the database.
 */
const DAY_MS = 24 * 3600_000;
const BATCH = 50;

type Payment = StormPayment;

const newPayments = (n: number, prefix: string) => stormPayments(n, prefix, 1000);

let medium: Medium;
let notify: MediumNotify;

/** Registers each order, then delivers its payment `times` times at once; every delivery must be acked. */
async function pay(ctx: MediumContext, payments: Payment[], times: number): Promise<void> {
  await notify.registerAll(ctx, payments, 1);
  const answers = await Promise.all(
    payments.map((p) =>
      Promise.all(Array.from({ length: times }, async () => ({ p, reply: await notify.deliver(ctx, p) }))),
    ),
  );
  expect(
    answers
      .flat()
      .filter(({ p, reply }) => !isAck(p, reply))
      .map(({ reply }) => [reply.status, reply.body]),
  ).toEqual([]);
}

/** An instance: the notify use case, the example handlers, the webhooks' fan-out, retention and the admin reads. */
const instance = (env: Record<string, string>) =>
  medium.another(
    () => env,
    [
      ...notifyModules(),
      WebhooksModule,
      AdminModule,
      RetentionModule.forRoot(
        [
          DeliveryBytesRetention,
          PublishedEventsRetention,
          // After the outbox, as in app.module.ts.
          ProcessedEventsRetention,
          RefusedNotificationsRetention,
          RefusedHoursRetention,
        ],
        RETENTION_REPOSITORIES,
      ),
    ],
  );

/** Prunes as of `now` until a round finds nothing left; the counts are what this caller pruned. */
async function pruneUntilDone(pruner: RetentionPruner, now: Date): Promise<PruneCounts> {
  const total: PruneCounts = {
    callback_delivery: 0,
    outbox_event: 0,
    processed_event: 0,
    refused_notification: 0,
    refused_notification_hour: 0,
  };
  for (;;) {
    const counts = await pruner.pruneBatch(now);
    for (const table of Object.keys(total)) total[table] += counts[table];
    if (Object.values(counts).every((n) => n === 0)) return total;
  }
}

/** The rows `sql` selects, typed by the caller as the columns it selects. */
async function rows<Row = Record<string, unknown>>(pool: Pool, sql: string, params: unknown[] = []): Promise<Row[]> {
  const [result] = await pool.query<Array<RowDataPacket & { headers?: unknown }>>(sql, params);
  // MariaDB's JSON is LONGTEXT underneath: mysql2 hands it back as text there.
  for (const row of result) if (typeof row.headers === 'string') row.headers = JSON.parse(row.headers) as unknown;
  return result as unknown as Row[];
}

/** callback_delivery's columns, the ones the suite reads by name. */
type DeliveryColumns = Record<string, unknown> & {
  id: string;
  order_no: string;
  channel: string;
  outcome: string;
  transaction_id: string | null;
  raw_body: Buffer;
  headers: unknown;
};

/** Every event of these orders published, and processed by each example handler. */
async function eventsSettled(pool: Pool, orderNos: string[]): Promise<void> {
  await eventually(
    'the events published, fanned out to the webhooks and processed',
    async () =>
      (await count(
        pool,
        'SELECT COUNT(*) FROM outbox_event WHERE order_no IN (?) AND published_at IS NOT NULL AND webhooks_fanned_out_at IS NOT NULL',
        [orderNos],
      )) === orderNos.length &&
      (await count(
        pool,
        'SELECT COUNT(*) FROM processed_event p JOIN outbox_event o ON o.event_id = p.event_id WHERE o.order_no IN (?)',
        [orderNos],
      )) ===
        orderNos.length * EXAMPLE_CONSUMERS.length,
  );
}

async function eventIdsOf(pool: Pool, orderNos: string[]): Promise<string[]> {
  return (await rows(pool, 'SELECT event_id FROM outbox_event WHERE order_no IN (?)', [orderNos])).map((r) =>
    String(r.event_id),
  );
}

/** Whole-table totals, so that concurrent prunes can be checked against what actually changed. */
async function tableTotals(
  pool: Pool,
): Promise<Pick<PruneCounts, 'callback_delivery' | 'outbox_event' | 'processed_event'>> {
  return {
    callback_delivery: await count(pool, 'SELECT COUNT(*) FROM callback_delivery WHERE raw_pruned_at IS NULL'),
    outbox_event: await count(pool, 'SELECT COUNT(*) FROM outbox_event'),
    processed_event: await count(pool, 'SELECT COUNT(*) FROM processed_event'),
  };
}

// ----------------------------------------------------------------------------- history, as the app wrote it

const WECHATPAY_HEADERS = {
  'wechatpay-serial': 'PUB_KEY_ID_0114232134912410000000000000',
  'wechatpay-signature': randomBytes(256).toString('base64'),
  'wechatpay-timestamp': '1700000000',
  'wechatpay-nonce': randomBytes(16).toString('hex'),
};
const ALIPAY_HEADERS = { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' };

/** Deliveries recorded `receivedAt`: months of history cannot be made through the app in a test run. */
async function seedDeliveries(pool: Pool, prefix: string, n: number, receivedAt: Date): Promise<void> {
  for (let start = 0; start < n; start += 1000) {
    const chunk = Array.from({ length: Math.min(1000, n - start) }, (_, k) => {
      const i = start + k;
      const wechat = i % 2 === 0;
      return [
        wechat ? 'WECHATPAY' : 'ALIPAY',
        wechat ? 'TRANSACTION.SUCCESS' : 'TRADE_SUCCESS',
        `${prefix}T${i}`,
        `${prefix}${i}`,
        i % 3 === 0 ? 'PAID' : 'DUPLICATE',
        Buffer.from(JSON.stringify({ id: randomUUID(), resource: randomBytes(600).toString('base64') })),
        JSON.stringify(wechat ? WECHATPAY_HEADERS : ALIPAY_HEADERS),
        receivedAt,
        3,
      ];
    });
    await pool.query(
      `INSERT INTO callback_delivery (channel, event_type, transaction_id, order_no, outcome, raw_body, headers, received_at, processing_ms) VALUES ?`,
      [chunk],
    );
  }
}

/** Events published at `publishedAt` and processed by each example handler a moment later. */
async function seedPublishedEvents(pool: Pool, prefix: string, n: number, publishedAt: Date): Promise<void> {
  const events = Array.from({ length: n }, (_, i) => ({ eventId: randomUUID(), orderNo: `${prefix}${i}` }));
  for (let start = 0; start < n; start += 1000) {
    const chunk = events.slice(start, start + 1000);
    await pool.query(
      `INSERT INTO outbox_event (event_id, type, order_no, payload, created_at, published_at) VALUES ?`,
      [
        chunk.map((e) => [
          e.eventId,
          'payment.succeeded',
          e.orderNo,
          JSON.stringify({ eventId: e.eventId }),
          publishedAt,
          publishedAt,
        ]),
      ],
    );
    await pool.query(`INSERT INTO processed_event (consumer, event_id, processed_at) VALUES ?`, [
      chunk.flatMap((e) => EXAMPLE_CONSUMERS.map((consumer) => [consumer, e.eventId, publishedAt])),
    ]);
  }
}

// ----------------------------------------------------------------------------------------------- the suite

describe('retention', () => {
  let platforms: TestPlatforms;
  let instances: MediumContext[];
  let pool: Pool;

  /** Instances that prune only when the test says: their own loop waits a day after its first, empty round. */
  // The example handlers write the processed_event rows that retention prunes.
  const idleEnv = () => ({
    ...notificationsOnly(platforms.env),
    EXAMPLE_HANDLERS: 'true',
    RETENTION_BATCH_SIZE: String(BATCH),
    RETENTION_INTERVAL_MS: String(DAY_MS),
  });
  const prunerOf = (ctx: MediumContext) => ctx.get(RetentionPruner);

  beforeAll(async () => {
    medium = await startMedium({}, { fake: false, replicas: 0, ownDatabase: true });
    platforms = medium.platforms;
    notify = new MediumNotify(platforms);
    instances = [await instance(idleEnv()), await instance(idleEnv())];
    pool = medium.pool;
  });
  afterAll(async () => {
    await Promise.all(instances?.map((i) => i.close()) ?? []);
    await medium?.close();
  });

  it('should prune only what is older than its horizon, and never an unpublished event or a payment key', async () => {
    const older = newPayments(6, 'RO');
    await pay(instances[0], older, 2);
    await eventsSettled(
      pool,
      older.map((p) => p.orderNo),
    );
    // Events the relay could not finish, long ago: one backing off after failed attempts, one
    // dead-lettered, which a consumer had processed all the same (its publish was confirmed too late).
    const stuck = uniqueId('RS');
    const longAgo = new Date(Date.now() - 400 * DAY_MS);
    const [backingOff, deadLettered] = [randomUUID(), randomUUID()];
    await pool.query(
      `INSERT INTO outbox_event (event_id, type, order_no, payload, created_at, attempts, next_attempt_at, dead_lettered_at) VALUES ?`,
      [
        [
          [backingOff, 'payment.succeeded', `${stuck}1`, '{}', longAgo, 3, new Date(Date.now() + DAY_MS), null],
          [deadLettered, 'payment.succeeded', `${stuck}2`, '{}', longAgo, 10, longAgo, longAgo],
        ],
      ],
    );
    await pool.query('INSERT INTO processed_event (consumer, event_id, processed_at) VALUES (?, ?, ?)', [
      EXAMPLE_CONSUMERS[0],
      deadLettered,
      longAgo,
    ]);
    await sleep(5);
    const cutoff = new Date();
    await sleep(5);
    const newer = newPayments(6, 'RN');
    await pay(instances[0], newer, 2);
    await eventsSettled(
      pool,
      newer.map((p) => p.orderNo),
    );

    const orderNos = [...older, ...newer].map((p) => p.orderNo);
    const olderEvents = await eventIdsOf(
      pool,
      older.map((p) => p.orderNo),
    );
    const newerEvents = await eventIdsOf(
      pool,
      newer.map((p) => p.orderNo),
    );
    const callbacksBefore = await rows(pool, 'SELECT * FROM payment_callback ORDER BY id');
    const ordersBefore = await rows(pool, 'SELECT * FROM payment_order WHERE order_no IN (?) ORDER BY order_no', [
      orderNos,
    ]);
    const deliveriesBefore = await rows<DeliveryColumns>(
      pool,
      'SELECT * FROM callback_delivery WHERE order_no IN (?) ORDER BY id',
      [orderNos],
    );
    expect(deliveriesBefore).toHaveLength(24);

    // 30 days after the cutoff: the events' horizon has passed the older payments, the raw bytes' not.
    await pruneUntilDone(prunerOf(instances[0]), new Date(cutoff.getTime() + 30 * DAY_MS));

    expect(
      await eventIdsOf(
        pool,
        older.map((p) => p.orderNo),
      ),
    ).toEqual([]);
    expect(
      (
        await eventIdsOf(
          pool,
          newer.map((p) => p.orderNo),
        )
      ).sort(),
    ).toEqual([...newerEvents].sort());
    expect(
      await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE event_id IN (?)', [[backingOff, deadLettered]]),
    ).toBe(2);
    expect(await count(pool, 'SELECT COUNT(*) FROM processed_event WHERE event_id IN (?)', [olderEvents])).toBe(0);
    expect(await count(pool, 'SELECT COUNT(*) FROM processed_event WHERE event_id IN (?)', [newerEvents])).toBe(
      newerEvents.length * EXAMPLE_CONSUMERS.length,
    );
    expect(await count(pool, 'SELECT COUNT(*) FROM processed_event WHERE event_id = ?', [deadLettered])).toBe(1);
    expect(await rows(pool, 'SELECT * FROM callback_delivery WHERE order_no IN (?) ORDER BY id', [orderNos])).toEqual(
      deliveriesBefore,
    );

    // 180 days after the cutoff: the raw bytes of the older deliveries go, their rows stay.
    const rawNow = new Date(cutoff.getTime() + 180 * DAY_MS);
    await pruneUntilDone(prunerOf(instances[0]), rawNow);

    const deliveriesAfter = await rows<DeliveryColumns>(
      pool,
      'SELECT * FROM callback_delivery WHERE order_no IN (?) ORDER BY id',
      [orderNos],
    );
    const olderOrderNos = new Set(older.map((p) => p.orderNo));
    expect(deliveriesAfter.map((d) => d.id)).toEqual(deliveriesBefore.map((d) => d.id));
    for (const [i, before] of deliveriesBefore.entries()) {
      const after = deliveriesAfter[i];
      if (!olderOrderNos.has(before.order_no)) {
        expect(after).toEqual(before);
        continue;
      }
      expect(after).toEqual({
        ...before,
        raw_body: Buffer.alloc(0),
        // WeChat Pay's signature headers go with the bytes they signed; Alipay's content type stays.
        headers: before.channel === 'WECHATPAY' ? {} : before.headers,
        raw_pruned_at: expect.any(Date),
      });
      expect(before.raw_body.length).toBeGreaterThan(100);
    }
    expect(await rows(pool, 'SELECT * FROM payment_callback ORDER BY id')).toEqual(callbacksBefore);
    expect(await rows(pool, 'SELECT * FROM payment_order WHERE order_no IN (?) ORDER BY order_no', [orderNos])).toEqual(
      ordersBefore,
    );

    // The operators' view says so.
    const prunedRow = deliveriesAfter.find((d) => olderOrderNos.has(d.order_no) && d.channel === 'WECHATPAY')!;
    const keptRow = deliveriesAfter.find((d) => !olderOrderNos.has(d.order_no))!;
    const queries = instances[0].get(AdminQueries);
    expect(await queries.delivery(String(prunedRow.id), AdminRole.Viewer)).toMatchObject({
      id: String(prunedRow.id),
      outcome: prunedRow.outcome,
      transactionId: prunedRow.transaction_id,
      headers: {},
      rawBody: null,
      rawBodyBase64: null,
      rawPrunedAt: rawNow.toISOString(),
    });
    expect(await queries.delivery(String(keptRow.id), AdminRole.Admin)).toMatchObject({
      rawBodyBase64: keptRow.raw_body.toString('base64'),
      rawPrunedAt: null,
    });
  });

  it('should let two instances prune together without failing or counting a row twice', async () => {
    const payments = newPayments(40, 'RC');
    await pay(instances[0], payments, 3);
    const orderNos = payments.map((p) => p.orderNo);
    await eventsSettled(pool, orderNos);
    const eventIds = await eventIdsOf(pool, orderNos);
    const before = await tableTotals(pool);

    const now = new Date(Date.now() + 365 * DAY_MS);
    const [a, b] = await Promise.all(instances.map((instance) => pruneUntilDone(prunerOf(instance), now)));

    const after = await tableTotals(pool);
    expect({
      callback_delivery: a.callback_delivery + b.callback_delivery,
      outbox_event: a.outbox_event + b.outbox_event,
      processed_event: a.processed_event + b.processed_event,
    }).toEqual({
      callback_delivery: before.callback_delivery - after.callback_delivery,
      outbox_event: before.outbox_event - after.outbox_event,
      processed_event: before.processed_event - after.processed_event,
    });
    expect(a.callback_delivery + b.callback_delivery).toBeGreaterThanOrEqual(120);
    expect(
      await count(pool, 'SELECT COUNT(*) FROM callback_delivery WHERE order_no IN (?) AND raw_pruned_at IS NULL', [
        orderNos,
      ]),
    ).toBe(0);
    expect(await count(pool, 'SELECT COUNT(*) FROM callback_delivery WHERE order_no IN (?)', [orderNos])).toBe(120);
    expect(await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no IN (?)', [orderNos])).toBe(0);
    expect(await count(pool, 'SELECT COUNT(*) FROM processed_event WHERE event_id IN (?)', [eventIds])).toBe(0);
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE order_no IN (?)', [orderNos])).toBe(40);
  });

  it('should prune by itself in the background while notifications keep being paid', async () => {
    const OLD_DELIVERIES = 20_000;
    const OLD_EVENTS = 2_000;
    const history = uniqueId('RH');
    const recentHistory = uniqueId('RK');
    await seedDeliveries(pool, history, OLD_DELIVERIES, new Date(Date.now() - 200 * DAY_MS));
    await seedPublishedEvents(pool, history, OLD_EVENTS, new Date(Date.now() - 40 * DAY_MS));
    // Inside the horizons (180 and 30 days): kept.
    await seedDeliveries(pool, recentHistory, 100, new Date(Date.now() - 170 * DAY_MS));
    await seedPublishedEvents(pool, recentHistory, 100, new Date(Date.now() - 20 * DAY_MS));
    const historyLeft = () =>
      count(pool, 'SELECT COUNT(*) FROM callback_delivery WHERE order_no LIKE ? AND raw_pruned_at IS NULL', [
        `${history}%`,
      ]);

    const pruning = await instance({
      ...notificationsOnly(platforms.env),
      EXAMPLE_HANDLERS: 'true',
      RETENTION_BATCH_SIZE: '100',
      RETENTION_BATCH_PAUSE_MS: '20',
      RETENTION_INTERVAL_MS: '200',
    });
    const paidDuringPrune: Payment[] = [];
    const allPaid: Payment[] = [];
    try {
      await eventually('the prune to start', async () => (await historyLeft()) < OLD_DELIVERIES);
      while ((await historyLeft()) > 0) {
        const [payment] = newPayments(1, 'RP');
        await pay(pruning, [payment], 2);
        allPaid.push(payment);
        // Sent after the prune began, acked before it ended.
        if ((await historyLeft()) > 0) paidDuringPrune.push(payment);
      }
      await eventually(
        'the old events and their processed records pruned',
        async () =>
          (await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no LIKE ?', [`${history}%`])) === 0 &&
          (await count(
            pool,
            'SELECT COUNT(*) FROM processed_event p WHERE NOT EXISTS (SELECT 1 FROM outbox_event o WHERE o.event_id = p.event_id) AND p.processed_at < ?',
            [new Date(Date.now() - 30 * DAY_MS)],
          )) === 0,
      );
      const allOrderNos = allPaid.map((p) => p.orderNo);
      await eventsSettled(pool, allOrderNos);

      expect(paidDuringPrune.length).toBeGreaterThan(0);
      expect(
        await count(pool, "SELECT COUNT(*) FROM payment_order WHERE order_no IN (?) AND status = 'PAID'", [
          allOrderNos,
        ]),
      ).toBe(allPaid.length);
      expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE order_no IN (?)', [allOrderNos])).toBe(
        allPaid.length,
      );
      expect(
        await count(pool, 'SELECT COUNT(*) FROM callback_delivery WHERE order_no IN (?) AND raw_pruned_at IS NULL', [
          allOrderNos,
        ]),
      ).toBe(allPaid.length * 2);
      expect(await count(pool, 'SELECT COUNT(*) FROM callback_delivery WHERE order_no LIKE ?', [`${history}%`])).toBe(
        OLD_DELIVERIES,
      );
      expect(
        await count(pool, 'SELECT COUNT(*) FROM callback_delivery WHERE order_no LIKE ? AND raw_pruned_at IS NULL', [
          `${recentHistory}%`,
        ]),
      ).toBe(100);
      expect(await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no LIKE ?', [`${recentHistory}%`])).toBe(
        100,
      );
      expect(
        await count(
          pool,
          'SELECT COUNT(*) FROM processed_event p JOIN outbox_event o ON o.event_id = p.event_id WHERE o.order_no LIKE ?',
          [`${recentHistory}%`],
        ),
      ).toBe(100 * EXAMPLE_CONSUMERS.length);
      // One registry for the process's instances, as for the app's replicas in one process.
      expect(await prunedMetric('callback_delivery')).toBeGreaterThanOrEqual(OLD_DELIVERIES);
      expect(await prunedMetric('outbox_event')).toBeGreaterThanOrEqual(OLD_EVENTS);
      expect(await prunedMetric('processed_event')).toBeGreaterThanOrEqual(OLD_EVENTS * EXAMPLE_CONSUMERS.length);
    } finally {
      await pruning.close();
    }
  });
});

async function prunedMetric(table: string): Promise<number> {
  return (await metricSample(`retention_pruned_rows_total{table="${table}"}`)) ?? 0;
}
