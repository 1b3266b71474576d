import { Pool, RowDataPacket } from 'mysql2/promise';
import { Channel } from '../../src/domain/notification';
import { Refunds } from '../../src/refund/refunds';
import { FakePlatform } from '../../tools/simulator/fake-platform';
import { Factories } from '../support/factories';
import { domainFailure, Medium, MediumContext, startMedium } from '../support/medium';
import { OrderEffects } from '../support/order-effects';
import { RefundEffects } from '../support/refund-effects';
import { count, uniqueId } from '../support/test-app';

/**
 * The order service's refunds (Refunds.requestFromShop, behind POST /payment-orders/:orderNo/refunds):
 * recorded once per refund number, sent to a local fake of the channel's refund API (which checks
 * the merchant's signatures), settled like every refund, and announced by refund.succeeded or
 * refund.closed. test/refunds.e2e-spec.ts keeps the status codes, the body
 * validation and the internal token; SHOP_REFUNDS_NEED_APPROVAL is in refund-approval.medium-spec.ts.
 */
const THRESHOLD = 1000;

let setup: Medium;
let fake: FakePlatform;
let ctx: MediumContext;
let make: Factories;
let pool: Pool;
let orders: OrderEffects;
let refunds: RefundEffects;

beforeAll(async () => {
  setup = await startMedium({
    REFUND_APPROVAL_THRESHOLD: String(THRESHOLD),
    REFUND_RETRY_BASE_DELAY_MS: '500',
    REFUND_RETRY_MAX_DELAY_MS: '1000',
    REFUND_POLL_INTERVAL_MS: '100',
  });
  ({ fake, ctx, make, pool } = setup);
  orders = new OrderEffects(pool);
  refunds = new RefundEffects(pool);
});

afterAll(() => setup?.close());

const refundOf = (orderNo: string, request: { refundNo: string; amount?: number }) =>
  ctx.get(Refunds).requestFromShop(orderNo, { reason: 'returned by the buyer', ...request });

async function events(orderNo: string, type: string): Promise<Array<Record<string, unknown>>> {
  const [rows] = await pool.query<Array<RowDataPacket & { payload: string | Record<string, unknown> }>>(
    'SELECT payload FROM outbox_event WHERE order_no = ? AND type = ?',
    [orderNo, type],
  );
  return rows.map((r) =>
    typeof r.payload === 'string' ? (JSON.parse(r.payload) as Record<string, unknown>) : r.payload,
  );
}

