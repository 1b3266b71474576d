import { Pool } from 'mysql2/promise';
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
import { BrokenHandler, BrokenHandlerModule, createTestHandlerEffectTable } from './support/test-handlers';
import { eventually } from './support/eventually';

/**
 * The admin API's dead letters (the console's dead-letter page): a viewer lists them, may not
 * replay one; an admin replays it, audited, once. How handlers are retried and dead-lettered, and
 * the operator's CLI, are in test/medium/handler-retries.medium-spec.ts.
 */
let platforms: TestPlatforms;
let pool: Pool;
let running: RunningApp;
let client: TestClient;

beforeAll(async () => {
  platforms = await createTestPlatforms();
  pool = testDatabasePool();
  await createTestHandlerEffectTable(pool);
  BrokenHandler.broken = true;
  const env = { ...platforms.env, OUTBOX_POLL_INTERVAL_MS: '50', RETRY_BASE_DELAY_MS: '50', HANDLER_MAX_ATTEMPTS: '2' };
  running = await startApp(env, [BrokenHandlerModule]);
  client = new TestClient(running.url, platforms);
});

afterAll(async () => {
  BrokenHandler.broken = true;
  await running?.close();
  await pool?.end();
});

it('should list a dead letter for a viewer, replay it for an admin only (audited, once), and answer 404 after', async () => {
  const orderNo = uniqueId('H');
  expect((await client.registerOrder({ orderNo, amount: 1234 })).status).toBe(201);
  const payment = client.wechatpayPayment({ outTradeNo: orderNo, transactionId: uniqueId('T'), total: 1234 });
  expect((await client.postWechatpay(payment)).status).toBe(204);
  type Letter = { eventId: string; orderNo: string; stage: string; attempts: number };
  const letters = async () =>
    (await client.admin('GET', '/admin/dead-letters', platforms.admins.viewer))
      .json<{ items: Letter[] }>()
      .items.filter((l) => l.orderNo === orderNo);
  await eventually('the event to be dead-lettered', async () => (await letters()).length === 1);
  const [{ eventId }] = await letters();
  const effects = `SELECT COUNT(*) FROM test_handler_effect WHERE consumer = '${BrokenHandler.CONSUMER}' AND order_no = ?`;

  expect(await letters()).toEqual([expect.objectContaining({ stage: BrokenHandler.CONSUMER, attempts: 2 })]);
  const replay = (token: string) => client.admin('POST', `/admin/dead-letters/${eventId}/replay`, token);
  expect((await replay(platforms.admins.viewer)).status).toBe(403);
  expect(await letters()).toHaveLength(1);
  BrokenHandler.broken = false;
  const replayed = await replay(platforms.admins.admin);
  expect([replayed.status, replayed.json()]).toEqual([200, { eventId, replayed: 1 }]);
  const audited = "SELECT COUNT(*) FROM admin_audit WHERE action = 'DEAD_LETTER_REPLAYED' AND target = ?";
  expect(await count(pool, audited, [`event:${eventId}`])).toBe(1);
  await eventually('the handler to run on the replayed event', async () => (await count(pool, effects, [orderNo])) > 0);
  expect(await count(pool, effects, [orderNo])).toBe(1);
  expect((await replay(platforms.admins.admin)).status).toBe(404);
});
