import { FakePlatformSuite, startFakePlatformSuite } from './support/fake-platform-suite';
import { OrderEffects } from './support/order-effects';
import { count, RunningApp, TestClient, uniqueId } from './support/test-app';

/**
 * POST /payment-orders with `method` as a shop calls it (status codes, bodies, the admin view),
 * against the fake WeChat Pay, and the payment then made at the notify URL the service gave the
 * channel. What the use case does (claims, terms, retries, expiry) is in
 * test/medium/channel-payments.medium-spec.ts.
 */
let suite: FakePlatformSuite;
let app: RunningApp;
let client: TestClient;
let effects: OrderEffects;

beforeAll(async () => {
  suite = await startFakePlatformSuite({ hangMs: 1500 });
  app = await suite.startApp({
    ...suite.env,
    PUBLIC_BASE_URL,
    PAYMENT_QUERY_SCHEDULE_SECONDS: '3600',
    REFUND_REQUEST_TIMEOUT_MS: '1000',
  });
  client = suite.clientOf(app);
  effects = new OrderEffects(suite.pool);
});

afterAll(() => suite?.close());

const OPENID = 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o';
/** Where the channels reach the service; a proxy in front of it would pass the path on unchanged. */
const PUBLIC_BASE_URL = 'https://pay.example.com';

const order = (fields: Record<string, unknown> = {}) => ({
  orderNo: uniqueId('PC'),
  userId: 'u-1',
  amount: 1999,
  currency: 'CNY',
  channel: 'WECHATPAY',
  method: 'JSAPI',
  description: 'A coffee',
  payer: { openid: OPENID },
  ...fields,
});

const post = (body: unknown) => client.api('POST', '/payment-orders', body);

