import { Pool } from 'mysql2/promise';
import { AdminModule } from '../../src/admin/admin.module';
import { AdminQueries } from '../../src/admin/admin.queries';
import { AnomalyView, OrderDetailView } from '../../src/admin/dto/admin-views';
import { Channel } from '../../src/domain/notification';
import { NotifyModule } from '../../src/intake/notify.module';
import { AdminRole } from '../../src/operators/admin.config';
import { OrderModule } from '../../src/order/order.module';
import { SettlementModule } from '../../src/settlement/settlement.module';
import { TradeModule } from '../../src/trade/trade.module';
import { signWechatpayBody, yuan } from '../../tools/simulator/platform-signers';
import { Factories } from '../support/factories';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { IntakeReply, receive } from '../support/medium-intake';
import { NotifyTestChannel, recentSecond } from '../support/notify-channels';
import { count, notificationsOnly, TestPlatforms, uniqueId } from '../support/test-app';

/**
 * What the admin queries (AdminQueries on the reporting pool) show of an order, its deliveries and
 * the callback statistics, for orders made by the order service and paid by signed notifications
 * handed to the notify use case (NotificationIntake) as the route hands them over, on the real
 * database without HTTP. Access
 * control, the 400s and 404s, and the audit of an admin's reads are in test/admin-api.e2e-spec.ts.
 */
let setup: Medium;
let platforms: TestPlatforms;
let ctx: MediumContext;
let make: Factories;
let pool: Pool;

beforeAll(async () => {
  setup = await startMedium((p) => notificationsOnly(p.env), {
    imports: [OrderModule, SettlementModule, TradeModule, NotifyModule, AdminModule],
    fake: false,
  });
  ({ platforms, ctx, make, pool } = setup);
});

afterAll(() => setup?.close());

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const anInstant = () => expect.stringMatching(ISO_INSTANT);
const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;

/** Exactly what a platform sends, so that a delivery can be compared byte for byte. */
interface Delivery {
  headers: Record<string, string>;
  body: string;
}

interface PaymentSpec {
  orderNo: string;
  transactionId: string;
  amount: number;
  paidAt?: Date;
}

interface TestChannel {
  name: NotifyTestChannel;
  payment(p: PaymentSpec): Delivery;
  post(d: Delivery): Promise<IntakeReply>;
  expectAck(reply: IntakeReply): void;
  paymentEventType: string;
  /** The header names a reconciliation needs, kept with every accepted delivery as sent. */
  keptHeaders: string[];
}

const ALIPAY_FORM = 'application/x-www-form-urlencoded; charset=utf-8';

const wechatpay: TestChannel = {
  name: Channel.Wechatpay,
  payment: (p) =>
    make.deliveries.wechatpayPayment({
      outTradeNo: p.orderNo,
      transactionId: p.transactionId,
      total: p.amount,
      successTime: p.paidAt,
    }),
  post: (d) => receive(ctx, 'wechatpay', d.headers, d.body),
  expectAck: (a) => expect({ status: a.status, body: a.body }).toEqual({ status: 204, body: '' }),
  paymentEventType: 'TRANSACTION.SUCCESS',
  keptHeaders: ['wechatpay-serial', 'wechatpay-signature', 'wechatpay-timestamp', 'wechatpay-nonce'],
};

const alipay: TestChannel = {
  name: Channel.Alipay,
  payment: (p) => ({
    headers: { 'content-type': ALIPAY_FORM },
    body: make.deliveries.alipayPayment({
      outTradeNo: p.orderNo,
      tradeNo: p.transactionId,
      totalAmount: yuan(p.amount),
      paidAt: p.paidAt,
    }),
  }),
  post: (d) => receive(ctx, 'alipay', d.headers, d.body),
  expectAck: (a) => expect({ status: a.status, body: a.body }).toEqual({ status: 200, body: 'success' }),
  paymentEventType: 'TRADE_SUCCESS',
  keptHeaders: ['content-type'],
};

const EACH_CHANNEL = [wechatpay, alipay].map((c) => [c.name, c] as const);

const registerOrder = async (amount: number, userId = 'u-1') => (await make.order({ amount, userId })).orderNo;

