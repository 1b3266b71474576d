import { Pool } from 'mysql2/promise';
import { AdminModule } from '../../src/admin/admin.module';
import { AdminQueries, CallbackStatsRow } from '../../src/admin/admin.queries';
import { AnomalyQueryDto, CallbackStatsQueryDto, OrderQueryDto } from '../../src/admin/dto/admin-queries.dto';
import { AnomalyView, OrderListItemView, OrderPageView } from '../../src/admin/dto/admin-views';
import { AnomalyType } from '../../src/payments/anomaly/anomaly.entity';
import { Channel } from '../../src/domain/notification';
import { OrderModule } from '../../src/order/order.module';
import { OrderStatus } from '../../src/order/order-status';
import { SettlementModule } from '../../src/settlement/settlement.module';
import { TradeModule } from '../../src/trade/trade.module';
import { Factories, PaymentSpec } from '../support/factories';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { count, notificationsOnly, uniqueId } from '../support/test-app';
import { NOTIFY_TEST_CHANNELS, NotifyTestChannel } from '../support/notify-channels';

/**
 * The anomalies settlement records, and the admin listing's reads of them (AdminQueries on the
 * reporting pool), on the real database without HTTP. The listing's answers over HTTP (its 400s, its default page, access control,
 * the order and delivery views, the statistics) are in test/admin-api.e2e-spec.ts.
 */
let setup: Medium;
let ctx: MediumContext;
let make: Factories;
let pool: Pool;

beforeAll(async () => {
  setup = await startMedium((p) => notificationsOnly(p.env), {
    imports: [OrderModule, SettlementModule, TradeModule, AdminModule],
    fake: false,
  });
  ({ ctx, make, pool } = setup);
});

afterAll(() => setup?.close());

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const anInstant = () => expect.stringMatching(ISO_INSTANT);
const HOUR_MS = 3600_000;

type Offending = Required<Pick<PaymentSpec, 'orderNo' | 'transactionId' | 'amount'>>;

interface AnomalyScenario {
  type: AnomalyType;
  orderAmount: number;
  paidAmount: number;
  /** Puts the fresh WAIT_PAY order where a payment of `paidAmount` becomes this anomaly. */
  arrange(channel: Channel, orderNo: string): Promise<void>;
}

const ANOMALY_SCENARIOS: AnomalyScenario[] = [
  {
    type: AnomalyType.DuplicatePayment,
    orderAmount: 3000,
    paidAmount: 3000,
    arrange: async (channel, orderNo) => {
      expect(await make.payment(channel, { orderNo, amount: 3000 })).toBe('PAID');
    },
  },
  {
    type: AnomalyType.PaidAfterClose,
    orderAmount: 3100,
    paidAmount: 3100,
    arrange: async (_channel, orderNo) => {
      expect(await make.close(orderNo)).toMatchObject({ status: 'CLOSED' });
    },
  },
  { type: AnomalyType.AmountMismatch, orderAmount: 3200, paidAmount: 3199, arrange: () => Promise.resolve() },
];

const scenario = (type: AnomalyType) => ANOMALY_SCENARIOS.find((s) => s.type === type)!;

/** A new order with one anomaly of `type`; returns the offending payment. */
async function makeAnomaly(type: AnomalyType, channel: Channel): Promise<Offending> {
  const s = scenario(type);
  const { orderNo } = await make.order({ amount: s.orderAmount });
  await s.arrange(channel, orderNo);
  const offending = { orderNo, transactionId: uniqueId('T'), amount: s.paidAmount };
  expect(await make.payment(channel, offending)).toBe(type);
  return offending;
}

const queries = () => ctx.get(AdminQueries);
const list = (query: AnomalyQueryDto) => ctx.inContext(() => queries().anomalies(query));

