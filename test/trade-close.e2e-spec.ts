import { Pool } from 'mysql2/promise';
import { FakeChannel, FakePlatform, TradeCallBehaviour } from '../tools/simulator/fake-platform';
import { FakePlatformSuite, startFakePlatformSuite } from './support/fake-platform-suite';
import { OrderEffects } from './support/order-effects';
import { yuan } from '../tools/simulator/platform-signers';
import { HttpAnswer, notificationsOnly, RunningApp, TestClient, TestPlatforms, uniqueId } from './support/test-app';

/**
 * Closing an order closes the trade at the channel first: a trade paid at the channel makes the order PAID
 * (409 to the caller), an open one is closed there and then here, and a channel that cannot be reached leaves the
 * order open (503). A local fake of both channels' trade APIs verifies the merchant's request signatures and signs
 * its answers; a second instance runs without API credentials.
 */
let platforms: TestPlatforms;
let fake: FakePlatform;
let app: RunningApp;
let appWithoutApi: RunningApp;
let client: TestClient;
let clientWithoutApi: TestClient;
let pool: Pool;
let effects: OrderEffects;

let suite: FakePlatformSuite;

beforeAll(async () => {
  suite = await startFakePlatformSuite({ hangMs: 1500 });
  ({ platforms, fake, pool } = suite);
  const env = {
    ...suite.env,
    // No query falls due while these tests run: every channel call here is a close's.
    PAYMENT_QUERY_SCHEDULE_SECONDS: '3600',
    PAYMENT_QUERY_POLL_INTERVAL_MS: '100',
    REFUND_REQUEST_TIMEOUT_MS: '1000',
  };
  app = await suite.startApp(env);
  appWithoutApi = await suite.startApp(notificationsOnly(env));
  client = suite.clientOf(app);
  clientWithoutApi = suite.clientOf(appWithoutApi);
  effects = new OrderEffects(pool);
});

afterAll(() => suite?.close());

const MERCHANT_ID = (channel: FakeChannel) =>
  channel === 'WECHATPAY' ? platforms.wechatpay.mchid : platforms.alipay.appId;
const SUCCESS_STATUS: Record<FakeChannel, number> = { WECHATPAY: 204, ALIPAY: 200 };

async function registered(amount: number, channel?: FakeChannel, on = client): Promise<string> {
  const orderNo = uniqueId('C');
  expect((await on.registerOrder({ orderNo, amount, channel })).status).toBe(201);
  return orderNo;
}

function close(orderNo: string, on = client): Promise<HttpAnswer> {
  return on.api('POST', `/payment-orders/${orderNo}/close`);
}

/** The real signed notification of a payment, as the channel sends it. */
function notify(channel: FakeChannel, orderNo: string, transactionId: string, amount: number): Promise<HttpAnswer> {
  return channel === 'WECHATPAY'
    ? client.postWechatpay(client.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: amount }))
    : client.postAlipay(
        client.alipayPayment({ outTradeNo: orderNo, tradeNo: transactionId, totalAmount: yuan(amount) }),
      );
}

function within<T>(what: string, promise: Promise<T>, timeoutMs = 30_000): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe('closing an order that was paid at the channel', () => {
  it.each<FakeChannel>(['WECHATPAY', 'ALIPAY'])(
    'should answer 409 and make the %s order PAID through the pipeline: one event, no PAID_AFTER_CLOSE',
    async (channel) => {
      const orderNo = await registered(3300, channel);
      const transactionId = uniqueId('T');
      fake.payTrade({ channel, outTradeNo: orderNo, transactionId, amount: 3300 });

      const answer = await close(orderNo);

      expect(answer.status).toBe(409);
      expect(answer.json()).toMatchObject({ statusCode: 409, error: 'OrderConflict' });
      expect(answer.json().message).toContain('paid at the channel');
      expect(await effects.order(orderNo)).toMatchObject({ status: 'PAID', channel, transaction_id: transactionId });
      expect(await effects.history(orderNo)).toEqual(['->WAIT_PAY', 'WAIT_PAY>PAID']);
      expect(await effects.events(orderNo)).toBe(1);
      expect(await effects.anomalies(orderNo)).toEqual([]);
      expect(fake.tradeClosesFor(orderNo)).toBe(1);
      expect(fake.trade(channel, orderNo)?.state).toBe('PAID');
      const calls = await effects.channelCalls(orderNo);
      expect(calls).toContainEqual(
        expect.objectContaining({ request: 'CLOSE', channel, merchantId: MERCHANT_ID(channel), outcome: 'PAID' }),
      );
      expect(calls).toContainEqual(
        expect.objectContaining({ request: 'QUERY', channel, outcome: 'PAID', transactionId, detail: 'PAID' }),
      );

      // The notification that was on its way is a repeat; closing again is still refused.
      const notification = await notify(channel, orderNo, transactionId, 3300);
      expect(notification.status).toBe(SUCCESS_STATUS[channel]);
      expect(await effects.deliveryOutcomes(channel, transactionId)).toEqual(['DUPLICATE']);
      expect((await close(orderNo)).status).toBe(409);
      expect(await effects.events(orderNo)).toBe(1);
      expect(await effects.anomalies(orderNo)).toEqual([]);
    },
  );
});

