import { eventually } from './support/eventually';
import { FakePlatformSuite, startFakePlatformSuite } from './support/fake-platform-suite';
import { OrderEffects } from './support/order-effects';
import { TestClient, uniqueId } from './support/test-app';

/**
 * The active query as an operator sees it: the admin order view lists the queries the worker made.
 * What the query worker does (the schedule, the races with notifications, the answers it refuses, a
 * backlog after an outage) is in test/medium/payment-query.medium-spec.ts.
 */
let suite: FakePlatformSuite;
let client: TestClient;

beforeAll(async () => {
  suite = await startFakePlatformSuite({ hangMs: 1500 });
  const app = await suite.startApp({
    ...suite.env,
    PAYMENT_QUERY_SCHEDULE_SECONDS: '1,2,3',
    PAYMENT_QUERY_POLL_INTERVAL_MS: '100',
    // In a full run, the WAIT_PAY orders earlier suites left are due too: work through them quickly.
    PAYMENT_QUERY_RATE_PER_SECOND: '1000',
    PAYMENT_QUERY_CONCURRENCY: '16',
  });
  client = suite.clientOf(app);
});

afterAll(() => suite?.close());

it('should list the query in the admin order view', async () => {
  const { orderNo, transactionId } = { orderNo: uniqueId('QV'), transactionId: uniqueId('T') };
  expect((await client.registerOrder({ orderNo, amount: 2500, channel: 'WECHATPAY' })).status).toBe(201);
  suite.fake.payTrade({ channel: 'WECHATPAY', outTradeNo: orderNo, transactionId, amount: 2500 });
  const effects = new OrderEffects(suite.pool);
  await eventually(`order ${orderNo} to be PAID`, async () => (await effects.status(orderNo)) === 'PAID');

  const answer = await client.admin('GET', `/admin/orders/${orderNo}`, suite.platforms.admins.viewer);

  expect(answer.status).toBe(200);
  expect(answer.json().channelCalls).toEqual([
    {
      request: 'QUERY',
      channel: 'WECHATPAY',
      merchantId: suite.platforms.wechatpay.mchid,
      outcome: 'PAID',
      transactionId,
      detail: 'PAID',
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    },
  ]);
});
