import { Pool } from 'mysql2/promise';
import { register as metricsRegistry } from 'prom-client';
import { NotifyModule } from '../../src/intake/notify.module';
import { OrderModule } from '../../src/order/order.module';
import { PaymentOrderService } from '../../src/order/payment-order.service';
import { SettlementModule } from '../../src/settlement/settlement.module';
import { TradeModule } from '../../src/trade/trade.module';
import { FakeChannel, FakePlatform, TradeCallBehaviour } from '../../tools/simulator/fake-platform';
import { yuan } from '../../tools/simulator/platform-signers';
import { eventually, sleep } from '../support/eventually';
import { Factories } from '../support/factories';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { FORM, receive } from '../support/medium-intake';
import { metricValue, OrderEffects } from '../support/order-effects';
import { TestPlatforms, uniqueId } from '../support/test-app';

/**
 * The active query as a service: orders whose notification never arrives are asked about at the
 * channel, on a schedule, by the query worker of every instance (two modules on one database); a
 * paid answer goes through the same settlement as a notification. The fake platform verifies the
 * merchant's request signatures and signs its answers (or forges them, or leaves them unsigned,
 * when a test says so). The
 * late notifications go to the notify use case (NotificationIntake.receive) and its reply is the
 * platform's ack. The admin order view of the queries is in test/payment-query.e2e-spec.ts.
 */
const SCHEDULE_SECONDS = [1, 2, 3];
const LAST_AGE_MS = SCHEDULE_SECONDS[SCHEDULE_SECONDS.length - 1] * 1000;

let medium: Medium;
let platforms: TestPlatforms;
let fake: FakePlatform;
let replicaA: MediumContext;
let replicaB: MediumContext;
let make: Factories;
let pool: Pool;
let effects: OrderEffects;
/** Set once the last case has stopped the two instances. */
let replicasStopped = false;

beforeAll(async () => {
  // The query worker asks about every due WAIT_PAY order of its database: other suites' would come first.
  const env = {
    PAYMENT_QUERY_SCHEDULE_SECONDS: SCHEDULE_SECONDS.join(','),
    PAYMENT_QUERY_POLL_INTERVAL_MS: '100',
    PAYMENT_QUERY_RATE_PER_SECOND: '1000',
    PAYMENT_QUERY_CONCURRENCY: '16',
    REFUND_REQUEST_TIMEOUT_MS: '1000',
  };
  medium = await startMedium(env, {
    imports: [OrderModule, SettlementModule, TradeModule, NotifyModule],
    fake: { hangMs: 1500 },
    replicas: 2,
    ownDatabase: true,
  });
  ({ platforms, fake, make, pool } = medium);
  [replicaA, replicaB] = medium.replicas;
  effects = new OrderEffects(pool);
});

afterAll(async () => {
  if (!replicasStopped) {
    await replicaA?.close();
    await replicaB?.close();
  }
  await medium?.close();
});

interface TestOrder {
  orderNo: string;
  transactionId: string;
  amount: number;
}

function newOrder(prefix: string, amount: number): TestOrder {
  return { orderNo: uniqueId(prefix), transactionId: uniqueId('T'), amount };
}

async function register(order: TestOrder, channel?: FakeChannel): Promise<void> {
  await make.order({ orderNo: order.orderNo, amount: order.amount, channel });
}

/** The real signed notification of the order's payment, as the channel sends it (late), received by `replica`. */
async function notify(replica: MediumContext, channel: FakeChannel, order: TestOrder): Promise<number> {
  const { orderNo: outTradeNo, transactionId, amount } = order;
  if (channel === 'WECHATPAY') {
    const { headers, body } = make.deliveries.wechatpayPayment({ outTradeNo, transactionId, total: amount });
    return (await receive(replica, 'wechatpay', headers, body)).status;
  }
  const form = make.deliveries.alipayPayment({ outTradeNo, tradeNo: transactionId, totalAmount: yuan(amount) });
  return (await receive(replica, 'alipay', { 'content-type': FORM }, form)).status;
}

const SUCCESS_STATUS: Record<FakeChannel, number> = { WECHATPAY: 204, ALIPAY: 200 };
const MERCHANT_ID = (channel: FakeChannel) =>
  channel === 'WECHATPAY' ? platforms.wechatpay.mchid : platforms.alipay.appId;

