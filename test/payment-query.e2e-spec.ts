import { eventually } from './support/eventually';
import { FakeChannel, FakePlatform } from '../tools/simulator/fake-platform';
import { FakePlatformSuite, startFakePlatformSuite } from './support/fake-platform-suite';
import { OrderEffects } from './support/order-effects';
import { TestClient, TestPlatforms, uniqueId } from './support/test-app';

/**
 * The active query as an operator sees it: the admin order view lists the queries the worker made.
 * What the query worker does (the schedule, the races with notifications, the answers it refuses, a
 * backlog after an outage) is in test/medium/payment-query.medium-spec.ts.
 */
const SCHEDULE_SECONDS = [1, 2, 3];

let platforms: TestPlatforms;
let fake: FakePlatform;
let client: TestClient;
let effects: OrderEffects;
let suite: FakePlatformSuite;

beforeAll(async () => {
  suite = await startFakePlatformSuite({ hangMs: 1500 });
  ({ platforms, fake } = suite);
  const app = await suite.startApp({
    ...suite.env,
    PAYMENT_QUERY_SCHEDULE_SECONDS: SCHEDULE_SECONDS.join(','),
    PAYMENT_QUERY_POLL_INTERVAL_MS: '100',
    // In a full run, the WAIT_PAY orders earlier suites left are due too: work through them quickly.
    PAYMENT_QUERY_RATE_PER_SECOND: '1000',
    PAYMENT_QUERY_CONCURRENCY: '16',
  });
  client = suite.clientOf(app);
  effects = new OrderEffects(suite.pool);
});

afterAll(() => suite?.close());

async function register(orderNo: string, amount: number, channel: FakeChannel): Promise<void> {
  expect((await client.registerOrder({ orderNo, amount, channel })).status).toBe(201);
}

const view = async (orderNo: string) =>
  (await client.admin('GET', `/admin/orders/${orderNo}`, platforms.admins.viewer)).json().channelCalls as unknown;

it('should list the queries in the admin order view: a paid answer and each step of one that found nothing', async () => {
  const paid = { orderNo: uniqueId('QV'), transactionId: uniqueId('T') };
  const notFound = uniqueId('QF'); // no trade at WeChat
  await register(paid.orderNo, 2500, 'WECHATPAY');
  await register(notFound, 100, 'WECHATPAY');
  fake.payTrade({ channel: 'WECHATPAY', outTradeNo: paid.orderNo, transactionId: paid.transactionId, amount: 2500 });
  await eventually(`order ${paid.orderNo} to be PAID`, async () => (await effects.status(paid.orderNo)) === 'PAID');
  await eventually(
    `${SCHEDULE_SECONDS.length} queries of ${notFound}`,
    async () => (await effects.channelCalls(notFound, 'QUERY')).length >= SCHEDULE_SECONDS.length,
  );

  const answer = await client.admin('GET', `/admin/orders/${paid.orderNo}`, platforms.admins.viewer);

  expect(answer.status).toBe(200);
  expect(answer.json().channelCalls).toEqual([
    {
      request: 'QUERY',
      channel: 'WECHATPAY',
      merchantId: platforms.wechatpay.mchid,
      outcome: 'PAID',
      transactionId: paid.transactionId,
      detail: 'PAID',
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    },
  ]);
  expect(await view(notFound)).toEqual(
    Array(SCHEDULE_SECONDS.length).fill(
      expect.objectContaining({
        request: 'QUERY',
        channel: 'WECHATPAY',
        merchantId: platforms.wechatpay.mchid,
        outcome: 'NOT_FOUND',
        transactionId: null,
      }),
    ),
  );
});
