import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Type } from '@nestjs/common';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { Channel } from '../../src/domain/notification';
import { AfterPaymentExamplesModule } from '../../src/events/after-payment/after-payment-examples.module';
import { listDeadLetters } from '../../src/events/dead-letters.queries';
import { replayDeadLetters } from '../../src/events/dead-letters.repository';
import { HandlerRetryWorker } from '../../src/events/subscribers/handler-retry.worker';
import { OrderModule } from '../../src/order/order.module';
import { SettlementModule } from '../../src/settlement/settlement.module';
import {
  EXAMPLE_CONSUMERS,
  ExchangeTap,
  handlerQueuesConsumed,
  TEST_RABBITMQ_URL,
  testExchange,
} from '../support/amqp-tap';
import { eventually } from '../support/eventually';
import { Factories } from '../support/factories';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { count, notificationsOnly, TestPlatforms } from '../support/test-app';
import {
  BrokenHandler,
  BrokenHandlerModule,
  createTestHandlerEffectTable,
  FlakyHandler,
  FlakyHandlerModule,
  TEST_HANDLER_EFFECT_TABLE,
} from '../support/test-handlers';
import { roundsFrom } from '../support/worker-rounds';
import { handledEverythingBefore } from '../support/handlers-drained';

/**
 * Event handlers retried on transient failures and dead-lettered after HANDLER_MAX_ATTEMPTS, as
 * services: payments settled by the settlement use case write their events, the outbox relay
 * delivers them in process (embedded) or through the real RabbitMQ (broker), and the handlers'
 * effects, handler_retry and processed_event rows are counted per event. The operator's CLI
 * (npm run dead-letters) runs against the same database. The admin
 * API's dead-letter list and replay (roles, audit) are in test/handler-retries.e2e-spec.ts.
 */
const EXAMPLE_EFFECT_TABLES = ['points_grant', 'coupon_issue', 'shipment_request'];
const TEST_CONSUMERS = [FlakyHandler.CONSUMER, BrokenHandler.CONSUMER];

let medium: Medium;
let platforms: TestPlatforms;
let pool: Pool;

beforeAll(async () => {
  // The retry worker and the relay take every due row of the database: other suites' would come first.
  medium = await startMedium({}, { fake: false, replicas: 0, ownDatabase: true });
  ({ platforms, pool } = medium);
  await createTestHandlerEffectTable(pool);
});

afterAll(async () => {
  await medium?.close();
});

/** `key → number of rows` for the rows of `sql`, which must select `k` and `n`. */
async function rowsPerKey(sql: string, params: unknown[]): Promise<Record<string, number>> {
  const [rows] = await pool.query<RowDataPacket[]>(sql, params);
  return Object.fromEntries(rows.map((r) => [String(r.k), Number(r.n)]));
}

function once(keys: string[]): Record<string, number> {
  return Object.fromEntries(keys.map((k) => [k, 1]));
}

async function effectsPerOrder(table: string, orderNos: string[], consumer?: string) {
  const byConsumer = consumer ? ' AND consumer = ?' : '';
  return rowsPerKey(
    `SELECT order_no AS k, COUNT(*) AS n FROM ${table} WHERE order_no IN (?)${byConsumer} GROUP BY order_no`,
    consumer ? [orderNos, consumer] : [orderNos],
  );
}

async function exampleEffectsComplete(orderNos: string[]): Promise<boolean> {
  for (const table of EXAMPLE_EFFECT_TABLES) {
    const total = await count(pool, `SELECT COUNT(*) FROM ${table} WHERE order_no IN (?)`, [orderNos]);
    if (total < orderNos.length) return false;
  }
  return true;
}

async function expectExampleEffectsOncePerOrder(orderNos: string[]): Promise<void> {
  for (const table of EXAMPLE_EFFECT_TABLES) {
    expect({ table, effects: await effectsPerOrder(table, orderNos) }).toEqual({
      table,
      effects: once(orderNos),
    });
  }
}

/** Registers and pays each order (signed notifications, settled); returns `orderNo → eventId` of its payment.succeeded event. */
async function payOrders(ctx: MediumContext, howMany: number): Promise<Map<string, string>> {
  const make = new Factories(ctx, platforms);
  const orderNos: string[] = [];
  for (let i = 0; i < howMany; i++) orderNos.push((await make.paidOrder(Channel.Wechatpay, 1234)).orderNo);
  const [rows] = await pool.query<RowDataPacket[]>(
    `SELECT order_no, event_id FROM outbox_event WHERE order_no IN (?) AND type = 'payment.succeeded'`,
    [orderNos],
  );
  expect(rows).toHaveLength(howMany);
  return new Map(orderNos.map((o) => [o, String(rows.find((r) => r.order_no === o)!.event_id)]));
}

