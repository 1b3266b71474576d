import { Pool } from 'mysql2/promise';
import { Channel } from '../../src/domain/notification';
import { toView } from '../../src/order/dto/payment-order.view';
import { OrderModule } from '../../src/order/order.module';
import { PaymentOrderService } from '../../src/order/payment-order.service';
import { SettlementModule } from '../../src/settlement/settlement.module';
import { TradeCloseService } from '../../src/trade/trade-close.service';
import { TradeModule } from '../../src/trade/trade.module';
import { FakeChannel, FakePlatform, TradeCallBehaviour } from '../../tools/simulator/fake-platform';
import { Factories } from '../support/factories';
import { domainFailure, Medium, MediumContext, startMedium } from '../support/medium';
import { OrderEffects } from '../support/order-effects';
import { notificationsOnly, TestPlatforms, uniqueId } from '../support/test-app';

/**
 * Closing an order closes the trade at the channel first, as a service: a trade paid at the channel
 * makes the order PAID (a conflict for the caller), an open one is closed there and then here, and
 * a channel that cannot be reached leaves the order open. A local fake of both channels' trade APIs
 * verifies the merchant's request signatures and signs its answers; a second module runs without
 * API credentials. The status codes are in test/trade-close.e2e-spec.ts.
 */
let setup: Medium;
let platforms: TestPlatforms;
let fake: FakePlatform;
let ctx: MediumContext;
let withoutApi: MediumContext;
let make: Factories;
let pool: Pool;
let effects: OrderEffects;

const ENV = {
  // No query falls due while these tests run: every channel call here is a close's.
  PAYMENT_QUERY_SCHEDULE_SECONDS: '3600',
  PAYMENT_QUERY_POLL_INTERVAL_MS: '100',
  REFUND_REQUEST_TIMEOUT_MS: '1000',
};

beforeAll(async () => {
  setup = await startMedium(ENV, {
    imports: [OrderModule, SettlementModule, TradeModule],
    fake: { hangMs: 1500 },
  });
  ({ platforms, fake, ctx, make, pool } = setup);
  withoutApi = await setup.another((p, apiEnv) => notificationsOnly({ ...p.env, ...apiEnv, ...ENV }));
  effects = new OrderEffects(pool);
});

afterAll(() => setup?.close());

const MERCHANT_ID = (channel: FakeChannel) =>
  channel === 'WECHATPAY' ? platforms.wechatpay.mchid : platforms.alipay.appId;

async function registered(amount: number, channel?: FakeChannel, on = make): Promise<string> {
  return (await on.order({ amount, channel })).orderNo;
}

const close = (orderNo: string, on = ctx) => on.inContext(() => on.get(TradeCloseService).close(orderNo));

/** The real signed notification of a payment, verified and settled as the notify route does. */
const notify = (channel: FakeChannel, orderNo: string, transactionId: string, amount: number) =>
  make.payment(channel, { orderNo, transactionId, amount });

function within<T>(what: string, promise: Promise<T>, timeoutMs = 30_000): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe('closing an order that was paid at the channel', () => {
  it.each<FakeChannel>(['WECHATPAY', 'ALIPAY'])(
    'should refuse (409) and make the %s order PAID through the pipeline: one event, no PAID_AFTER_CLOSE',
    async (channel) => {
      const orderNo = await registered(3300, channel);
      const transactionId = uniqueId('T');
      fake.payTrade({ channel, outTradeNo: orderNo, transactionId, amount: 3300 });

      const refused = await domainFailure(close(orderNo));

      expect(refused).toMatchObject({ code: 'OrderConflict', status: 409 });
      expect(refused.message).toContain('paid at the channel');
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
      expect(await notify(channel, orderNo, transactionId, 3300)).toBe('DUPLICATE');
      expect(await effects.deliveryOutcomes(channel, transactionId)).toEqual(['DUPLICATE']);
      expect(await domainFailure(close(orderNo))).toMatchObject({ status: 409 });
      expect(await effects.events(orderNo)).toBe(1);
      expect(await effects.anomalies(orderNo)).toEqual([]);
    },
  );
});