describe(`${Refunds.name}.requestFromShop`, () => {
  it('should refund once per refund number, above the approval threshold without a second admin, and announce it', async () => {
    const { orderNo, paidBy } = await make.paidOrder(Channel.Wechatpay, 5000);
    const refundNo = uniqueId('SR');

    const answers = await Promise.all(Array.from({ length: 10 }, () => refundOf(orderNo, { refundNo, amount: 3000 })));

    // The refund number's unique key decides: the first to commit makes it, every other finds it.
    expect(answers.filter((a) => a.created)).toHaveLength(1);
    const created = answers.find((a) => a.created)!.refund;
    expect(created).toMatchObject({ refundNo, orderNo, amount: 3000, currency: 'CNY', status: 'PENDING' });
    await refunds.statusIs(refundNo, 'SUCCEEDED');
    expect(fake.callsFor(refundNo)).toBe(1);
    expect(fake.calls.find((c) => c.refundNo === refundNo)).toMatchObject({ transactionId: paidBy, amount: 3000 });
    expect(await count(pool, 'SELECT COUNT(*) FROM refund WHERE order_no = ?', [orderNo])).toBe(1);
    expect(await orders.status(orderNo)).toBe('PARTIALLY_REFUNDED');
    expect(await events(orderNo, 'refund.succeeded')).toEqual([
      expect.objectContaining({ refundNo, orderNo, transactionId: paidBy, amount: 3000, currency: 'CNY' }),
    ]);

    const again = await refundOf(orderNo, { refundNo, amount: 3000 });
    expect(again.created).toBe(false);
    expect(again.refund).toMatchObject({ refundNo, status: 'SUCCEEDED', completedAt: expect.any(Date) });
    expect(fake.callsFor(refundNo)).toBe(1);
  });

  it('should refuse what is not the same refund, more than is left, an unpaid or unknown order, writing nothing', async () => {
    const { orderNo, paidBy } = await make.paidOrder(Channel.Alipay, 2000);
    const refundNo = uniqueId('SR');
    expect((await refundOf(orderNo, { refundNo, amount: 1500 })).created).toBe(true);
    await refunds.statusIs(refundNo, 'SUCCEEDED');

    const otherAmount = await domainFailure(refundOf(orderNo, { refundNo, amount: 500 }));
    const overRefund = await domainFailure(refundOf(orderNo, { refundNo: uniqueId('SR'), amount: 501 }));
    const { orderNo: unpaid } = await make.order({ amount: 700 });
    const notPaid = await domainFailure(refundOf(unpaid, { refundNo: uniqueId('SR') }));
    const unknown = await domainFailure(refundOf(uniqueId('NO'), { refundNo: uniqueId('SR') }));

    expect([otherAmount, overRefund, notPaid, unknown].map((a) => a.status)).toEqual([409, 422, 409, 404]);
    expect(otherAmount.code).toBe('RefundConflict');
    expect(overRefund.code).toBe('OverRefund');
    expect(notPaid.code).toBe('OrderConflict');
    expect(await count(pool, 'SELECT COUNT(*) FROM refund WHERE order_no IN (?, ?)', [orderNo, unpaid])).toBe(1);
    expect(await refunds.reserved(paidBy)).toBe(1500);
  });

  it('should announce a refund the channel closed with refund.closed, and give its amount back', async () => {
    const { orderNo, paidBy } = await make.paidOrder(Channel.Wechatpay, 4000);
    const refundNo = uniqueId('SR');
    fake.script(refundNo, { reject: 'INVALID_REQUEST', message: 'the refund is refused' });

    expect((await refundOf(orderNo, { refundNo })).created).toBe(true);

    await refunds.statusIs(refundNo, 'CLOSED');
    expect(await refunds.reserved(paidBy)).toBe(0);
    expect(await orders.status(orderNo)).toBe('PAID');
    expect(await events(orderNo, 'refund.closed')).toEqual([
      expect.objectContaining({ refundNo, orderNo, transactionId: paidBy, amount: 4000 }),
    ]);
    expect(await events(orderNo, 'refund.succeeded')).toEqual([]);
  });

  it('should refund what is left of the payment when no amount is given, and the same request again is that refund', async () => {
    const { orderNo, paidBy } = await make.paidOrder(Channel.Wechatpay, 10000);
    expect((await refundOf(orderNo, { refundNo: uniqueId('SR'), amount: 3000 })).created).toBe(true);
    const refundNo = uniqueId('SR');

    const rest = await refundOf(orderNo, { refundNo });
    await refunds.statusIs(refundNo, 'SUCCEEDED');
    const again = await refundOf(orderNo, { refundNo });

    expect(rest).toMatchObject({ created: true, refund: { refundNo, amount: 7000 } });
    expect(again).toMatchObject({ created: false, refund: { refundNo, amount: 7000, status: 'SUCCEEDED' } });
    expect(fake.calls.find((c) => c.refundNo === refundNo)).toMatchObject({ transactionId: paidBy, amount: 7000 });
    expect(await refunds.reserved(paidBy)).toBe(10000);
  });

  it("should say of a refund number taken by another order's refund only that it is taken", async () => {
    const { orderNo: other, paidBy: otherPayment } = await make.paidOrder(Channel.Alipay, 4321);
    const refundNo = uniqueId('SR');
    expect((await refundOf(other, { refundNo, amount: 1234 })).created).toBe(true);
    const { orderNo } = await make.paidOrder(Channel.Alipay, 5000);

    const taken = await domainFailure(refundOf(orderNo, { refundNo, amount: 1000 }));

    expect(taken).toMatchObject({ code: 'RefundConflict', status: 409 });
    expect(taken.message).toContain(`${refundNo} is taken`);
    // Nothing of the other refund but its number: not its order, transaction or amount.
    const besidesTheNumber = taken.message.replace(refundNo, '');
    for (const secret of [other, otherPayment, '1234', '4321']) expect(besidesTheNumber).not.toContain(secret);
    expect(await count(pool, 'SELECT COUNT(*) FROM refund WHERE order_no = ?', [orderNo])).toBe(0);
  });
});