async function statusIs(orderNo: string, status: string, timeoutMs = 30_000): Promise<void> {
  await eventually(
    `order ${orderNo} to be ${status}`,
    async () => (await effects.status(orderNo)) === status,
    timeoutMs,
  );
}

/** Waits until the fake has been asked `times` about the order at `channel`, and the service recorded as many. */
async function queriedTimes(orderNo: string, channel: FakeChannel, times: number): Promise<void> {
  await eventually(
    `${times} ${channel} queries of ${orderNo}, asked and recorded`,
    async () =>
      fake.tradeQueriesFor(orderNo, channel) >= times &&
      (await effects.channelCalls(orderNo, 'QUERY')).filter((c) => c.channel === channel).length >= times,
    30_000,
  );
}

function within<T>(what: string, promise: Promise<T>, timeoutMs = 30_000): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe('an order paid at the channel whose notification never arrives', () => {
  it('should become PAID by query (WeChat, Alipay, and unrouted), with one event, and the late notification a DUPLICATE', async () => {
    const wechat = newOrder('QW', 1234);
    const alipay = newOrder('QA', 8888);
    const unrouted = newOrder('QN', 990); // registered without a channel, paid with Alipay
    await register(wechat, 'WECHATPAY');
    await register(alipay, 'ALIPAY');
    await register(unrouted);
    const cases: Array<[TestOrder, FakeChannel]> = [
      [wechat, 'WECHATPAY'],
      [alipay, 'ALIPAY'],
      [unrouted, 'ALIPAY'],
    ];
    for (const [order, channel] of cases) {
      fake.payTrade({ channel, outTradeNo: order.orderNo, transactionId: order.transactionId, amount: order.amount });
    }

    for (const [order] of cases) await statusIs(order.orderNo, 'PAID');

    for (const [order, channel] of cases) {
      expect(await effects.order(order.orderNo)).toMatchObject({
        status: 'PAID',
        channel,
        transaction_id: order.transactionId,
      });
      expect(await effects.history(order.orderNo)).toEqual(['->WAIT_PAY', 'WAIT_PAY>PAID']);
      expect(await effects.events(order.orderNo)).toBe(1);
      const payments = await effects.payments(order.orderNo);
      expect(payments).toHaveLength(1);
      expect(payments[0]).toMatchObject({
        channel,
        transaction_id: order.transactionId,
        amount: order.amount,
        merchant_id: MERCHANT_ID(channel),
      });
      const paidCalls = (await effects.channelCalls(order.orderNo, 'QUERY')).filter((c) => c.outcome === 'PAID');
      expect(paidCalls).toEqual([
        expect.objectContaining({
          channel,
          merchantId: MERCHANT_ID(channel),
          transactionId: order.transactionId,
          detail: 'PAID',
        }),
      ]);
      // What GET /payment-orders/:orderNo shows, read on the other instance.
      const view = await replicaB.inContext(() => replicaB.get(PaymentOrderService).get(order.orderNo));
      expect(view).toMatchObject({
        status: 'PAID',
        channel,
        merchantId: MERCHANT_ID(channel),
        transactionId: order.transactionId,
      });
    }

    // The notifications arrive after all: each is a repeat of a payment already made.
    for (const [order, channel] of cases) {
      expect(await notify(replicaB, channel, order)).toBe(SUCCESS_STATUS[channel]);
      expect(await effects.deliveryOutcomes(channel, order.transactionId)).toEqual(['DUPLICATE']);
      expect(await effects.events(order.orderNo)).toBe(1);
      expect(await effects.history(order.orderNo)).toEqual(['->WAIT_PAY', 'WAIT_PAY>PAID']);
    }
    // Both instances count in this process's one registry.
    const exposed = await metricsRegistry.metrics();
    for (const channel of ['WECHATPAY', 'ALIPAY']) {
      const labels = { channel, request: 'QUERY', outcome: 'PAID' };
      expect(metricValue(exposed, 'payment_channel_calls_total', labels)).toBeGreaterThanOrEqual(
        channel === 'ALIPAY' ? 2 : 1,
      );
    }
  });
});