/**
 * Waits until no retry of `eventIds` for `consumer` is waiting out a backoff (each is due, dead or
 * gone), then for a whole round of `ctx`'s retry worker begun after that: any retry of them that
 * could still run has run by then.
 */
async function retriesHadTheirChance(ctx: MediumContext, consumer: string, eventIds: string[]): Promise<void> {
  await eventually(
    'no retry to wait out a backoff',
    async () =>
      (await count(
        pool,
        'SELECT COUNT(*) FROM handler_retry WHERE consumer = ? AND event_id IN (?) AND next_attempt_at > UTC_TIMESTAMP(3)',
        [consumer, eventIds],
      )) === 0,
  );
  await roundsFrom(ctx.get(HandlerRetryWorker))('the retries were due');
}

function retryEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...notificationsOnly(platforms.env),
    OUTBOX_POLL_INTERVAL_MS: '50',
    RETRY_BASE_DELAY_MS: '50',
    RETRY_MAX_DELAY_MS: '200',
    ...extra,
  };
}

/** The settlement, the relay and the handlers: the example ones (EXAMPLE_HANDLERS=true) and `handlers`. */
const withHandlers = (handlers: Type, env: Record<string, string>) =>
  medium.another(() => env, [OrderModule, SettlementModule, AfterPaymentExamplesModule, handlers]);

const MODES = [
  { mode: 'embedded', broker: false },
  { mode: 'broker', broker: true },
];