/** Delivers the payment `times` times, one after the other, each freshly signed; returns what was sent. */
async function pay(channel: TestChannel, p: PaymentSpec, times = 1): Promise<Delivery[]> {
  const sent: Delivery[] = [];
  for (let i = 0; i < times; i++) {
    const delivery = channel.payment(p);
    channel.expectAck(await channel.post(delivery));
    sent.push(delivery);
  }
  return sent;
}

const queries = () => ctx.get(AdminQueries);
const orderView = (orderNo: string): Promise<OrderDetailView> => ctx.inContext(() => queries().order(orderNo));
const deliveryView = (id: string, role: (typeof AdminRole)[keyof typeof AdminRole] = AdminRole.Viewer) =>
  ctx.inContext(() => queries().delivery(id, role));

/** The account each channel's notifications in this suite are paid through. */
function merchantIdOf(channel: string): string {
  return channel === 'WECHATPAY' ? platforms.wechatpay.mchid : platforms.alipay.appId;
}

function expectAnomalyView(
  view: AnomalyView | undefined,
  expected: { type: string; channel: Channel; offending: PaymentSpec; orderAmount: number },
): void {
  expect(view).toEqual({
    id: expect.stringMatching(/^[1-9]\d*$/),
    type: expected.type,
    orderNo: expected.offending.orderNo,
    transactionId: expected.offending.transactionId,
    channel: expected.channel,
    orderAmount: expected.orderAmount,
    paidAmount: expected.offending.amount,
    currency: 'CNY',
    status: 'OPEN',
    createdAt: anInstant(),
    updatedAt: anInstant(),
    resolution: null,
  });
}

