import { Pool } from 'mysql2/promise';
import { DomainError } from '../../src/domain/domain-error';
import { Channel } from '../../src/domain/notification';
import { OrderModule } from '../../src/order/order.module';
import { PaymentOrderService } from '../../src/order/payment-order.service';
import { SettlementModule } from '../../src/settlement/settlement.module';
import { TradeCloseService } from '../../src/trade/trade-close.service';
import { TradeModule } from '../../src/trade/trade.module';
import { Factories } from '../support/factories';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { PaymentEffects } from '../support/payment-effects';
import { count, notificationsOnly, uniqueId } from '../support/test-app';

/**
 * The order service and the trade close as the order API calls them, on the real database without
 * HTTP: idempotent registration, its conflicts and refusals, and closes. A refusal's HTTP status is its
 * DomainError's `status`. The order API's status codes, bodies and auth are in
 * test/payment-outcomes.e2e-spec.ts.
 */
let setup: Medium;
let ctx: MediumContext;
let make: Factories;
let pool: Pool;
let db: PaymentEffects;

beforeAll(async () => {
  // USD too, so that a conflict on a different currency is reachable.
  setup = await startMedium((p) => ({ ...notificationsOnly(p.env), CURRENCIES: 'CNY,USD' }), {
    imports: [OrderModule, SettlementModule, TradeModule],
    fake: false,
  });
  ({ ctx, make, pool } = setup);
  db = new PaymentEffects(pool);
});

afterAll(() => setup?.close());

const register = (order: { orderNo: string; userId: string; amount: number; currency: string }) =>
  ctx.inContext(() => ctx.get(PaymentOrderService).register(order));
const close = (orderNo: string) => ctx.inContext(() => ctx.get(TradeCloseService).close(orderNo));

/** The DomainError `attempt` rejects with (the route answers its status). */
async function refusal(attempt: Promise<unknown>): Promise<DomainError> {
  const error = await attempt.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
}

it('should register an order, give the same order again for the same body, and refuse a different body as a conflict', async () => {
  const orderNo = uniqueId('PO');
  const body = { orderNo, userId: 'u-42', amount: 1999, currency: 'CNY' };

  const created = await register(body);
  expect(created.created).toBe(true);
  expect(created.order).toMatchObject({
    orderNo,
    userId: 'u-42',
    status: 'WAIT_PAY',
    amount: 1999,
    currency: 'CNY',
    channel: null,
    transactionId: null,
    paidAt: null,
  });

  const again = await register(body);
  expect(again.created).toBe(false);
  expect(again.order).toEqual(created.order);

  for (const different of [{ amount: 2000 }, { userId: 'u-43' }, { currency: 'USD' }]) {
    const conflict = await refusal(register({ ...body, ...different }));
    expect(conflict.status).toBe(409);
    expect(conflict.message).toEqual(expect.stringContaining(orderNo));
  }

  expect(await count(pool, 'SELECT COUNT(*) FROM payment_order WHERE order_no = ?', [orderNo])).toBe(1);
  expect(await db.orderRow(orderNo)).toMatchObject({ status: 'WAIT_PAY', amount: 1999 });
});

it('should register orders in each configured currency and refuse any other, writing nothing', async () => {
  const usd = uniqueId('PO');
  expect((await register({ orderNo: usd, userId: 'u-1', amount: 500, currency: 'USD' })).created).toBe(true);
  expect(
    await count(pool, "SELECT COUNT(*) FROM payment_order WHERE order_no = ? AND currency = 'USD' AND amount = 500", [
      usd,
    ]),
  ).toBe(1);

  const hkd = uniqueId('PO');
  const refused = await refusal(register({ orderNo: hkd, userId: 'u-1', amount: 500, currency: 'HKD' }));
  expect(refused.status).toBe(400);
  expect(refused.message).toBe('currency HKD is not accepted (accepted: CNY, USD)');
  expect(await db.orderRow(hkd)).toBeUndefined();
  expect(await count(pool, 'SELECT COUNT(*) FROM order_status_change WHERE order_no = ?', [hkd])).toBe(0);
});

it('should not find an unknown order (404)', async () => {
  const orderNo = uniqueId('PO');
  const notFound = await refusal(ctx.get(PaymentOrderService).get(orderNo));
  expect(notFound.status).toBe(404);
  expect(notFound.message).toEqual(expect.stringContaining(orderNo));
  expect(await db.orderRow(orderNo)).toBeUndefined();
});

it('should refuse to close a PAID order (409), leaving it PAID', async () => {
  const { orderNo, paidBy } = await make.paidOrder(Channel.Wechatpay, 600);

  const refused = await refusal(close(orderNo));
  expect(refused.status).toBe(409);
  expect(refused.message).toEqual(expect.stringMatching(/PAID/));
  expect(await db.orderRow(orderNo)).toMatchObject({ status: 'PAID', transaction_id: paidBy });
  expect(await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no = ?', [orderNo])).toBe(1);
});

it('should not close an unknown order (404), creating nothing', async () => {
  const orderNo = uniqueId('PO');
  expect((await refusal(close(orderNo))).status).toBe(404);
  expect(await db.orderRow(orderNo)).toBeUndefined();
});

it('should close a WAIT_PAY order, and answer CLOSED again on a second close', async () => {
  const { orderNo } = await make.order({ amount: 700 });

  const first = await close(orderNo);
  const second = await close(orderNo);

  expect(first.order).toMatchObject({ orderNo, status: 'CLOSED' });
  expect(second).toEqual(first);
  expect((await db.orderRow(orderNo))?.status).toBe('CLOSED');
  expect((await ctx.get(PaymentOrderService).get(orderNo)).status).toBe('CLOSED');
});