describe('a query racing the notifications of the same payment', () => {
  it.each<[FakeChannel, number]>([
    ['WECHATPAY', 0],
    ['WECHATPAY', 20],
    ['ALIPAY', 0],
    ['ALIPAY', 20],
  ])(
    'should make one PAID transition and one event: a %s query (answer delayed %i ms) and 4 notifications on two instances',
    async (channel, delayMs) => {
      const order = newOrder('QR', 4321);
      await register(order, channel);
      fake.payTrade({ channel, outTradeNo: order.orderNo, transactionId: order.transactionId, amount: order.amount });
      if (delayMs > 0) fake.scriptTradeQuery(order.orderNo, { delayMs });
      const queried = fake.nextTradeCall(order.orderNo, 'QUERY');

      await within(`the first query of ${order.orderNo}`, queried);
      const answers = await Promise.all([
        notify(replicaA, channel, order),
        notify(replicaB, channel, order),
        notify(replicaA, channel, order),
        notify(replicaB, channel, order),
      ]);
      await eventually('the query to be recorded', async () => (await effects.channelCalls(order.orderNo)).length > 0);

      expect(answers).toEqual(Array(4).fill(SUCCESS_STATUS[channel]));
      expect(await effects.history(order.orderNo)).toEqual(['->WAIT_PAY', 'WAIT_PAY>PAID']);
      expect(await effects.events(order.orderNo)).toBe(1);
      expect(await effects.payments(order.orderNo)).toHaveLength(1);
      const deliveries = await effects.deliveryOutcomes(channel, order.transactionId);
      expect(deliveries).toHaveLength(4);
      const calls = await effects.channelCalls(order.orderNo, 'QUERY');
      expect(calls).toEqual([expect.objectContaining({ outcome: 'PAID', transactionId: order.transactionId })]);
      // Exactly one of the five made the payment; the others saw it made.
      const winners = deliveries.filter((o) => o === 'PAID').length + (calls[0].detail === 'PAID' ? 1 : 0);
      expect(winners).toBe(1);
      expect([...deliveries, calls[0].detail].every((o) => o === 'PAID' || o === 'DUPLICATE')).toBe(true);
    },
  );
});

describe('an order that is never paid', () => {
  it('should be asked exactly once per schedule step across two instances, then left alone', async () => {
    const notFound = newOrder('QF', 100); // no trade at WeChat
    const wechatOpen = newOrder('QO', 200); // NOTPAY
    const alipayOpen = newOrder('QP', 300); // WAIT_BUYER_PAY
    const unrouted = newOrder('QU', 400); // no channel: every account is asked
    await register(notFound, 'WECHATPAY');
    await register(wechatOpen, 'WECHATPAY');
    await register(alipayOpen, 'ALIPAY');
    await register(unrouted);
    fake.openTrade({ channel: 'WECHATPAY', outTradeNo: wechatOpen.orderNo, amount: 200 });
    fake.openTrade({ channel: 'ALIPAY', outTradeNo: alipayOpen.orderNo, amount: 300 });
    const expected: Array<[TestOrder, FakeChannel, string]> = [
      [notFound, 'WECHATPAY', 'NOT_FOUND'],
      [wechatOpen, 'WECHATPAY', 'NOT_PAID'],
      [alipayOpen, 'ALIPAY', 'NOT_PAID'],
      [unrouted, 'WECHATPAY', 'NOT_FOUND'],
      [unrouted, 'ALIPAY', 'NOT_FOUND'],
    ];
    const steps = SCHEDULE_SECONDS.length;

    for (const [order, channel] of expected) await queriedTimes(order.orderNo, channel, steps);
    const lastRegistered = await effects.order(unrouted.orderNo);
    await sleep(Math.max(0, (lastRegistered!.created_at as Date).getTime() + LAST_AGE_MS + 1500 - Date.now()));

    for (const [order, channel, outcome] of expected) {
      expect(fake.tradeQueriesFor(order.orderNo, channel)).toBe(steps);
      expect(fake.tradeClosesFor(order.orderNo)).toBe(0);
      const calls = (await effects.channelCalls(order.orderNo, 'QUERY')).filter((c) => c.channel === channel);
      expect(calls.map((c) => c.outcome)).toEqual(Array(steps).fill(outcome));
      expect(calls.every((c) => c.merchantId === MERCHANT_ID(channel))).toBe(true);
      expect(calls.every((c) => c.transactionId === null)).toBe(true);
      // Each step is asked once its age has been reached, never before.
      const registeredAt = ((await effects.order(order.orderNo))!.created_at as Date).getTime();
      calls.forEach((call, step) => {
        expect(call.createdAt.getTime() - registeredAt).toBeGreaterThanOrEqual(SCHEDULE_SECONDS[step] * 1000);
      });
      expect(await effects.status(order.orderNo)).toBe('WAIT_PAY');
      expect(await effects.payments(order.orderNo)).toHaveLength(0);
      expect(await effects.events(order.orderNo)).toBe(0);
    }
  });
});