/** The order's anomalies as the listing shows them, looking only at anomalies created since `since`. */
async function listedAnomaliesOf(orderNo: string, since: Date): Promise<AnomalyView[]> {
  const items: AnomalyView[] = [];
  let cursor: string | undefined;
  do {
    const page = await ctx.inContext(() => queries().anomalies({ from: since.toISOString(), limit: 200, cursor }));
    items.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return items.filter((a) => a.orderNo === orderNo);
}

describe('the order view (AdminQueries.order)', () => {
  it.each(EACH_CHANNEL)(
    'should show a %s-paid order with its history, its payment and each of its three deliveries',
    async (name, channel) => {
      const orderNo = await registerOrder(4200, 'u-admin-view');
      const payment = { orderNo, transactionId: uniqueId('T'), amount: 4200, paidAt: recentSecond() };
      const sent = await pay(channel, payment, 3);

      const detail = await orderView(orderNo);

      expect(detail.order).toEqual({
        orderNo,
        userId: 'u-admin-view',
        status: 'PAID',
        amount: 4200,
        currency: 'CNY',
        channel: name,
        merchantId: merchantIdOf(name),
        subMerchantId: null,
        channelOrderTime: null,
        transactionId: payment.transactionId,
        paidAt: payment.paidAt.toISOString(),
        createdAt: anInstant(),
        updatedAt: anInstant(),
      });
      expect(detail.history).toEqual([
        { fromStatus: null, toStatus: 'WAIT_PAY', event: 'REGISTER', cause: null, changedAt: anInstant() },
        {
          fromStatus: 'WAIT_PAY',
          toStatus: 'PAID',
          event: 'PAY',
          cause: payment.transactionId,
          changedAt: anInstant(),
        },
      ]);
      expect(detail.history[0].changedAt).toBe(detail.order.createdAt);
      expect(detail.history[1].changedAt).toBe(detail.order.updatedAt);
      expect(detail.payments).toEqual([
        {
          channel: name,
          transactionId: payment.transactionId,
          merchantId: merchantIdOf(name),
          amount: 4200,
          currency: 'CNY',
          refundReservedAmount: 0,
          firstReceivedAt: anInstant(),
        },
      ]);
      expect(detail.anomalies).toEqual([]);
      expect(detail.refunds).toEqual([]);

      const { deliveries } = detail;
      expect(deliveries.count).toBe(3);
      expect(deliveries.items.map((d) => d.outcome)).toEqual(['PAID', 'DUPLICATE', 'DUPLICATE']);
      for (const item of deliveries.items) {
        expect(item).toEqual({
          id: expect.stringMatching(/^[1-9]\d*$/),
          channel: name,
          eventType: channel.paymentEventType,
          transactionId: payment.transactionId,
          outcome: expect.any(String),
          receivedAt: anInstant(),
          processingMs: expect.any(Number),
          rawPayloadUrl: `/admin/deliveries/${item.id}`,
        });
        expect(item.processingMs).toBeGreaterThanOrEqual(0);
      }
      const receivedAt = deliveries.items.map((d) => Date.parse(d.receivedAt));
      expect(deliveries.firstReceivedAt).toBe(new Date(Math.min(...receivedAt)).toISOString());
      expect(deliveries.lastReceivedAt).toBe(new Date(Math.max(...receivedAt)).toISOString());

      // Each delivery's raw payload is the one delivered, in the order delivered (an admin sees the exact bytes).
      const raw = await Promise.all(deliveries.items.map((d) => deliveryView(d.id, AdminRole.Admin)));
      expect(raw.map((d) => d.rawBody)).toEqual(sent.map((d) => d.body));
    },
  );

  it('should show a closed order: registered, then closed, with no payment and no delivery', async () => {
    const orderNo = await registerOrder(1500);
    await make.close(orderNo);

    const detail = await orderView(orderNo);

    expect(detail.order).toMatchObject({
      orderNo,
      status: 'CLOSED',
      channel: null,
      transactionId: null,
      paidAt: null,
    });
    expect(detail.history).toEqual([
      { fromStatus: null, toStatus: 'WAIT_PAY', event: 'REGISTER', cause: null, changedAt: anInstant() },
      { fromStatus: 'WAIT_PAY', toStatus: 'CLOSED', event: 'CLOSE', cause: null, changedAt: anInstant() },
    ]);
    expect(detail.payments).toEqual([]);
    expect(detail.deliveries).toEqual({ count: 0, firstReceivedAt: null, lastReceivedAt: null, items: [] });
    expect(detail.anomalies).toEqual([]);
    expect(detail.refunds).toEqual([]);
  });

  it('should show a payment after the close as the anomaly it is, leaving the order and its history closed', async () => {
    const since = new Date();
    const orderNo = await registerOrder(3100);
    await make.close(orderNo);
    const offending = { orderNo, transactionId: uniqueId('T'), amount: 3100 };
    await pay(alipay, offending);

    const detail = await orderView(offending.orderNo);

    expect(detail.order).toMatchObject({ status: 'CLOSED', channel: null, transactionId: null, paidAt: null });
    expect(detail.history.map((h) => [h.fromStatus, h.toStatus, h.event])).toEqual([
      [null, 'WAIT_PAY', 'REGISTER'],
      ['WAIT_PAY', 'CLOSED', 'CLOSE'],
    ]);
    expect(detail.payments).toEqual([
      expect.objectContaining({ channel: 'ALIPAY', transactionId: offending.transactionId }),
    ]);
    expect(detail.deliveries.count).toBe(1);
    expect(detail.deliveries.items.map((d) => d.outcome)).toEqual(['PAID_AFTER_CLOSE']);
    expect(detail.anomalies).toHaveLength(1);
    expectAnomalyView(detail.anomalies[0], {
      type: 'PAID_AFTER_CLOSE',
      channel: 'ALIPAY',
      offending,
      orderAmount: offending.amount,
    });
    expect(detail.anomalies).toEqual(await listedAnomaliesOf(offending.orderNo, since));
  });

  it('should show both payments of an order paid twice, across channels, and the second as DUPLICATE_PAYMENT', async () => {
    const orderNo = await registerOrder(5000);
    const first = { orderNo, transactionId: uniqueId('T'), amount: 5000 };
    const second = { orderNo, transactionId: uniqueId('A'), amount: 5000 };
    await pay(wechatpay, first);
    await pay(alipay, second, 2);

    const detail = await orderView(orderNo);

    expect(detail.order).toMatchObject({ status: 'PAID', channel: 'WECHATPAY', transactionId: first.transactionId });
    expect(detail.history.map((h) => [h.event, h.cause])).toEqual([
      ['REGISTER', null],
      ['PAY', first.transactionId],
    ]);
    expect(detail.payments.map((p) => [p.channel, p.transactionId, p.amount])).toEqual([
      ['WECHATPAY', first.transactionId, 5000],
      ['ALIPAY', second.transactionId, 5000],
    ]);
    expect(detail.deliveries.count).toBe(3);
    expect(detail.deliveries.items.map((d) => [d.channel, d.outcome])).toEqual([
      ['WECHATPAY', 'PAID'],
      ['ALIPAY', 'DUPLICATE_PAYMENT'],
      ['ALIPAY', 'DUPLICATE'],
    ]);
    expect(detail.anomalies).toHaveLength(1);
    expectAnomalyView(detail.anomalies[0], {
      type: 'DUPLICATE_PAYMENT',
      channel: 'ALIPAY',
      offending: second,
      orderAmount: 5000,
    });
  });
});

describe('the delivery view (AdminQueries.delivery)', () => {
  it.each(EACH_CHANNEL)(
    'should give back the exact bytes and the kept headers of a %s delivery',
    async (name, channel) => {
      const payment = { orderNo: await registerOrder(6600), transactionId: uniqueId('T'), amount: 6600 };
      const [sent] = await pay(channel, payment);
      const [summary] = (await orderView(payment.orderNo)).deliveries.items;

      const delivery = await deliveryView(summary.id, AdminRole.Admin);

      expect(delivery).toEqual({
        ...summary,
        orderNo: payment.orderNo,
        headers: expect.any(Object),
        rawBody: sent.body,
        rawBodyBase64: Buffer.from(sent.body, 'utf8').toString('base64'),
        rawPrunedAt: null,
        // WeChat Pay APIv3 encrypts the resource (AdminQueries.decryptedContent opens it); Alipay nothing.
        encryptedContent: name === 'WECHATPAY',
      });
      expect(delivery).toMatchObject({ channel: name, outcome: 'PAID', transactionId: payment.transactionId });
      expect(Buffer.compare(Buffer.from(delivery.rawBodyBase64!, 'base64'), Buffer.from(sent.body, 'utf8'))).toBe(0);
      for (const header of channel.keptHeaders) expect(delivery.headers[header]).toBe(sent.headers[header]);
    },
  );

  it("should mask the payer's identifiers of an Alipay delivery for a viewer, and only those", async () => {
    const payment = { orderNo: await registerOrder(6800), transactionId: uniqueId('T'), amount: 6800 };
    const [sent] = await pay(alipay, payment);
    const [summary] = (await orderView(payment.orderNo)).deliveries.items;
    const buyerId = new URLSearchParams(sent.body).get('buyer_id')!;
    expect(buyerId).toMatch(/^2088\d{12}$/);

    const asViewer = await deliveryView(summary.id, AdminRole.Viewer);
    const asAdmin = await deliveryView(summary.id, AdminRole.Admin);

    expect(asAdmin.rawBody).toBe(sent.body);
    expect(asViewer.rawBody).not.toContain(buyerId);
    expect(Buffer.from(asViewer.rawBodyBase64!, 'base64').toString('latin1')).not.toContain(buyerId);
    const masked = new URLSearchParams(asViewer.rawBody!);
    expect(masked.get('buyer_id')).toBe(`20${'*'.repeat(12)}${buyerId.slice(-2)}`);
    masked.delete('buyer_id');
    const original = new URLSearchParams(sent.body);
    original.delete('buyer_id');
    expect(masked.toString()).toBe(original.toString());
  });

  it('should keep a WeChat Pay body’s non-ASCII text and unusual whitespace byte for byte', async () => {
    const payment = { orderNo: await registerOrder(6700), transactionId: uniqueId('T'), amount: 6700 };
    const genuine = wechatpay.payment(payment);
    const body = JSON.stringify({ ...JSON.parse(genuine.body), summary: '支付成功 ✓' }, null, '\t');
    const sent = { headers: signWechatpayBody(platforms.wechatpay.publicKeySigner, body), body };
    wechatpay.expectAck(await wechatpay.post(sent));
    const [summary] = (await orderView(payment.orderNo)).deliveries.items;

    const delivery = await deliveryView(summary.id);

    expect(delivery.rawBody).toBe(body);
    expect(Buffer.from(delivery.rawBodyBase64!, 'base64').equals(Buffer.from(body, 'utf8'))).toBe(true);
    expect(delivery.headers).toMatchObject({
      'wechatpay-signature': sent.headers['wechatpay-signature'],
      'wechatpay-serial': sent.headers['wechatpay-serial'],
      'wechatpay-timestamp': sent.headers['wechatpay-timestamp'],
      'wechatpay-nonce': sent.headers['wechatpay-nonce'],
    });
  });
});

describe('the decrypted resource (AdminQueries.decryptedContent)', () => {
  const OPENID = 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o';

  it("should give an admin the WeChat Pay resource decrypted, and a viewer the payer's identifiers masked", async () => {
    const payment = { orderNo: await registerOrder(200000), transactionId: uniqueId('T'), amount: 200000 };
    await pay(wechatpay, payment);
    const [{ id }] = (await orderView(payment.orderNo)).deliveries.items;
    const decrypted = (role: (typeof AdminRole)[keyof typeof AdminRole]) =>
      ctx.inContext(() => queries().decryptedContent(id, role));

    expect(await decrypted(AdminRole.Admin)).toMatchObject({
      deliveryId: id,
      channel: 'WECHATPAY',
      masked: false,
      content: {
        out_trade_no: payment.orderNo,
        transaction_id: payment.transactionId,
        trade_state: 'SUCCESS',
        payer: { openid: OPENID },
        amount: { total: 200000 },
      },
    });
    const viewed = (await decrypted(AdminRole.Viewer)) as unknown as {
      masked: boolean;
      content: { payer: { openid: string }; out_trade_no: string };
    };
    expect(viewed.masked).toBe(true);
    expect(viewed.content.payer.openid).toBe(`oU${'*'.repeat(OPENID.length - 4)}6o`);
    expect(viewed.content.out_trade_no).toBe(payment.orderNo);
    expect(JSON.stringify(viewed)).not.toContain(OPENID);
  });
});

describe('the callback statistics (AdminQueries.callbackStats)', () => {
  type Bucket = 'hour' | 'day';
  function bucketStart(bucket: Bucket, at: Date): Date {
    const span = bucket === 'hour' ? HOUR_MS : DAY_MS;
    return new Date(Math.floor(at.getTime() / span) * span);
  }
  const stats = (query: { from?: string; to?: string; bucket?: Bucket }) =>
    ctx.inContext(() => queries().callbackStats(query));

  it('should default to the last 24 hours up to now, by hour', async () => {
    const paying = Date.now();
    await pay(alipay, { orderNo: await registerOrder(100), transactionId: uniqueId('T'), amount: 100 });
    const asked = Date.now();
    const view = await stats({});
    const answered = Date.now();

    expect(view.bucket).toBe('hour');
    expect(Date.parse(view.to)).toBeGreaterThanOrEqual(asked);
    expect(Date.parse(view.to)).toBeLessThanOrEqual(answered);
    expect(Date.parse(view.to) - Date.parse(view.from)).toBe(DAY_MS);
    for (const row of view.rows) {
      expect(row.bucket).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:00:00\.000Z$/);
      expect(Date.parse(row.bucket)).toBeGreaterThanOrEqual(bucketStart('hour', new Date(view.from)).getTime());
      expect(Date.parse(row.bucket)).toBeLessThan(Date.parse(view.to));
    }
    // The payment just made is in the hour it was made in (this one, or the last if an hour began since).
    const paymentHour = bucketStart('hour', new Date(paying)).getTime();
    expect(view.rows.some((r) => r.channel === 'ALIPAY' && Date.parse(r.bucket) >= paymentHour)).toBe(true);
  });

  it('should accept up to 2000 buckets', async () => {
    const to = bucketStart('hour', new Date());
    const hours2000 = { from: new Date(to.getTime() - 2000 * HOUR_MS).toISOString(), to: to.toISOString() };
    const hours2001 = { from: new Date(to.getTime() - 2001 * HOUR_MS).toISOString(), to: to.toISOString() };
    expect((await stats(hours2000)).bucket).toBe('hour');
    expect((await stats({ ...hours2001, bucket: 'day' })).bucket).toBe('day');
  });
});

describe('the anomaly listing (AdminQueries.anomalies)', () => {
  it('should list 50 by default, newest first', async () => {
    const orderNo = await registerOrder(3000);
    await pay(wechatpay, { orderNo, transactionId: uniqueId('T'), amount: 3000 });
    await pay(wechatpay, { orderNo, transactionId: uniqueId('T'), amount: 3000 });
    const page = await ctx.inContext(() => queries().anomalies({}));
    const total = await count(pool, 'SELECT COUNT(*) FROM payment_anomaly');
    expect(page.items).toHaveLength(Math.min(total, 50));
    expect(page.nextCursor === null).toBe(total <= 50);
    const ids = page.items.map((a) => Number(a.id));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
  });
});
