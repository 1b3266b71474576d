import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Type } from '@nestjs/common';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { listDeadLetters, replayDeadLetters } from '../src/events/dead-letters';
import {
  EXAMPLE_CONSUMERS,
  ExchangeTap,
  handlerQueuesConsumed,
  TEST_RABBITMQ_URL,
  testExchange,
} from './support/amqp-tap';
import {
  count,
  createTestPlatforms,
  RunningApp,
  startApp,
  TestClient,
  testDatabasePool,
  TestPlatforms,
  uniqueId,
} from './support/test-app';
import {
  BrokenHandler,
  BrokenHandlerModule,
  createTestHandlerEffectTable,
  FlakyHandler,
  FlakyHandlerModule,
  TEST_HANDLER_EFFECT_TABLE,
} from './support/test-handlers';
import { eventually, sleep } from './support/eventually';

const EXAMPLE_EFFECT_TABLES = ['points_grant', 'coupon_issue', 'shipment_request'];
const TEST_CONSUMERS = [FlakyHandler.CONSUMER, BrokenHandler.CONSUMER];
/** Well above RETRY_MAX_DELAY_MS plus a poll interval: long enough for any retry that is still due to run. */
const SETTLE_MS = 1000;

/** `key → number of rows` for the rows of `sql`, which must select `k` and `n`. */
async function rowsPerKey(pool: Pool, sql: string, params: unknown[]): Promise<Record<string, number>> {
  const [rows] = await pool.query<RowDataPacket[]>(sql, params);
  return Object.fromEntries(rows.map((r) => [String(r.k), Number(r.n)]));
}

function once(keys: string[]): Record<string, number> {
  return Object.fromEntries(keys.map((k) => [k, 1]));
}

async function effectsPerOrder(pool: Pool, table: string, orderNos: string[], consumer?: string) {
  const byConsumer = consumer ? ' AND consumer = ?' : '';
  return rowsPerKey(
    pool,
    `SELECT order_no AS k, COUNT(*) AS n FROM ${table} WHERE order_no IN (?)${byConsumer} GROUP BY order_no`,
    consumer ? [orderNos, consumer] : [orderNos],
  );
}

async function exampleEffectsComplete(pool: Pool, orderNos: string[]): Promise<boolean> {
  for (const table of EXAMPLE_EFFECT_TABLES) {
    const total = await count(pool, `SELECT COUNT(*) FROM ${table} WHERE order_no IN (?)`, [orderNos]);
    if (total < orderNos.length) return false;
  }
  return true;
}

async function expectExampleEffectsOncePerOrder(pool: Pool, orderNos: string[]): Promise<void> {
  for (const table of EXAMPLE_EFFECT_TABLES) {
    expect({ table, effects: await effectsPerOrder(pool, table, orderNos) }).toEqual({
      table,
      effects: once(orderNos),
    });
  }
}

/** Registers and pays each order; returns `orderNo → eventId` of its payment.succeeded event. */
async function payOrders(pool: Pool, client: TestClient, howMany: number): Promise<Map<string, string>> {
  const orderNos = Array.from({ length: howMany }, () => uniqueId('H'));
  for (const orderNo of orderNos) {
    expect((await client.registerOrder({ orderNo, amount: 1234 })).status).toBe(201);
    const payment = client.wechatpayPayment({ outTradeNo: orderNo, transactionId: uniqueId('T'), total: 1234 });
    expect((await client.postWechatpay(payment)).status).toBe(204);
  }
  const [rows] = await pool.query<RowDataPacket[]>(
    `SELECT order_no, event_id FROM outbox_event WHERE order_no IN (?) AND type = 'payment.succeeded'`,
    [orderNos],
  );
  expect(rows).toHaveLength(howMany);
  return new Map(orderNos.map((o) => [o, String(rows.find((r) => r.order_no === o)!.event_id)]));
}

const MODES = [
  { mode: 'embedded', broker: false },
  { mode: 'broker', broker: true },
];