describe('closing while the buyer pays', () => {
  it.each<FakeChannel>(['WECHATPAY', 'ALIPAY'])(
    'should answer 409 when the %s trade is paid while the close is on its way: one PAID transition, no PAID_AFTER_CLOSE',
    async (channel) => {
      const orderNo = await registered(2600, channel);
      const transactionId = uniqueId('T');
      fake.openTrade({ channel, outTradeNo: orderNo, amount: 2600 });
      fake.scriptTradeClose(orderNo, { delayMs: 150 });
      const closeArrived = fake.nextTradeCall(orderNo, 'CLOSE');

      const closing = close(orderNo);
      await within(`the close of ${orderNo} at the channel`, closeArrived);
      fake.payTrade({ channel, outTradeNo: orderNo, transactionId, amount: 2600 });
      const [closed, notification] = await Promise.all([closing, notify(channel, orderNo, transactionId, 2600)]);

      expect(fake.tradeCallsFor(orderNo, 'CLOSE').map((c) => c.answered)).toEqual(['PAID']);
      expect(closed.status).toBe(409);
      expect(notification.status).toBe(SUCCESS_STATUS[channel]);
      expect(await effects.order(orderNo)).toMatchObject({ status: 'PAID', transaction_id: transactionId });
      expect(await effects.history(orderNo)).toEqual(['->WAIT_PAY', 'WAIT_PAY>PAID']);
      expect(await effects.events(orderNo)).toBe(1);
      expect(await effects.anomalies(orderNo)).toEqual([]);
    },
  );
});

describe('closing an order that was not paid', () => {
  it.each<FakeChannel>(['WECHATPAY', 'ALIPAY'])(
    'should close the open %s trade at the channel once, then the order',
    async (channel) => {
      const orderNo = await registered(1800, channel);
      fake.openTrade({ channel, outTradeNo: orderNo, amount: 1800 });

      const answer = await close(orderNo);

      expect(answer.status).toBe(200);
      expect(answer.json()).toMatchObject({
        orderNo,
        status: 'CLOSED',
        channelClose: [{ channel, merchantId: MERCHANT_ID(channel), outcome: 'CLOSED' }],
      });
      expect(fake.tradeClosesFor(orderNo)).toBe(1);
      expect(fake.trade(channel, orderNo)?.state).toBe('CLOSED');
      expect(await effects.history(orderNo)).toEqual(['->WAIT_PAY', 'WAIT_PAY>CLOSED']);
      expect(await effects.channelCalls(orderNo)).toEqual([
        expect.objectContaining({ request: 'CLOSE', channel, merchantId: MERCHANT_ID(channel), outcome: 'CLOSED' }),
      ]);
      expect(await effects.events(orderNo)).toBe(0);
    },
  );

  it.each<FakeChannel>(['WECHATPAY', 'ALIPAY'])(
    'should close the order once when 4 closes of it arrive at once (%s)',
    async (channel) => {
      const orderNo = await registered(2700, channel);
      fake.openTrade({ channel, outTradeNo: orderNo, amount: 2700 });

      const answers = await Promise.all(Array.from({ length: 4 }, () => close(orderNo)));

      expect(answers.map((a) => [a.status, a.json().status])).toEqual(Array(4).fill([200, 'CLOSED']));
      expect(await effects.history(orderNo)).toEqual(['->WAIT_PAY', 'WAIT_PAY>CLOSED']);
      expect(fake.trade(channel, orderNo)?.state).toBe('CLOSED');
      expect(await effects.events(orderNo)).toBe(0);
    },
  );

  it.each<FakeChannel>(['WECHATPAY', 'ALIPAY'])(
    'should close an order whose %s trade the channel has already closed (expired unpaid)',
    async (channel) => {
      const orderNo = await registered(2800, channel);
      fake.openTrade({ channel, outTradeNo: orderNo, amount: 2800 });
      fake.closeTrade(channel, orderNo);

      const answer = await close(orderNo);

      // Alipay answers a closed trade's close with ACQ.TRADE_STATUS_ERROR, as it answers a paid one's.
      expect(fake.tradeCallsFor(orderNo, 'CLOSE').map((c) => c.answered)).toEqual([
        channel === 'ALIPAY' ? 'ALREADY_CLOSED' : 'CLOSED',
      ]);
      expect(answer.status).toBe(200);
      expect(answer.json()).toMatchObject({
        status: 'CLOSED',
        channelClose: [{ channel, merchantId: MERCHANT_ID(channel), outcome: 'CLOSED' }],
      });
      expect(await effects.history(orderNo)).toEqual(['->WAIT_PAY', 'WAIT_PAY>CLOSED']);
      expect(await effects.events(orderNo)).toBe(0);
    },
  );

  it('should close an order whose trade never reached the channel: every channel says NOT_FOUND', async () => {
    const orderNo = await registered(1900); // no channel: every channel with API credentials is asked

    const answer = await close(orderNo);

    expect(answer.status).toBe(200);
    expect(answer.json()).toMatchObject({ orderNo, status: 'CLOSED' });
    expect(answer.json().channelClose).toHaveLength(2);
    expect(answer.json().channelClose).toEqual(
      expect.arrayContaining([
        { channel: 'WECHATPAY', merchantId: platforms.wechatpay.mchid, outcome: 'NOT_FOUND' },
        { channel: 'ALIPAY', merchantId: platforms.alipay.appId, outcome: 'NOT_FOUND' },
      ]),
    );
    expect(fake.tradeClosesFor(orderNo, 'WECHATPAY')).toBe(1);
    expect(fake.tradeClosesFor(orderNo, 'ALIPAY')).toBe(1);
    expect(await effects.history(orderNo)).toEqual(['->WAIT_PAY', 'WAIT_PAY>CLOSED']);
  });
});