describe('closing while the buyer pays', () => {
  it.each<FakeChannel>(['WECHATPAY', 'ALIPAY'])(
    'should refuse (409) when the %s trade is paid while the close is on its way: one PAID transition, no PAID_AFTER_CLOSE',
    async (channel) => {
      const orderNo = await registered(2600, channel);
      const transactionId = uniqueId('T');
      fake.openTrade({ channel, outTradeNo: orderNo, amount: 2600 });
      fake.scriptTradeClose(orderNo, { delayMs: 150 });
      const closeArrived = fake.nextTradeCall(orderNo, 'CLOSE');

      const closing = domainFailure(close(orderNo));
      await within(`the close of ${orderNo} at the channel`, closeArrived);
      fake.payTrade({ channel, outTradeNo: orderNo, transactionId, amount: 2600 });
      const [closed, notification] = await Promise.all([closing, notify(channel, orderNo, transactionId, 2600)]);

      expect(fake.tradeCallsFor(orderNo, 'CLOSE').map((c) => c.answered)).toEqual(['PAID']);
      expect(closed.status).toBe(409);
      expect(['PAID', 'DUPLICATE']).toContain(notification);
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

      const { order, channelClose } = await close(orderNo);

      expect({ orderNo: order.orderNo, status: order.status, channelClose }).toEqual({
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

      expect(answers.map((a) => a.order.status)).toEqual(Array(4).fill('CLOSED'));
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

      const { order, channelClose } = await close(orderNo);

      // Alipay answers a closed trade's close with ACQ.TRADE_STATUS_ERROR, as it answers a paid one's.
      expect(fake.tradeCallsFor(orderNo, 'CLOSE').map((c) => c.answered)).toEqual([
        channel === 'ALIPAY' ? 'ALREADY_CLOSED' : 'CLOSED',
      ]);
      expect({ status: order.status, channelClose }).toEqual({
        status: 'CLOSED',
        channelClose: [{ channel, merchantId: MERCHANT_ID(channel), outcome: 'CLOSED' }],
      });
      expect(await effects.history(orderNo)).toEqual(['->WAIT_PAY', 'WAIT_PAY>CLOSED']);
      expect(await effects.events(orderNo)).toBe(0);
    },
  );

  it('should close an order whose trade never reached the channel: every channel says NOT_FOUND', async () => {
    const orderNo = await registered(1900); // no channel: every channel with API credentials is asked

    const { order, channelClose } = await close(orderNo);

    expect({ orderNo: order.orderNo, status: order.status }).toEqual({ orderNo, status: 'CLOSED' });
    expect(channelClose).toHaveLength(2);
    expect(channelClose).toEqual(
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
  ])(
    'should refuse (503) and leave the order WAIT_PAY when %s answers the close with %s',
    async (channel, behaviour) => {
      const orderNo = await registered(2100, channel);
      fake.openTrade({ channel, outTradeNo: orderNo, amount: 2100 });
      fake.scriptTradeClose(orderNo, behaviour);

      const refused = await domainFailure(close(orderNo));

      expect(refused).toMatchObject({ code: 'ChannelUnavailable', status: 503 });
      expect(await effects.status(orderNo)).toBe('WAIT_PAY');
      expect(await effects.history(orderNo)).toEqual(['->WAIT_PAY']);
      expect(await effects.channelCalls(orderNo, 'CLOSE')).toEqual([
        expect.objectContaining({ channel, merchantId: MERCHANT_ID(channel), outcome: 'FAILED' }),
      ]);

      // Once the channel answers again, the same close goes through.
      const again = await close(orderNo);
      expect(again.order.status).toBe('CLOSED');
      expect(fake.tradeClosesFor(orderNo)).toBe(2);
    },
  );

  it('should close nothing locally when one of the channels asked cannot be reached', async () => {
    const orderNo = await registered(2200); // no channel: both are asked
    fake.scriptTradeClose(orderNo, 'server-error'); // the first close of this order, at whichever channel

    const refused = await domainFailure(close(orderNo));

    expect(refused.status).toBe(503);
    expect(await effects.status(orderNo)).toBe('WAIT_PAY');
    expect(await effects.history(orderNo)).toEqual(['->WAIT_PAY']);
    expect(fake.tradeCallsFor(orderNo, 'CLOSE').map((c) => c.answered)).toContain('server-error');
  });
});

describe('a channel without API credentials', () => {
  it.each<FakeChannel>(['WECHATPAY', 'ALIPAY'])(
    'should close a %s order locally and say UNAVAILABLE',
    async (channel) => {
      const orderNo = await registered(1500, channel, new Factories(withoutApi, platforms));

      const { order, channelClose } = await close(orderNo, withoutApi);

      expect({ orderNo: order.orderNo, status: order.status, channelClose }).toEqual({
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
    const orders = ctx.get(PaymentOrderService);

    const { created } = await ctx.inContext(() =>
      orders.register({
        orderNo,
        amount: 700,
        userId: 'u-1',
        currency: 'CNY',
        channel: Channel.Alipay,
        merchantId: platforms.alipay.appId,
      }),
    );

    expect(created).toBe(true);
    expect(toView(await orders.get(orderNo))).toMatchObject({
      orderNo,
      status: 'WAIT_PAY',
      channel: 'ALIPAY',
      merchantId: platforms.alipay.appId,
    });
  });
});