describe.each(MODES)('handler retries and dead letters ($mode)', ({ broker }) => {
  let exchange: string;
  let tap: ExchangeTap | undefined;

  beforeAll(async () => {
    if (broker) {
      exchange = testExchange();
      tap = await ExchangeTap.bind(exchange);
    }
  });
  afterAll(async () => {
    await tap?.close([...EXAMPLE_CONSUMERS, ...TEST_CONSUMERS]);
  });

  async function start(module: Type, consumer: string, extraEnv: Record<string, string> = {}) {
    const brokerEnv: Record<string, string> = broker
      ? { RABBITMQ_URL: TEST_RABBITMQ_URL, RABBITMQ_EXCHANGE: exchange }
      : {};
    const ctx = await withHandlers(module, retryEnv({ ...brokerEnv, ...extraEnv }));
    if (broker)
      await eventually('the handler queues to be consumed', () =>
        handlerQueuesConsumed(exchange, [...EXAMPLE_CONSUMERS, consumer]),
      );
    return ctx;
  }

  describe('a handler that fails on its first two attempts', () => {
    const ORDERS = 5;
    let ctx: MediumContext;

    beforeAll(async () => {
      FlakyHandler.attempts.clear();
      ctx = await start(FlakyHandlerModule, FlakyHandler.CONSUMER);
    });
    afterAll(async () => {
      await ctx?.close();
    });

    it('should have its effect exactly once per order after the retries, without holding up the other handlers', async () => {
      const events = await payOrders(ctx, ORDERS);
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
          (await exampleEffectsComplete(orderNos)),
      );
      // Nothing may still be on its way: a late retry has run once the retry worker finished a whole
      // round after the last retry row was gone, and a redelivery is handled before a payment made now.
      await roundsFrom(ctx.get(HandlerRetryWorker))('the last retry row was gone');
      const [marker] = (await payOrders(ctx, 1)).keys();
      await handledEverythingBefore([ctx], pool, marker, [...EXAMPLE_EFFECT_TABLES, TEST_HANDLER_EFFECT_TABLE]);

      expect(await effectsPerOrder(TEST_HANDLER_EFFECT_TABLE, orderNos, FlakyHandler.CONSUMER)).toEqual(once(orderNos));
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
          `SELECT event_id AS k, COUNT(*) AS n FROM processed_event WHERE consumer = ? AND event_id IN (?) GROUP BY event_id`,
          [FlakyHandler.CONSUMER, eventIds],
        ),
      ).toEqual(once(eventIds));
      await expectExampleEffectsOncePerOrder(orderNos);
      if (tap) expect(eventIds.filter((id) => !tap!.distinctMessageIds().has(id))).toEqual([]);
    });
  });

  describe('a handler that always fails, with HANDLER_MAX_ATTEMPTS 3', () => {
    let ctx: MediumContext;
    let dataSource: DataSource;
    let events: Map<string, string>;

    beforeAll(async () => {
      BrokenHandler.broken = true;
      BrokenHandler.attempts.clear();
      ctx = await start(BrokenHandlerModule, BrokenHandler.CONSUMER, { HANDLER_MAX_ATTEMPTS: '3' });
      dataSource = ctx.get(DataSource);
    });
    afterAll(async () => {
      BrokenHandler.broken = true;
      await ctx?.close();
    });

    it('should dead-letter the event for that handler after 3 attempts and leave the other handlers unaffected', async () => {
      events = await payOrders(ctx, 2);
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
      await eventually('the example handlers to finish', () => exampleEffectsComplete(orderNos));
      // A dead letter is final: no retry runs after it.
      await retriesHadTheirChance(ctx, BrokenHandler.CONSUMER, eventIds);

      expect(
        await rowsPerKey(
          `SELECT event_id AS k, attempts AS n FROM handler_retry WHERE consumer = ? AND event_id IN (?) AND dead_lettered_at IS NOT NULL`,
          [BrokenHandler.CONSUMER, eventIds],
        ),
      ).toEqual(Object.fromEntries(eventIds.map((id) => [id, 3])));
      expect(eventIds.map((id) => BrokenHandler.attempts.get(id))).toEqual([3, 3]);
      expect(await effectsPerOrder(TEST_HANDLER_EFFECT_TABLE, orderNos, BrokenHandler.CONSUMER)).toEqual({});
      expect(
        await count(pool, `SELECT COUNT(*) FROM processed_event WHERE consumer = ? AND event_id IN (?)`, [
          BrokenHandler.CONSUMER,
          eventIds,
        ]),
      ).toBe(0);
      await expectExampleEffectsOncePerOrder(orderNos);

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
      const handled = (eventId: string) => async () =>
        (await count(pool, `SELECT COUNT(*) FROM handler_retry WHERE consumer = ? AND event_id = ?`, [
          BrokenHandler.CONSUMER,
          eventId,
        ])) === 0;

      expect(await replayDeadLetters(dataSource, [firstEvent])).toBe(1);
      await eventually('the replayed event to be handled', handled(firstEvent));
      await retriesHadTheirChance(ctx, BrokenHandler.CONSUMER, [firstEvent, secondEvent]);

      expect(await effectsPerOrder(TEST_HANDLER_EFFECT_TABLE, [first, second], BrokenHandler.CONSUMER)).toEqual({
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
      await retriesHadTheirChance(ctx, BrokenHandler.CONSUMER, [firstEvent, secondEvent]);
      expect(await effectsPerOrder(TEST_HANDLER_EFFECT_TABLE, [first], BrokenHandler.CONSUMER)).toEqual({
        [first]: 1,
      });
      expect(BrokenHandler.attempts.get(firstEvent)).toBe(4);

      // The second one too (the admin API's replay is the same call), once.
      expect(await replayDeadLetters(dataSource, [secondEvent])).toBe(1);
      await eventually('the second replayed event to be handled', handled(secondEvent));
      expect(await effectsPerOrder(TEST_HANDLER_EFFECT_TABLE, [first, second], BrokenHandler.CONSUMER)).toEqual(
        once([first, second]),
      );
      expect(await replayDeadLetters(dataSource, [secondEvent])).toBe(0);
      await expectExampleEffectsOncePerOrder([first, second]);
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
    ['-r', 'ts-node/register/transpile-only', join(__dirname, '../../src/events/dead-letters.cli.ts'), ...args],
    {
      cwd: join(__dirname, '../..'),
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
  let ctx: MediumContext;
  let orderNo: string;
  let eventId: string;

  beforeAll(async () => {
    BrokenHandler.broken = true;
    ctx = await medium.another(
      () => retryEnv({ HANDLER_MAX_ATTEMPTS: '2' }),
      [OrderModule, SettlementModule, BrokenHandlerModule],
    );
    [[orderNo, eventId]] = [...(await payOrders(ctx, 1)).entries()];
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
    await ctx?.close();
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
    expect(await effectsPerOrder(TEST_HANDLER_EFFECT_TABLE, [orderNo], BrokenHandler.CONSUMER)).toEqual({
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