describe.each(MODES)('handler retries and dead letters ($mode)', ({ broker }) => {
  let platforms: TestPlatforms;
  let pool: Pool;
  let exchange: string;
  let tap: ExchangeTap | undefined;

  beforeAll(async () => {
    platforms = await createTestPlatforms();
    pool = testDatabasePool();
    await createTestHandlerEffectTable(pool);
    if (broker) {
      exchange = testExchange();
      tap = await ExchangeTap.bind(exchange);
    }
  });
  afterAll(async () => {
    await tap?.close([...EXAMPLE_CONSUMERS, ...TEST_CONSUMERS]);
    await pool?.end();
  });

  function appEnv(extra: Record<string, string> = {}): Record<string, string> {
    return {
      ...platforms.env,
      EXAMPLE_HANDLERS: 'true',
      OUTBOX_POLL_INTERVAL_MS: '50',
      RETRY_BASE_DELAY_MS: '50',
      RETRY_MAX_DELAY_MS: '200',
      ...(broker ? { RABBITMQ_URL: TEST_RABBITMQ_URL, RABBITMQ_EXCHANGE: exchange } : {}),
      ...extra,
    };
  }

  async function start(module: Type, consumer: string, extraEnv: Record<string, string> = {}) {
    const running = await startApp(appEnv(extraEnv), [module]);
    if (broker)
      await eventually('the handler queues to be consumed', () =>
        handlerQueuesConsumed(exchange, [...EXAMPLE_CONSUMERS, consumer]),
      );
    return { running, client: new TestClient(running.url, platforms) };
  }

  describe('a handler that fails on its first two attempts', () => {
    const ORDERS = 5;
    let running: RunningApp;
    let client: TestClient;

    beforeAll(async () => {
      FlakyHandler.attempts.clear();
      ({ running, client } = await start(FlakyHandlerModule, FlakyHandler.CONSUMER));
    });
    afterAll(async () => {
      await running?.close();
    });

    it('should have its effect exactly once per order after the retries, without holding up the other handlers', async () => {
      const events = await payOrders(pool, client, ORDERS);
      const orderNos = [...events.keys()];
      const eventIds = [...events.values()];

      await eventually(
        'the flaky handler to succeed on every event and the example handlers to finish',
        async () =>
          (await count(
            pool,
            `SELECT COUNT(*) FROM ${TEST_HANDLER_EFFECT_TABLE} WHERE consumer = ? AND order_no IN (?)`,
            [FlakyHandler.CONSUMER, orderNos],
          )) >= ORDERS &&
          (await count(pool, `SELECT COUNT(*) FROM handler_retry WHERE consumer = ? AND event_id IN (?)`, [
            FlakyHandler.CONSUMER,
            eventIds,
          ])) === 0 &&
          (await exampleEffectsComplete(pool, orderNos)),
      );
      // Nothing may still be on its way: a late retry or redelivery would show up within this.
      await sleep(SETTLE_MS);

      expect(await effectsPerOrder(pool, TEST_HANDLER_EFFECT_TABLE, orderNos, FlakyHandler.CONSUMER)).toEqual(
        once(orderNos),
      );
      // Exactly three: the first delivery (relay or queue) fails and parks the event in handler_retry,
      // the retry worker's first run fails, its second succeeds and deletes the row. A success is
      // recorded in processed_event, so any later delivery would be a duplicate that never calls
      // the handler; a fourth call could only come from a failed run being repeated, which is the bug this guards.
      expect(Object.fromEntries(eventIds.map((id) => [id, FlakyHandler.attempts.get(id)]))).toEqual(
        Object.fromEntries(eventIds.map((id) => [id, FlakyHandler.FAILURES_BEFORE_SUCCESS + 1])),
      );
      expect(
        await count(pool, `SELECT COUNT(*) FROM handler_retry WHERE consumer = ? AND event_id IN (?)`, [
          FlakyHandler.CONSUMER,
          eventIds,
        ]),
      ).toBe(0);
      expect(
        await rowsPerKey(
          pool,
          `SELECT event_id AS k, COUNT(*) AS n FROM processed_event WHERE consumer = ? AND event_id IN (?) GROUP BY event_id`,
          [FlakyHandler.CONSUMER, eventIds],
        ),
      ).toEqual(once(eventIds));
      await expectExampleEffectsOncePerOrder(pool, orderNos);
      if (tap) expect(eventIds.filter((id) => !tap!.distinctMessageIds().has(id))).toEqual([]);
    });
  });

  describe('a handler that always fails, with HANDLER_MAX_ATTEMPTS 3', () => {
    let running: RunningApp;
    let client: TestClient;
    let dataSource: DataSource;
    let events: Map<string, string>;

    beforeAll(async () => {
      BrokenHandler.broken = true;
      BrokenHandler.attempts.clear();
      ({ running, client } = await start(BrokenHandlerModule, BrokenHandler.CONSUMER, { HANDLER_MAX_ATTEMPTS: '3' }));
      dataSource = running.app.get(DataSource);
    });
    afterAll(async () => {
      BrokenHandler.broken = true;
      await running?.close();
    });

    it('should dead-letter the event for that handler after 3 attempts and leave the other handlers unaffected', async () => {
      events = await payOrders(pool, client, 2);
      const orderNos = [...events.keys()];
      const eventIds = [...events.values()];

      await eventually(
        'both events to be dead-lettered for the broken handler',
        async () =>
          (await count(
            pool,
            `SELECT COUNT(*) FROM handler_retry WHERE consumer = ? AND event_id IN (?) AND dead_lettered_at IS NOT NULL`,
            [BrokenHandler.CONSUMER, eventIds],
          )) === eventIds.length,
      );
      await eventually('the example handlers to finish', () => exampleEffectsComplete(pool, orderNos));
      // A dead letter is final: no retry runs after it.
      await sleep(SETTLE_MS);

      expect(
        await rowsPerKey(
          pool,
          `SELECT event_id AS k, attempts AS n FROM handler_retry WHERE consumer = ? AND event_id IN (?) AND dead_lettered_at IS NOT NULL`,
          [BrokenHandler.CONSUMER, eventIds],
        ),
      ).toEqual(Object.fromEntries(eventIds.map((id) => [id, 3])));
      expect(eventIds.map((id) => BrokenHandler.attempts.get(id))).toEqual([3, 3]);
      expect(await effectsPerOrder(pool, TEST_HANDLER_EFFECT_TABLE, orderNos, BrokenHandler.CONSUMER)).toEqual({});
      expect(
        await count(pool, `SELECT COUNT(*) FROM processed_event WHERE consumer = ? AND event_id IN (?)`, [
          BrokenHandler.CONSUMER,
          eventIds,
        ]),
      ).toBe(0);
      await expectExampleEffectsOncePerOrder(pool, orderNos);

      const letters = (await listDeadLetters(dataSource)).filter((l) => eventIds.includes(l.eventId));
      expect(
        letters.map(({ stage, eventId, type, orderNo, attempts }) => ({ stage, eventId, type, orderNo, attempts })),
      ).toEqual(
        expect.arrayContaining(
          orderNos.map((orderNo) => ({
            stage: BrokenHandler.CONSUMER,
            eventId: events.get(orderNo),
            type: 'payment.succeeded',
            orderNo,
            attempts: 3,
          })),
        ),
      );
      expect(letters).toHaveLength(eventIds.length);
      for (const letter of letters) expect(letter.lastError).toContain('broken handler refuses');
    });

    it('should have the effect exactly once after the fix and a replay, and a second replay should change nothing', async () => {
      expect(events).toBeDefined();
      const [[first, firstEvent], [second, secondEvent]] = [...events.entries()];
      BrokenHandler.broken = false;

      expect(await replayDeadLetters(dataSource, [firstEvent])).toBe(1);
      await eventually(
        'the replayed event to be handled',
        async () =>
          (await count(pool, `SELECT COUNT(*) FROM handler_retry WHERE consumer = ? AND event_id = ?`, [
            BrokenHandler.CONSUMER,
            firstEvent,
          ])) === 0,
      );
      await sleep(SETTLE_MS);

      expect(await effectsPerOrder(pool, TEST_HANDLER_EFFECT_TABLE, [first, second], BrokenHandler.CONSUMER)).toEqual({
        [first]: 1,
      });
      expect(
        await count(pool, `SELECT COUNT(*) FROM processed_event WHERE consumer = ? AND event_id = ?`, [
          BrokenHandler.CONSUMER,
          firstEvent,
        ]),
      ).toBe(1);
      expect(BrokenHandler.attempts.get(firstEvent)).toBe(4);
      // Only the named event was put back in line.
      const stillDead = (await listDeadLetters(dataSource)).filter((l) =>
        [firstEvent, secondEvent].includes(l.eventId),
      );
      expect(stillDead.map((l) => l.eventId)).toEqual([secondEvent]);

      expect(await replayDeadLetters(dataSource, [firstEvent])).toBe(0);
      await sleep(SETTLE_MS);
      expect(await effectsPerOrder(pool, TEST_HANDLER_EFFECT_TABLE, [first], BrokenHandler.CONSUMER)).toEqual({
        [first]: 1,
      });
      expect(BrokenHandler.attempts.get(firstEvent)).toBe(4);

      // The admin API (the console's dead-letter page) lists it; a viewer cannot replay it, an admin can,
      // audited, once. It also leaves no dead letter behind for the suites that follow.
      const listed = (await client.admin('GET', '/admin/dead-letters', platforms.admins.viewer)).json<{
        items: Array<{ eventId: string; stage: string; attempts: number }>;
      }>();
      expect(listed.items.filter((l) => [firstEvent, secondEvent].includes(l.eventId))).toEqual([
        expect.objectContaining({ eventId: secondEvent, stage: BrokenHandler.CONSUMER, attempts: 3 }),
      ]);
      const replayPath = `/admin/dead-letters/${secondEvent}/replay`;
      expect((await client.admin('POST', replayPath, platforms.admins.viewer)).status).toBe(403);
      expect((await listDeadLetters(dataSource)).map((l) => l.eventId)).toContain(secondEvent);
      const replayed = await client.admin('POST', replayPath, platforms.admins.admin);
      expect([replayed.status, replayed.json()]).toEqual([200, { eventId: secondEvent, replayed: 1 }]);
      expect(
        await count(pool, "SELECT COUNT(*) FROM admin_audit WHERE action = 'DEAD_LETTER_REPLAYED' AND target = ?", [
          `event:${secondEvent}`,
        ]),
      ).toBe(1);
      await eventually(
        'the second replayed event to be handled',
        async () =>
          (await count(pool, `SELECT COUNT(*) FROM handler_retry WHERE consumer = ? AND event_id = ?`, [
            BrokenHandler.CONSUMER,
            secondEvent,
          ])) === 0,
      );
      expect(await effectsPerOrder(pool, TEST_HANDLER_EFFECT_TABLE, [first, second], BrokenHandler.CONSUMER)).toEqual(
        once([first, second]),
      );
      expect((await client.admin('POST', replayPath, platforms.admins.admin)).status).toBe(404);
      await expectExampleEffectsOncePerOrder(pool, [first, second]);
    });
  });
});

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The operator's CLI as `npm run dead-letters` runs it, from the TypeScript source (no build in tests). */
function deadLettersCli(...args: string[]): Promise<CliRun> {
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', join(__dirname, '../src/events/dead-letters.cli.ts'), ...args],
    {
      cwd: join(__dirname, '..'),
      env: { ...process.env, DATABASE_URL: process.env.DATABASE_URL },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('dead-letters CLI', () => {
  let running: RunningApp;
  let pool: Pool;
  let orderNo: string;
  let eventId: string;

  beforeAll(async () => {
    const platforms = await createTestPlatforms();
    pool = testDatabasePool();
    await createTestHandlerEffectTable(pool);
    BrokenHandler.broken = true;
    running = await startApp(
      {
        ...platforms.env,
        OUTBOX_POLL_INTERVAL_MS: '50',
        RETRY_BASE_DELAY_MS: '50',
        RETRY_MAX_DELAY_MS: '200',
        HANDLER_MAX_ATTEMPTS: '2',
      },
      [BrokenHandlerModule],
    );
    [[orderNo, eventId]] = [...(await payOrders(pool, new TestClient(running.url, platforms), 1)).entries()];
    await eventually(
      'the event to be dead-lettered',
      async () =>
        (await count(pool, `SELECT COUNT(*) FROM handler_retry WHERE event_id = ? AND dead_lettered_at IS NOT NULL`, [
          eventId,
        ])) === 1,
    );
  });
  afterAll(async () => {
    BrokenHandler.broken = true;
    await running?.close();
    await pool?.end();
  });

  it('should list the dead-lettered event with the handler that failed on it', async () => {
    const run = await deadLettersCli('list');

    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const line = run.stdout.split('\n').find((l) => l.includes(eventId));
    expect(line).toBeDefined();
    expect(line).toContain(BrokenHandler.CONSUMER);
    expect(line).toContain(`order=${orderNo}`);
    expect(line).toContain('attempts=2');
    expect(run.stdout).toMatch(/^\d+ dead-lettered$/m);
  });

  it('should replay the named event, which then has its effect exactly once', async () => {
    BrokenHandler.broken = false;

    const run = await deadLettersCli('replay', eventId);

    expect({ code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({
      code: 0,
      stdout: '1 put back in line\n',
      stderr: '',
    });
    await eventually(
      'the replayed event to be handled',
      async () => (await count(pool, `SELECT COUNT(*) FROM handler_retry WHERE event_id = ?`, [eventId])) === 0,
    );
    expect(await effectsPerOrder(pool, TEST_HANDLER_EFFECT_TABLE, [orderNo], BrokenHandler.CONSUMER)).toEqual({
      [orderNo]: 1,
    });
    expect((await deadLettersCli('list')).stdout).not.toContain(eventId);
  });

  it('should refuse an unknown command with exit code 2 and the usage', async () => {
    const run = await deadLettersCli('frobnicate');

    expect(run.code).toBe(2);
    expect(run.stderr).toContain('usage: npm run dead-letters -- list');
    expect(run.stderr).toContain('replay <eventId>');
    expect(run.stdout).toBe('');
  });
});
