import { Pool } from 'mysql2/promise';
import { eventually, sleep } from './support/eventually';
import { FakePlatform } from '../tools/simulator/fake-platform';
import { OrderEffects } from './support/order-effects';
import {
  createTestPlatforms,
  fakePlatformOptions,
  RunningApp,
  startApp,
  TestClient,
  testDatabasePool,
  TestPlatforms,
  uniqueId,
} from './support/test-app';

/**
 * The query schedule after an outage: when no instance ran while several ages passed, the order is asked once for
 * all of them, then at the next age still ahead. An instance registers the order and stops before its first age;
 * another starts once three ages have passed.
 */
const SCHEDULE_SECONDS = [2, 3, 4, 8];

let platforms: TestPlatforms;
let fake: FakePlatform;
let pool: Pool;
let effects: OrderEffects;
let env: Record<string, string>;
let running: RunningApp | undefined;

beforeAll(async () => {
  platforms = await createTestPlatforms();
  fake = await FakePlatform.start({ ...fakePlatformOptions(platforms), hangMs: 1500 });
  env = {
    ...platforms.env,
    ...fake.apiEnv,
    PAYMENT_QUERY_SCHEDULE_SECONDS: SCHEDULE_SECONDS.join(','),
    PAYMENT_QUERY_POLL_INTERVAL_MS: '100',
    // In a full run, the WAIT_PAY orders earlier suites left are due too: work through them quickly.
    PAYMENT_QUERY_RATE_PER_SECOND: '1000',
    PAYMENT_QUERY_CONCURRENCY: '16',
  };
  pool = testDatabasePool();
  effects = new OrderEffects(pool);
});

afterAll(async () => {
  await running?.close();
  await fake?.close();
  await pool?.end();
});

async function untilAge(registeredAt: Date, seconds: number): Promise<void> {
  await sleep(Math.max(0, registeredAt.getTime() + seconds * 1000 - Date.now()));
}

it('should ask once for the ages missed while no instance ran, then at the next age ahead only', async () => {
  running = await startApp(env);
  const orderNo = uniqueId('QB');
  expect((await new TestClient(running.url, platforms).registerOrder({ orderNo, amount: 600 })).status).toBe(201);
  fake.openTrade({ channel: 'WECHATPAY', outTradeNo: orderNo, amount: 600 });
  await running.close();
  running = undefined;
  const registeredAt = (await effects.order(orderNo))!.created_at as Date;
  // The premise: nothing asked before the outage began.
  expect(fake.tradeCallsFor(orderNo)).toEqual([]);

  await untilAge(registeredAt, SCHEDULE_SECONDS[2] + 0.5); // ages 2, 3 and 4 pass with no instance running
  running = await startApp(env);
  await eventually(`the query of ${orderNo} after the outage`, () => fake.tradeQueriesFor(orderNo) >= 2, 30_000);
  await untilAge(registeredAt, SCHEDULE_SECONDS[3] + 1.5);

  // Asked once at each of the two channels for the backlog, then once at each at the age of 8 s.
  expect(fake.tradeQueriesFor(orderNo, 'WECHATPAY')).toBe(2);
  expect(fake.tradeQueriesFor(orderNo, 'ALIPAY')).toBe(2);
  const calls = await effects.channelCalls(orderNo, 'QUERY');
  expect(calls.map((c) => `${c.channel} ${c.outcome}`).sort()).toEqual([
    'ALIPAY NOT_FOUND',
    'ALIPAY NOT_FOUND',
    'WECHATPAY NOT_PAID',
    'WECHATPAY NOT_PAID',
  ]);
  const ages = calls.map((c) => c.createdAt.getTime() - registeredAt.getTime()).sort((a, b) => a - b);
  expect(ages[2]).toBeGreaterThanOrEqual(SCHEDULE_SECONDS[3] * 1000);
  expect(await effects.status(orderNo)).toBe('WAIT_PAY');
});
