import { Pool, RowDataPacket } from 'mysql2/promise';
import { FakePlatform } from '../tools/simulator/fake-platform';
import { FakePlatformSuite, startFakePlatformSuite } from './support/fake-platform-suite';
import { OrderEffects } from './support/order-effects';
import { paidOrder } from './support/paid-orders';
import { RefundEffects } from './support/refund-effects';
import { count, RunningApp, TestClient, TestPlatforms, uniqueId } from './support/test-app';

/**
 * The order service's refunds (POST /payment-orders/:orderNo/refunds): recorded once per refund
 * number, sent to a local fake of the channel's refund API (which checks the merchant's
 * signatures), settled like every refund, and announced by refund.succeeded or refund.closed.
 */
const THRESHOLD = 1000;

let platforms: TestPlatforms;
let fake: FakePlatform;
let shop: RunningApp;
let strictShop: RunningApp;
let client: TestClient;
let strictClient: TestClient;
let pool: Pool;
let orders: OrderEffects;
let refunds: RefundEffects;

let suite: FakePlatformSuite;

beforeAll(async () => {
  suite = await startFakePlatformSuite();
  ({ platforms, fake, pool } = suite);
  const env = {
    ...suite.env,
    REFUND_APPROVAL_THRESHOLD: String(THRESHOLD),
    REFUND_RETRY_BASE_DELAY_MS: '500',
    REFUND_RETRY_MAX_DELAY_MS: '1000',
    REFUND_POLL_INTERVAL_MS: '100',
  };
  shop = await suite.startApp(env);
  strictShop = await suite.startApp({ ...env, SHOP_REFUNDS_NEED_APPROVAL: 'true' });
  client = suite.clientOf(shop);
  strictClient = suite.clientOf(strictShop);
  orders = new OrderEffects(pool);
  refunds = new RefundEffects(pool);
});

afterAll(() => suite?.close());

const refundOf = (via: TestClient, orderNo: string, body: Record<string, unknown>, token?: string) =>
  via.api('POST', `/payment-orders/${orderNo}/refunds`, { reason: 'returned by the buyer', ...body }, token);

async function events(orderNo: string, type: string): Promise<Array<Record<string, unknown>>> {
  const [rows] = await pool.query<Array<RowDataPacket & { payload: string | Record<string, unknown> }>>(
    'SELECT payload FROM outbox_event WHERE order_no = ? AND type = ?',
    [orderNo, type],
  );
  return rows.map((r) =>
    typeof r.payload === 'string' ? (JSON.parse(r.payload) as Record<string, unknown>) : r.payload,
  );
}