describe('answers that cannot be trusted', () => {
  it('should never apply a forged, unsigned, failed or timed-out query answer: recorded FAILED, the order stays WAIT_PAY', async () => {
    const cases: Array<[FakeChannel, Extract<TradeCallBehaviour, string>]> = [
      ['WECHATPAY', 'bad-signature'],
      ['WECHATPAY', 'unsigned'],
      ['WECHATPAY', 'server-error'],
      ['ALIPAY', 'bad-signature'],
      ['ALIPAY', 'unsigned'],
      ['ALIPAY', 'timeout'],
    ];
    const steps = SCHEDULE_SECONDS.length;
    const orders = new Map(cases.map(([channel, behaviour]) => [`${channel} ${behaviour}`, newOrder('QX', 5000)]));
    for (const [channel, behaviour] of cases) {
      const order = orders.get(`${channel} ${behaviour}`)!;
      await register(order, channel);
      fake.payTrade({ channel, outTradeNo: order.orderNo, transactionId: order.transactionId, amount: 5000 });
      fake.scriptTradeQuery(order.orderNo, ...Array<TradeCallBehaviour>(steps).fill(behaviour));
    }

    await Promise.all(
      cases.map(([channel, b]) => queriedTimes(orders.get(`${channel} ${b}`)!.orderNo, channel, steps)),
    );

    // Compared as one object, so that a failure names the case.
    const seen: Record<string, object> = {};
    const expected: Record<string, object> = {};
    for (const [name, order] of orders) {
      seen[name] = {
        outcomes: (await effects.channelCalls(order.orderNo, 'QUERY')).map((c) => c.outcome),
        history: await effects.history(order.orderNo),
        payments: (await effects.payments(order.orderNo)).length,
        anomalies: (await effects.anomalies(order.orderNo)).length,
        events: await effects.events(order.orderNo),
      };
      expected[name] = {
        outcomes: Array(steps).fill('FAILED'),
        history: ['->WAIT_PAY'],
        payments: 0,
        anomalies: 0,
        events: 0,
      };
    }
    expect(seen).toEqual(expected);

    // Nothing was claimed: the real notification still makes each payment.
    for (const [channel, behaviour] of cases) {
      const order = orders.get(`${channel} ${behaviour}`)!;
      expect(await notify(replicaA, channel, order)).toBe(SUCCESS_STATUS[channel]);
      expect(await effects.deliveryOutcomes(channel, order.transactionId)).toEqual(['PAID']);
      expect(await effects.status(order.orderNo)).toBe('PAID');
    }
  });

  it.each<[FakeChannel, number, number]>([
    ['WECHATPAY', 1000, 999],
    ['ALIPAY', 2000, 2100],
  ])(
    'should record an AMOUNT_MISMATCH anomaly when the %s answer paid %i with %i, and leave the order WAIT_PAY',
    async (channel, ordered, paid) => {
      const order = newOrder('QM', ordered);
      await register(order, channel);
      fake.payTrade({ channel, outTradeNo: order.orderNo, transactionId: order.transactionId, amount: paid });

      await queriedTimes(order.orderNo, channel, SCHEDULE_SECONDS.length);

      const anomalies = await effects.anomalies(order.orderNo);
      expect(anomalies).toHaveLength(1);
      expect(anomalies[0]).toMatchObject({
        type: 'AMOUNT_MISMATCH',
        channel,
        transaction_id: order.transactionId,
        order_amount: ordered,
        paid_amount: paid,
        status: 'OPEN',
      });
      expect(await effects.status(order.orderNo)).toBe('WAIT_PAY');
      expect(await effects.events(order.orderNo)).toBe(0);
      const calls = await effects.channelCalls(order.orderNo, 'QUERY');
      expect(calls[0]).toMatchObject({
        outcome: 'PAID',
        detail: 'AMOUNT_MISMATCH',
        transactionId: order.transactionId,
      });
    },
  );

  it.each<[string, { merchantId?: string; appid?: string }]>([
    ['an mchid', { merchantId: '1999999999' }],
    ['an appid', { appid: 'wx0000000000f0re16' }],
  ])('should not apply an answer naming %s that is not ours: recorded FOREIGN', async (_, foreign) => {
    const order = newOrder('QZ', 700);
    await register(order, 'WECHATPAY');
    fake.payTrade({
      channel: 'WECHATPAY',
      outTradeNo: order.orderNo,
      transactionId: order.transactionId,
      amount: 700,
      answersAnyAccount: true,
      ...foreign,
    });

    await queriedTimes(order.orderNo, 'WECHATPAY', SCHEDULE_SECONDS.length);

    const calls = await effects.channelCalls(order.orderNo, 'QUERY');
    expect(calls.map((c) => c.outcome)).toEqual(Array(SCHEDULE_SECONDS.length).fill('FOREIGN'));
    expect(await effects.status(order.orderNo)).toBe('WAIT_PAY');
    expect(await effects.payments(order.orderNo)).toHaveLength(0);
    expect(await effects.anomalies(order.orderNo)).toHaveLength(0);
    expect(await effects.events(order.orderNo)).toBe(0);
  });
});