describe('POST /payment-orders with method', () => {
  it("should answer 201 with the order and the buyer's parameters, then 200 with the same to the same body", async () => {
    const body = order();

    const created = await post(body);
    const again = await post(body);

    expect(created.status).toBe(201);
    expect(created.json()).toMatchObject({
      orderNo: body.orderNo,
      status: 'WAIT_PAY',
      amount: 1999,
      channel: 'WECHATPAY',
      merchantId: suite.platforms.wechatpay.mchid,
      payment: {
        method: 'JSAPI',
        state: 'CREATED',
        buyer: { params: { appId: suite.platforms.wechatpay.appid, signType: 'RSA', package: expect.any(String) } },
        validUntil: expect.any(String),
        expiresAt: expect.any(String),
      },
    });
    expect(again.status).toBe(200);
    expect(again.json()).toEqual(created.json());
    expect(suite.fake.createCallsFor(body.orderNo)).toHaveLength(1);
  });

  it('should make one create call for 10 concurrent identical requests', async () => {
    const body = order({ method: 'NATIVE', payer: undefined });

    const answers = await Promise.all(Array.from({ length: 10 }, () => post(body)));

    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(answers.map((a) => JSON.stringify(a.json<{ payment: unknown }>().payment))).size).toBe(1);
    expect(suite.fake.createCallsFor(body.orderNo)).toHaveLength(1);
    expect(await count(suite.pool, 'SELECT COUNT(*) FROM channel_payment WHERE order_no = ?', [body.orderNo])).toBe(1);
  });

  it("should answer 409 to another body under the same order number, 422 with the channel's code to a refusal, 503 to a timeout", async () => {
    const conflicting = order();
    await post(conflicting);
    const refused = order();
    suite.fake.scriptCreate(refused.orderNo, { reject: 'INVALID_REQUEST', message: '受理关系不存在' });
    const unanswered = order();
    suite.fake.scriptCreate(unanswered.orderNo, 'server-error');

    const answers = [
      await post({ ...conflicting, amount: 2999 }),
      await post({ ...conflicting, payer: { openid: 'another' } }),
      await post(refused),
      await post(unanswered),
      await post(unanswered),
    ];

    // The retry finds the order registered by the first attempt: 200, with the payment created now.
    expect(answers.map((a) => a.status)).toEqual([409, 409, 422, 503, 200]);
    expect(answers[4].json()).toMatchObject({ payment: { state: 'CREATED', attempts: 2 } });
    expect(answers[2].json()).toEqual({
      statusCode: 422,
      error: 'ChannelRefused',
      message: 'WECHATPAY refused the payment: INVALID_REQUEST 受理关系不存在',
      channelCode: 'INVALID_REQUEST',
      channelMessage: '受理关系不存在',
    });
    expect(answers[3].json()).toMatchObject({ statusCode: 503, error: 'ChannelUnavailable' });
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['a method without channel', { channel: undefined }, /method needs channel/],
    [
      'an unknown method',
      { method: 'CASH' },
      /method CASH is not one of WECHATPAY's: JSAPI, MINI_PROGRAM, NATIVE, H5, APP/,
    ],
    ['JSAPI without the openid', { payer: {} }, /method JSAPI needs payer.openid/],
    ['H5 without the client IP', { method: 'H5', payer: { h5Type: 'Wap' } }, /method H5 needs payer.clientIp/],
    ['a client IP that is no address', { method: 'H5', payer: { clientIp: 'here', h5Type: 'Wap' } }, /payer.clientIp/],
    ['an unknown payer field', { payer: { openid: OPENID, card: '4111' } }, /card should not exist/],
    ['no description', { description: undefined }, /method needs description/],
    ['an expiry in the past', { expiresAt: '2020-01-01T00:00:00Z' }, /expiresAt must be at least a minute/],
    ['channelOrderTime with method', { channelOrderTime: '20261129103000' }, /channelOrderTime is the service's own/],
    ['payer without method', { method: undefined }, /payer need method/],
    ["an app that is not the account's", { appId: 'wx0000000000000000' }, /appId wx0000000000000000 is not an app/],
  ])('should refuse %s with 400, writing and calling nothing', async (_, fields, message) => {
    const body = order(fields);

    const answer = await post(body);

    expect(answer.status).toBe(400);
    expect(answer.json<{ message: string | string[] }>().message.toString()).toMatch(message);
    expect(await effects.order(body.orderNo)).toBeUndefined();
    expect(suite.fake.createCallsFor(body.orderNo)).toHaveLength(0);
  });

  it('should register without method exactly as before: no payment, no create call', async () => {
    const orderNo = uniqueId('PC');

    const answer = await client.registerOrder({ orderNo, amount: 500, channel: 'WECHATPAY' });

    expect(answer.status).toBe(201);
    expect(answer.json()).not.toHaveProperty('payment');
    expect(suite.fake.createCallsFor(orderNo)).toHaveLength(0);
  });

  it('should show what was created, and until when, in the admin order view', async () => {
    const body = order({ method: 'NATIVE', payer: undefined });
    const created = await post(body);

    const view = await client.admin('GET', `/admin/orders/${body.orderNo}`, suite.platforms.admins.viewer);

    expect(view.status).toBe(200);
    expect(view.json<{ createdPayment: unknown }>().createdPayment).toEqual(
      created.json<{ payment: unknown }>().payment,
    );
  });
});

describe('a payment created here and paid by the buyer', () => {
  it("should be settled once from the channel's notifications at the notify URL it was given", async () => {
    const body = order({ method: 'NATIVE', payer: undefined });
    expect((await post(body)).status).toBe(201);
    const [call] = suite.fake.createCallsFor(body.orderNo);
    expect(call.notifyUrl).toBe(`${PUBLIC_BASE_URL}/notify/wechatpay`);
    // The buyer scans the code_url and pays: the platform marks the trade paid and notifies, twice.
    const transactionId = uniqueId('T');
    suite.fake.payTrade({ channel: 'WECHATPAY', outTradeNo: body.orderNo, transactionId, amount: call.amount });
    const notify = () =>
      fetch(app.url + new URL(call.notifyUrl).pathname, {
        method: 'POST',
        ...client.wechatpayPayment({ outTradeNo: body.orderNo, transactionId, total: call.amount }),
      });

    const acks = [await notify(), await notify()];

    expect(acks.map((a) => a.status)).toEqual([204, 204]);
    expect(await effects.status(body.orderNo)).toBe('PAID');
    expect(await count(suite.pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no = ?', [body.orderNo])).toBe(1);
  });
});