describe('POST /payment-orders/:orderNo/refunds', () => {
  it('should refund once per refund number, above the approval threshold without a second admin, and announce it', async () => {
    const { orderNo, paidBy } = await paidOrder(client, 'WECHATPAY', 5000);
    const refundNo = uniqueId('SR');

    const answers = await Promise.all(
      Array.from({ length: 10 }, () => refundOf(client, orderNo, { refundNo, amount: 3000 })),
    );

    // The refund number's unique key decides: the first to commit makes it (201), every other finds it (200).
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    const created = answers.find((a) => a.status === 201)!;
    expect(created.json()).toMatchObject({ refundNo, orderNo, amount: 3000, currency: 'CNY', status: 'PENDING' });
    await refunds.statusIs(refundNo, 'SUCCEEDED');
    expect(fake.callsFor(refundNo)).toBe(1);
    expect(fake.calls.find((c) => c.refundNo === refundNo)).toMatchObject({ transactionId: paidBy, amount: 3000 });
    expect(await count(pool, 'SELECT COUNT(*) FROM refund WHERE order_no = ?', [orderNo])).toBe(1);
    expect(await orders.status(orderNo)).toBe('PARTIALLY_REFUNDED');
    expect(await events(orderNo, 'refund.succeeded')).toEqual([
      expect.objectContaining({ refundNo, orderNo, transactionId: paidBy, amount: 3000, currency: 'CNY' }),
    ]);

    const again = await refundOf(client, orderNo, { refundNo, amount: 3000 });
    expect(again.status).toBe(200);
    expect(again.json()).toMatchObject({ refundNo, status: 'SUCCEEDED', completedAt: expect.any(String) });
    expect(fake.callsFor(refundNo)).toBe(1);
  });

  it('should refuse what is not the same refund, more than is left, an unpaid order and a caller without the token', async () => {
    const { orderNo, paidBy } = await paidOrder(client, 'ALIPAY', 2000);
    const refundNo = uniqueId('SR');
    expect((await refundOf(client, orderNo, { refundNo, amount: 1500 })).status).toBe(201);
    await refunds.statusIs(refundNo, 'SUCCEEDED');

    const otherAmount = await refundOf(client, orderNo, { refundNo, amount: 500 });
    const overRefund = await refundOf(client, orderNo, { refundNo: uniqueId('SR'), amount: 501 });
    const unpaid = uniqueId('SO');
    expect((await client.registerOrder({ orderNo: unpaid, amount: 700 })).status).toBe(201);
    const notPaid = await refundOf(client, unpaid, { refundNo: uniqueId('SR') });
    const unknown = await refundOf(client, uniqueId('NO'), { refundNo: uniqueId('SR') });
    const badBody = await refundOf(client, orderNo, { refundNo: 'not a refund no', amount: -1 });
    const noToken = await refundOf(client, orderNo, { refundNo: uniqueId('SR') }, 'wrong-token');

    expect([otherAmount, overRefund, notPaid, unknown, badBody, noToken].map((a) => a.status)).toEqual([
      409, 422, 409, 404, 400, 401,
    ]);
    expect(otherAmount.json().error).toBe('RefundConflict');
    expect(overRefund.json().error).toBe('OverRefund');
    expect(notPaid.json().error).toBe('OrderConflict');
    expect(await count(pool, 'SELECT COUNT(*) FROM refund WHERE order_no IN (?, ?)', [orderNo, unpaid])).toBe(1);
    expect(await refunds.reserved(paidBy)).toBe(1500);
  });

  it('should announce a refund the channel closed with refund.closed, and give its amount back', async () => {
    const { orderNo, paidBy } = await paidOrder(client, 'WECHATPAY', 4000);
    const refundNo = uniqueId('SR');
    fake.script(refundNo, { reject: 'INVALID_REQUEST', message: 'the refund is refused' });

    expect((await refundOf(client, orderNo, { refundNo })).status).toBe(201);

    await refunds.statusIs(refundNo, 'CLOSED');
    expect(await refunds.reserved(paidBy)).toBe(0);
    expect(await orders.status(orderNo)).toBe('PAID');
    expect(await events(orderNo, 'refund.closed')).toEqual([
      expect.objectContaining({ refundNo, orderNo, transactionId: paidBy, amount: 4000 }),
    ]);
    expect(await events(orderNo, 'refund.succeeded')).toEqual([]);
  });

  it('should wait for a second admin above the threshold with SHOP_REFUNDS_NEED_APPROVAL=true, and announce a rejection', async () => {
    const { orderNo } = await paidOrder(strictClient, 'WECHATPAY', 3000);
    const refundNo = uniqueId('SR');

    const answer = await refundOf(strictClient, orderNo, { refundNo, amount: THRESHOLD });

    expect(answer.status).toBe(201);
    expect(answer.json().status).toBe('AWAITING_APPROVAL');
    expect(fake.callsFor(refundNo)).toBe(0);
    const rejected = await strictClient.admin('POST', `/admin/refunds/${refundNo}/reject`, platforms.admins.admin, {
      reason: 'not returned yet',
    });
    expect(rejected.status).toBe(200);
    expect((await refunds.row(refundNo))?.status).toBe('REJECTED');
    expect(await events(orderNo, 'refund.closed')).toEqual([expect.objectContaining({ refundNo, amount: THRESHOLD })]);
    expect(fake.callsFor(refundNo)).toBe(0);
  });
});