/** Every page of an anomaly listing, following nextCursor. */
async function anomalyPages(query: AnomalyQueryDto) {
  const pages: Array<{ items: AnomalyView[]; nextCursor: string | null }> = [];
  let cursor: string | undefined;
  do {
    const page = await list({ ...query, cursor });
    pages.push(page);
    cursor = page.nextCursor ?? undefined;
    if (pages.length > 100) throw new Error('the anomaly listing never ends');
  } while (cursor !== undefined);
  return pages;
}

async function listedAnomaliesOf(orderNo: string, since: Date): Promise<AnomalyView[]> {
  const pages = await anomalyPages({ from: since.toISOString(), limit: 200 });
  return pages.flatMap((p) => p.items).filter((a) => a.orderNo === orderNo);
}

describe('anomalies', () => {
  describe.each(NOTIFY_TEST_CHANNELS.map((c) => [c] as const))('%s', (channel) => {
    it.each(ANOMALY_SCENARIOS.map((s) => [s.type, s] as const))(
      'should list exactly one %s for the offending transaction, however often and concurrently it is delivered',
      async (type, s) => {
        const since = new Date();
        const { orderNo } = await make.order({ amount: s.orderAmount });
        await s.arrange(channel, orderNo);
        const offending = { orderNo, transactionId: uniqueId('T'), amount: s.paidAmount };

        // Four freshly signed deliveries at once, as a platform retrying on a slow ack sends them, then two more.
        const concurrent = await Promise.all(Array.from({ length: 4 }, () => make.payment(channel, offending)));
        const later = [await make.payment(channel, offending), await make.payment(channel, offending)];

        expect([...concurrent, ...later].sort()).toEqual([type, ...Array<string>(5).fill('DUPLICATE')].sort());
        expect(
          await count(pool, 'SELECT COUNT(*) FROM payment_anomaly WHERE channel = ? AND transaction_id = ?', [
            channel,
            offending.transactionId,
          ]),
        ).toBe(1);
        const listed = await listedAnomaliesOf(orderNo, since);
        expect(listed).toHaveLength(1);
        expect(listed[0]).toEqual({
          id: expect.stringMatching(/^[1-9]\d*$/),
          type,
          orderNo,
          transactionId: offending.transactionId,
          channel,
          orderAmount: s.orderAmount,
          paidAmount: offending.amount,
          currency: 'CNY',
          status: 'OPEN',
          resolution: null,
          createdAt: anInstant(),
          updatedAt: anInstant(),
        });
        expect(Date.parse(listed[0].createdAt)).toBeGreaterThanOrEqual(since.getTime());
        expect(Date.parse(listed[0].createdAt)).toBeLessThanOrEqual(Date.now());
      },
    );
  });

  it('should filter by type and by status', async () => {
    const since = new Date();
    const made = {
      DUPLICATE_PAYMENT: await makeAnomaly(AnomalyType.DuplicatePayment, Channel.Alipay),
      PAID_AFTER_CLOSE: await makeAnomaly(AnomalyType.PaidAfterClose, Channel.Wechatpay),
      AMOUNT_MISMATCH: await makeAnomaly(AnomalyType.AmountMismatch, Channel.Alipay),
    };
    const ours = new Set(Object.values(made).map((p) => p.transactionId));
    const listedOf = async (query: AnomalyQueryDto) =>
      (await anomalyPages({ from: since.toISOString(), limit: 200, ...query })).flatMap((p) => p.items);

    for (const [type, payment] of Object.entries(made)) {
      const listed = await listedOf({ type: type as AnomalyType });
      expect(listed.every((a) => a.type === type)).toBe(true);
      expect(listed.filter((a) => ours.has(a.transactionId)).map((a) => a.transactionId)).toEqual([
        payment.transactionId,
      ]);
    }

    const open = await listedOf({ status: 'OPEN' });
    expect(open.every((a) => a.status === 'OPEN')).toBe(true);
    expect(open.filter((a) => ours.has(a.transactionId))).toHaveLength(3);
    for (const status of ['REFUNDING', 'RESOLVED'] as const) {
      const listed = await listedOf({ status });
      expect(listed.every((a) => a.status === status)).toBe(true);
      expect(listed.filter((a) => ours.has(a.transactionId))).toEqual([]);
    }
    const both = await listedOf({ type: AnomalyType.PaidAfterClose, status: 'OPEN' });
    expect(both.filter((a) => ours.has(a.transactionId)).map((a) => a.transactionId)).toEqual([
      made.PAID_AFTER_CLOSE.transactionId,
    ]);
  });

  it('should include `from` and exclude `to` at the millisecond of creation, in any ISO 8601 offset', async () => {
    const since = new Date();
    const payment = await makeAnomaly(AnomalyType.AmountMismatch, Channel.Wechatpay);
    const [anomaly] = await listedAnomaliesOf(payment.orderNo, since);
    const createdAt = Date.parse(anomaly.createdAt);
    const at = (ms: number) => new Date(ms).toISOString();
    /** The same instant written in Beijing time, e.g. 2026-11-30T06:00:00.123+08:00. */
    const inBeijing = (ms: number) => `${new Date(ms + 8 * HOUR_MS).toISOString().slice(0, 23)}+08:00`;
    const isListed = async (query: AnomalyQueryDto) =>
      (await anomalyPages({ ...query, type: AnomalyType.AmountMismatch, limit: 200 }))
        .flatMap((p) => p.items)
        .some((a) => a.id === anomaly.id);

    expect(await isListed({ from: at(createdAt) })).toBe(true);
    expect(await isListed({ from: at(createdAt + 1) })).toBe(false);
    expect(await isListed({ from: at(createdAt - 1), to: at(createdAt) })).toBe(false);
    expect(await isListed({ from: at(createdAt), to: at(createdAt + 1) })).toBe(true);
    expect(await isListed({ to: at(createdAt) })).toBe(false);
    expect(await isListed({ to: at(createdAt + 1) })).toBe(true);
    expect(await isListed({ from: inBeijing(createdAt), to: inBeijing(createdAt + 1) })).toBe(true);
    expect(await isListed({ from: inBeijing(createdAt + 1) })).toBe(false);
  });

  it('should page newest first with limit and nextCursor, listing each anomaly exactly once', async () => {
    const since = new Date();
    const made: Offending[] = [];
    for (const channel of [Channel.Wechatpay, Channel.Alipay, Channel.Wechatpay, Channel.Alipay, Channel.Wechatpay]) {
      made.push(await makeAnomaly(AnomalyType.AmountMismatch, channel));
    }
    const until = new Date(Date.now() + 1);
    const window = { type: AnomalyType.AmountMismatch, from: since.toISOString(), to: until.toISOString() };

    const pages = await anomalyPages({ ...window, limit: 2 });

    expect(pages.map((p) => p.items.length)).toEqual([2, 2, 1]);
    expect(pages.map((p) => p.nextCursor === null)).toEqual([false, false, true]);
    const items = pages.flatMap((p) => p.items);
    // Newest first: the reverse of the order they were made in, ids strictly descending.
    expect(items.map((a) => a.transactionId)).toEqual(made.map((p) => p.transactionId).reverse());
    const ids = items.map((a) => Number(a.id));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(new Set(ids).size).toBe(5);

    // A page that holds everything left has no next page.
    expect(await list({ ...window, limit: 5 })).toEqual({ items, nextCursor: null });
    expect(await list({ ...window, limit: 3, cursor: String(ids[1]) })).toEqual({
      items: items.slice(2),
      nextCursor: null,
    });
  });
});