describe('closing while the channel cannot be reached', () => {
  it.each<[FakeChannel, TradeCallBehaviour]>([
    ['WECHATPAY', 'timeout'],
    ['WECHATPAY', 'server-error'],
    ['WECHATPAY', 'bad-signature'],
    ['WECHATPAY', 'unsigned'],
    ['ALIPAY', 'timeout'],
    ['ALIPAY', 'server-error'],
    ['ALIPAY', 'bad-signature'],
    ['ALIPAY', 'unsigned'],
  ])('should answer 503 and leave the order WAIT_PAY when %s answers the close with %s', async (channel, behaviour) => {
    const orderNo = await registered(2100, channel);
    fake.openTrade({ channel, outTradeNo: orderNo, amount: 2100 });
    fake.scriptTradeClose(orderNo, behaviour);

    const answer = await close(orderNo);

    expect(answer.status).toBe(503);
    expect(answer.json()).toMatchObject({ statusCode: 503 });
    expect(await effects.status(orderNo)).toBe('WAIT_PAY');
    expect(await effects.history(orderNo)).toEqual(['->WAIT_PAY']);
    expect(await effects.channelCalls(orderNo, 'CLOSE')).toEqual([
      expect.objectContaining({ channel, merchantId: MERCHANT_ID(channel), outcome: 'FAILED' }),
    ]);

    // Once the channel answers again, the same close goes through.
    const again = await close(orderNo);
    expect(again.status).toBe(200);
    expect(again.json()).toMatchObject({ status: 'CLOSED' });
    expect(fake.tradeClosesFor(orderNo)).toBe(2);
  });

  it('should close nothing locally when one of the channels asked cannot be reached', async () => {
    const orderNo = await registered(2200); // no channel: both are asked
    fake.scriptTradeClose(orderNo, 'server-error'); // the first close of this order, at whichever channel

    const answer = await close(orderNo);

    expect(answer.status).toBe(503);
    expect(await effects.status(orderNo)).toBe('WAIT_PAY');
    expect(await effects.history(orderNo)).toEqual(['->WAIT_PAY']);
    expect(fake.tradeCallsFor(orderNo, 'CLOSE').map((c) => c.answered)).toContain('server-error');
  });
});

describe('a channel without API credentials', () => {
  it.each<FakeChannel>(['WECHATPAY', 'ALIPAY'])(
    'should close a %s order locally and say UNAVAILABLE',
    async (channel) => {
      const orderNo = await registered(1500, channel, clientWithoutApi);

      const answer = await close(orderNo, clientWithoutApi);

      expect(answer.status).toBe(200);
      expect(answer.json()).toMatchObject({
        orderNo,
        status: 'CLOSED',
        channelClose: [{ channel, merchantId: MERCHANT_ID(channel), outcome: 'UNAVAILABLE' }],
      });
      expect(fake.tradeCallsFor(orderNo)).toEqual([]);
      expect(await effects.history(orderNo)).toEqual(['->WAIT_PAY', 'WAIT_PAY>CLOSED']);
    },
  );
});

describe('registering an order with its channel', () => {
  it('should keep the channel and merchantId and show them in the order view', async () => {
    const orderNo = uniqueId('C');
    const answer = await client.registerOrder({
      orderNo,
      amount: 700,
      channel: 'ALIPAY',
      merchantId: platforms.alipay.appId,
    });

    expect(answer.status).toBe(201);
    const view = await client.api('GET', `/payment-orders/${orderNo}`);
    expect(view.json()).toMatchObject({
      orderNo,
      status: 'WAIT_PAY',
      channel: 'ALIPAY',
      merchantId: platforms.alipay.appId,
    });
  });

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
      orderNo,
      userId: 'u-1',
      amount: 700,
      currency: 'CNY',
      ...fields,
    });

    expect(answer.status).toBe(400);
    expect(answer.json()).toMatchObject({ statusCode: 400, error: expect.any(String) });
    expect(answer.json().message).toMatch(/channel|merchantId/);
    expect(Object.values(await effects.everythingAbout(orderNo))).toEqual(Array(7).fill(0));
    // Nothing lingers: the same order number registers cleanly afterwards.
    expect((await client.registerOrder({ orderNo, amount: 700 })).status).toBe(201);
  });
});