describe('the query schedule after an outage', () => {
  /** An instance of its own, with the later schedule of a backlog after an outage. */
  const BACKLOG_SCHEDULE_SECONDS = [2, 3, 4, 8];
  let running: MediumContext | undefined;

  afterAll(async () => {
    await running?.close();
  });

  async function untilAge(registeredAt: Date, seconds: number): Promise<void> {
    await sleep(Math.max(0, registeredAt.getTime() + seconds * 1000 - Date.now()));
  }

  it('should ask once for the ages missed while no instance ran, then at the next age ahead only', async () => {
    // The suite's two instances stop first: while this runs, no instance is up but the ones started here.
    replicasStopped = true;
    await replicaA.close();
    await replicaB.close();
    const env = {
      ...platforms.env,
      ...fake.apiEnv,
      PAYMENT_QUERY_SCHEDULE_SECONDS: BACKLOG_SCHEDULE_SECONDS.join(','),
      PAYMENT_QUERY_POLL_INTERVAL_MS: '100',
      PAYMENT_QUERY_RATE_PER_SECOND: '1000',
      PAYMENT_QUERY_CONCURRENCY: '16',
    };
    const modules = [OrderModule, SettlementModule, TradeModule];
    running = await medium.another(() => env, modules);
    const orderNo = uniqueId('QB');
    await new Factories(running, platforms).order({ orderNo, amount: 600 });
    fake.openTrade({ channel: 'WECHATPAY', outTradeNo: orderNo, amount: 600 });
    await running.close();
    running = undefined;
    const registeredAt = (await effects.order(orderNo))!.created_at as Date;
    // The premise: nothing asked before the outage began.
    expect(fake.tradeCallsFor(orderNo)).toEqual([]);

    await untilAge(registeredAt, BACKLOG_SCHEDULE_SECONDS[2] + 0.5); // ages 2, 3 and 4 pass with no instance running
    running = await medium.another(() => env, modules);
    await eventually(`the query of ${orderNo} after the outage`, () => fake.tradeQueriesFor(orderNo) >= 2, 30_000);
    await untilAge(registeredAt, BACKLOG_SCHEDULE_SECONDS[3] + 1.5);

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
    expect(ages[2]).toBeGreaterThanOrEqual(BACKLOG_SCHEDULE_SECONDS[3] * 1000);
    expect(await effects.status(orderNo)).toBe('WAIT_PAY');
  });
});