describe('callback statistics', () => {
  type Bucket = 'hour' | 'day';
  type Counters = Pick<
    CallbackStatsRow,
    'deliveries' | 'paymentDeliveries' | 'distinctPayments' | 'duplicateDeliveries'
  >;
  const NO_ROW: Counters = { deliveries: 0, paymentDeliveries: 0, distinctPayments: 0, duplicateDeliveries: 0 };
  const DAY_MS = 24 * HOUR_MS;
  /** Each channel's notification that pays nothing: WeChat Pay's NOTPAY, Alipay's TRADE_CLOSED. */
  const NOT_PAYING: Record<NotifyTestChannel, string> = {
    [Channel.Wechatpay]: 'NOTPAY',
    [Channel.Alipay]: 'TRADE_CLOSED',
  };

  const stats = (query: CallbackStatsQueryDto) => ctx.inContext(() => queries().callbackStats(query));

  function bucketStart(bucket: Bucket, at: Date): Date {
    const span = bucket === 'hour' ? HOUR_MS : DAY_MS;
    return new Date(Math.floor(at.getTime() / span) * span);
  }

  /** Each channel's row of the one bucket starting at `start`. */
  async function rowsOfBucket(bucket: Bucket, start: Date): Promise<Partial<Record<Channel, CallbackStatsRow>>> {
    const span = bucket === 'hour' ? HOUR_MS : DAY_MS;
    const from = start.toISOString();
    const to = new Date(start.getTime() + span).toISOString();
    const view = await stats({ from, to, bucket: bucket });
    expect({ from: view.from, to: view.to, bucket: view.bucket }).toEqual({ from, to, bucket });
    for (const row of view.rows) expect(row.bucket).toBe(from);
    return Object.fromEntries(view.rows.map((r) => [r.channel, r]));
  }

  function increase(before: CallbackStatsRow | undefined, after: CallbackStatsRow | undefined): Counters {
    const base = before ?? NO_ROW;
    const now = after ?? NO_ROW;
    return {
      deliveries: now.deliveries - base.deliveries,
      paymentDeliveries: now.paymentDeliveries - base.paymentDeliveries,
      distinctPayments: now.distinctPayments - base.distinctPayments,
      duplicateDeliveries: now.duplicateDeliveries - base.duplicateDeliveries,
    };
  }

  function expectConsistent(row: CallbackStatsRow | undefined): void {
    expect(row).toBeDefined();
    const r = row!;
    expect(r.duplicateDeliveries).toBe(r.paymentDeliveries - r.distinctPayments);
    expect(Object.values(r.outcomes).reduce((sum, n) => sum + n, 0)).toBe(r.deliveries);
    expect(r.duplicateRate).toBe(Math.round((r.duplicateDeliveries / r.paymentDeliveries) * 10000) / 10000);
    expect(Number.isInteger(r.maxProcessingMs)).toBe(true);
    expect(r.maxProcessingMs).toBeGreaterThanOrEqual(0);
    expect(typeof r.avgProcessingMs).toBe('number');
    expect(r.avgProcessingMs).toBeGreaterThanOrEqual(0);
    expect(r.avgProcessingMs).toBeLessThanOrEqual(r.maxProcessingMs!);
    expect(Math.round(r.avgProcessingMs! * 10)).toBeCloseTo(r.avgProcessingMs! * 10, 6);
  }

  /** Deliveries of each payment, one after the other, each freshly signed. */
  async function deliverPayments(channel: Channel, deliveriesPerPayment: number[]): Promise<void> {
    for (const times of deliveriesPerPayment) {
      const { orderNo } = await make.order({ amount: 800 });
      const transactionId = uniqueId('T');
      for (let i = 0; i < times; i++) await make.payment(channel, { orderNo, transactionId, amount: 800 });
    }
  }

  async function deliverNotPaying(channel: NotifyTestChannel): Promise<void> {
    const { orderNo } = await make.order({ amount: 900 });
    expect(await make.payment(channel, { orderNo, amount: 900, status: NOT_PAYING[channel] })).toBe('NOT_PAYING');
  }

  /**
   * The current hour's and day's rows before and after `traffic`; measured again (with new traffic)
   * when an hour boundary fell in between, since the two reads would then be of different buckets.
   */
  async function measure(traffic: () => Promise<void>) {
    for (let attempt = 1; ; attempt++) {
      const hour = bucketStart('hour', new Date());
      const day = bucketStart('day', hour);
      const before = { hour: await rowsOfBucket('hour', hour), day: await rowsOfBucket('day', day) };
      await traffic();
      const after = { hour: await rowsOfBucket('hour', hour), day: await rowsOfBucket('day', day) };
      if (bucketStart('hour', new Date()).getTime() === hour.getTime()) return { before, after };
      if (attempt === 2) throw new Error('two hour boundaries during one measurement');
    }
  }

  it('should count deliveries, payments and duplicates per channel in the current hour and day', async () => {
    const { before, after } = await measure(async () => {
      await deliverPayments(Channel.Wechatpay, [1, 2, 4]);
      await deliverNotPaying(Channel.Wechatpay); // TRANSACTION.SUCCESS whose trade_state is NOTPAY: no payment
      await deliverPayments(Channel.Alipay, [3, 3]);
      await deliverNotPaying(Channel.Alipay); // TRADE_CLOSED: no payment
    });

    const expected: Record<NotifyTestChannel, Counters> = {
      WECHATPAY: { deliveries: 8, paymentDeliveries: 7, distinctPayments: 3, duplicateDeliveries: 4 },
      ALIPAY: { deliveries: 7, paymentDeliveries: 6, distinctPayments: 2, duplicateDeliveries: 4 },
    };
    for (const name of Object.keys(expected) as NotifyTestChannel[]) {
      expect({ name, hour: increase(before.hour[name], after.hour[name]) }).toEqual({ name, hour: expected[name] });
      expect({ name, day: increase(before.day[name], after.day[name]) }).toEqual({ name, day: expected[name] });
      expectConsistent(after.hour[name]);
      expectConsistent(after.day[name]);
      expect(after.day[name]!.deliveries).toBeGreaterThanOrEqual(after.hour[name]!.deliveries);
      expect(after.day[name]!.maxProcessingMs).toBeGreaterThanOrEqual(after.hour[name]!.maxProcessingMs!);
      // The same deliveries by outcome, for the console's chart per outcome.
      expect({ name, outcomes: outcomeIncrease(before.hour[name], after.hour[name]) }).toEqual({
        name,
        outcomes: {
          PAID: expected[name].distinctPayments,
          DUPLICATE: expected[name].duplicateDeliveries,
          NOT_PAYING: 1,
        },
      });
    }
  });

  function outcomeIncrease(before: CallbackStatsRow | undefined, after: CallbackStatsRow | undefined) {
    const grown: Record<string, number> = {};
    for (const [outcome, n] of Object.entries(after?.outcomes ?? {})) {
      const by = n - (before?.outcomes[outcome] ?? 0);
      if (by !== 0) grown[outcome] = by;
    }
    return grown;
  }

  it('should count a delivery from its receivedAt on (from inclusive) and only before `to` (exclusive)', async () => {
    const { orderNo } = await make.order({ amount: 300 });
    expect(await make.payment(Channel.Alipay, { orderNo, amount: 300 })).toBe('PAID');
    const [delivery] = (await ctx.inContext(() => queries().order(orderNo))).deliveries.items;
    const receivedAt = Date.parse(delivery.receivedAt);
    const alipayRow = async (from: number, to: number) => {
      const view = await stats({ from: new Date(from).toISOString(), to: new Date(to).toISOString() });
      return view.rows.find((r) => r.channel === 'ALIPAY');
    };

    expect(await alipayRow(receivedAt, receivedAt + 1)).toEqual({
      bucket: bucketStart('hour', new Date(receivedAt)).toISOString(),
      channel: 'ALIPAY',
      deliveries: 1,
      paymentDeliveries: 1,
      distinctPayments: 1,
      duplicateDeliveries: 0,
      duplicateRate: 0,
      avgProcessingMs: delivery.processingMs,
      maxProcessingMs: delivery.processingMs,
      outcomes: { PAID: 1 },
    });
    expect(await alipayRow(receivedAt - 1, receivedAt)).toBeUndefined();
    expect(await alipayRow(receivedAt + 1, receivedAt + HOUR_MS)).toBeUndefined();
  });
});

