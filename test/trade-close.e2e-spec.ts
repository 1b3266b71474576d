import { FakePlatformSuite, startFakePlatformSuite } from './support/fake-platform-suite';
import { OrderEffects } from './support/order-effects';
import { TestClient, uniqueId } from './support/test-app';

/**
 * POST /payment-orders/:orderNo/close and an order's channel fields as a caller sees them (status codes,
 * bodies). What the close does at the channel and here is in test/medium/trade-close.medium-spec.ts.
 */
let suite: FakePlatformSuite;
let client: TestClient;

beforeAll(async () => {
  suite = await startFakePlatformSuite();
  client = suite.clientOf(await suite.startApp({ ...suite.env, PAYMENT_QUERY_SCHEDULE_SECONDS: '3600' }));
});

afterAll(() => suite?.close());

const close = (orderNo: string) => client.api('POST', `/payment-orders/${orderNo}/close`);

describe('POST /payment-orders/:orderNo/close', () => {
  it('should answer 200 with what the channel said (again for a closed order), 409 for a trade paid there, 503 unconfirmed', async () => {
    const [open, paid, unconfirmed] = [uniqueId('C'), uniqueId('C'), uniqueId('C')];
    for (const orderNo of [open, paid, unconfirmed]) {
      expect((await client.registerOrder({ orderNo, amount: 1800, channel: 'WECHATPAY' })).status).toBe(201);
      suite.fake.openTrade({ channel: 'WECHATPAY', outTradeNo: orderNo, amount: 1800 });
    }
    suite.fake.payTrade({ channel: 'WECHATPAY', outTradeNo: paid, transactionId: uniqueId('T'), amount: 1800 });
    suite.fake.scriptTradeClose(unconfirmed, 'server-error');

    const answers = [await close(open), await close(open), await close(paid), await close(unconfirmed)];

    expect(answers.map((a) => a.status)).toEqual([200, 200, 409, 503]);
    const channelClose = [{ channel: 'WECHATPAY', merchantId: suite.platforms.wechatpay.mchid, outcome: 'CLOSED' }];
    expect(answers[1].json()).toMatchObject({ orderNo: open, status: 'CLOSED', channelClose });
    expect(answers[2].json()).toMatchObject({ statusCode: 409, error: 'OrderConflict' });
    expect(answers[2].json().message).toContain('paid at the channel');
    expect(answers[3].json()).toMatchObject({ statusCode: 503 });
  });
});

describe('POST /payment-orders with a channel', () => {
  it.each<[string, Record<string, unknown>]>([
    ['an unknown channel', { channel: 'PAYPAL' }],
    ['a channel that is not a string', { channel: 7 }],
    ['a merchantId without a channel', { merchantId: '1900009191' }],
    ['a merchantId that is no account of the channel', { channel: 'WECHATPAY', merchantId: '1111111111' }],
    ["another channel's account", { channel: 'WECHATPAY', merchantId: '2021000117600001' }],
    ['an Alipay app id that is not ours', { channel: 'ALIPAY', merchantId: '2021000117609999' }],
    ['an empty merchantId', { channel: 'WECHATPAY', merchantId: '' }],
  ])('should refuse %s with 400 and write nothing', async (_, fields) => {
    const orderNo = uniqueId('C');

    const answer = await client.api('POST', '/payment-orders', {
      ...{ orderNo, userId: 'u-1', amount: 700, currency: 'CNY' },
      ...fields,
    });

    expect(answer.status).toBe(400);
    expect(answer.json()).toMatchObject({ statusCode: 400, error: expect.any(String) });
    expect(answer.json().message).toMatch(/channel|merchantId/);
    expect(Object.values(await new OrderEffects(suite.pool).everythingAbout(orderNo))).toEqual(Array(7).fill(0));
    // Nothing lingers: the same order number registers cleanly afterwards.
    expect((await client.registerOrder({ orderNo, amount: 700 })).status).toBe(201);
  });
});