/**
 * The order list (AdminQueries.orders), newest first, filtered and paged by keyset. Its 400s,
 * the CSV export and its audit are in test/admin-orders.e2e-spec.ts. Other suites share the database: a filter is shown by what it keeps (every listed order
 * matches it) and by this suite's own orders among them.
 */
describe('orders', () => {
  let since: string;
  /** This describe's orders, oldest first: two paid by WeChat Pay, one waiting for WeChat Pay, one for Alipay, a formula-like one. */
  const mine: Record<'paid1' | 'paid2' | 'waiting' | 'alipay' | 'formula', string> = {
    paid1: '',
    paid2: '',
    waiting: '',
    alipay: '',
    formula: '',
  };
  const paidBy: Record<string, string> = {};

  beforeAll(async () => {
    since = new Date(Date.now() - 1000).toISOString();
    for (const key of ['paid1', 'paid2', 'waiting', 'alipay'] as const) {
      mine[key] = uniqueId('OL');
      const channel = key === 'alipay' ? Channel.Alipay : Channel.Wechatpay;
      await make.order({ orderNo: mine[key], amount: 200000, channel });
      // Apart by more than the column's millisecond: the list's order is the order of creation.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    mine.formula = `-${uniqueId('F').slice(0, 20)}`;
    await make.order({ orderNo: mine.formula, amount: 1999, channel: Channel.Wechatpay });
    for (const key of ['paid1', 'paid2'] as const) {
      paidBy[key] = uniqueId('T');
      expect(
        await make.payment(Channel.Wechatpay, { orderNo: mine[key], transactionId: paidBy[key], amount: 200000 }),
      ).toBe('PAID');
    }
  });

  const orders = (query: OrderQueryDto) => ctx.inContext(() => queries().orders(query));
  const ours = (items: OrderListItemView[]) =>
    items.map((o) => o.orderNo).filter((n) => Object.values(mine).includes(n));

  it('should list orders newest first, filtered by status, channel and time', async () => {
    const page = await orders({ status: OrderStatus.Paid, channel: Channel.Wechatpay, from: since });

    expect(page.items.every((o) => o.status === 'PAID' && o.channel === 'WECHATPAY')).toBe(true);
    expect(page.items.every((o) => o.createdAt >= since)).toBe(true);
    expect(ours(page.items)).toEqual([mine.paid2, mine.paid1]);
    expect(page.items.find((o) => o.orderNo === mine.paid1)).toMatchObject({
      amount: 200000,
      currency: 'CNY',
      transactionId: paidBy.paid1,
    });
    const alipay = (await orders({ channel: Channel.Alipay, from: since })).items;
    expect(alipay.every((o) => o.channel === 'ALIPAY')).toBe(true);
    expect(ours(alipay)).toEqual([mine.alipay]);
    const waiting = (await orders({ status: OrderStatus.WaitPay, from: since })).items;
    expect(ours(waiting)).toEqual([mine.formula, mine.alipay, mine.waiting]);
  });

  it('should walk the pages by cursor, each order once, in the order of one long page', async () => {
    const all = await orders({ from: since, limit: 200 });
    const walked: string[] = [];
    let cursor: string | null = '';
    for (let pages = 0; cursor !== null && pages < 50; pages += 1) {
      const page: OrderPageView = await orders({ from: since, limit: 2, cursor: cursor || undefined });
      expect(page.items.length).toBeLessThanOrEqual(2);
      walked.push(...page.items.map((o) => o.orderNo));
      cursor = page.nextCursor;
    }

    expect(cursor).toBeNull();
    expect(ours(all.items)).toEqual([mine.formula, mine.alipay, mine.waiting, mine.paid2, mine.paid1]);
    expect(walked.filter((n) => Object.values(mine).includes(n))).toEqual(ours(all.items));
    expect(new Set(walked).size).toBe(walked.length);
  });
});
