import { Pool, RowDataPacket } from 'mysql2/promise';
import { SimulatorSuite, startSimulatorSuite } from './support/simulator-suite';
import { count, RunningApp, uniqueId } from './support/test-app';

/**
 * `npm run simulate -- pay` paying, as the buyer would, Alipay and UnionPay payments the service created: the
 * simulator's platform server answered the service's create call (precreate, appTransReq), or the simulated buyer
 * brings it the form the service signed (Alipay page pay, UnionPay's consumption form). Checked by exit code,
 * output and the rows in the database; the service runs on nothing but the `.env.local` that `simulate init` wrote.
 */
let suite: SimulatorSuite;
let app: RunningApp;
let pool: Pool;

beforeAll(async () => {
  suite = await startSimulatorSuite('pcs-simulator-create-');
  ({ app, pool } = suite);
});

afterAll(() => suite?.stop());

async function createPayment(orderNo: string, fields: Record<string, unknown>): Promise<Record<string, unknown>> {
  const created = await fetch(`${app.url}/payment-orders`, {
    method: 'POST',
    headers: { authorization: `Bearer ${suite.env.INTERNAL_API_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ orderNo, userId: 'u-1', amount: 1234, currency: 'CNY', description: 'A tea', ...fields }),
  });
  expect(created.status).toBe(201);
  return (await created.json()) as Record<string, unknown>;
}

async function expectPaidOnce(orderNo: string): Promise<string> {
  const [rows] = await pool.query<RowDataPacket[]>('SELECT transaction_id FROM payment_callback WHERE order_no = ?', [
    orderNo,
  ]);
  expect(rows).toHaveLength(1);
  expect(
    await count(pool, "SELECT COUNT(*) FROM payment_order WHERE order_no = ? AND status = 'PAID'", [orderNo]),
  ).toBe(1);
  expect(await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no = ?', [orderNo])).toBe(1);
  return String(rows[0].transaction_id);
}

describe('simulate pay of a payment created here', () => {
  it('should scan an Alipay qr_code and pay the trade under the trade_no Alipay gave it, once', async () => {
    const orderNo = uniqueId('SIMA');
    await createPayment(orderNo, { channel: 'ALIPAY', method: 'QR' });

    const paid = await suite.simulate('pay', orderNo, '--channel', 'alipay', '--times', '2');

    expect(paid.code).toBe(0);
    expect(paid.stdout).toContain('the buyer scans the qr_code (alipay.trade.precreate');
    expect(paid.stdout).toContain(`notify_url ${suite.env.PUBLIC_BASE_URL}/notify/alipay`);
    expect(await expectPaidOnce(orderNo)).toMatch(/^2026\d{24}$/);
  });

  it("should post Alipay page pay's signed form to the platform, then pay, once", async () => {
    const orderNo = uniqueId('SIMA');
    await createPayment(orderNo, { channel: 'ALIPAY', method: 'PAGE', payer: { returnUrl: 'http://127.0.0.1/paid' } });

    const paid = await suite.simulate('pay', orderNo, '--channel', 'alipay');

    expect(paid.code).toBe(0);
    expect(paid.stdout).toContain('posts the page pay form to Alipay');
    await expectPaidOnce(orderNo);
  });

  it.each([
    ['PAGE', 'posts the consumption form to UnionPay', { payer: { returnUrl: 'http://127.0.0.1/paid' } }],
    ['APP', 'pays with the tn in the app', {}],
  ])('should pay a UnionPay %s payment as its buyer, once, under its txnTime', async (method, action, fields) => {
    const orderNo = uniqueId('SIMU');
    const created = await createPayment(orderNo, { channel: 'UNIONPAY', method, ...fields });

    const paid = await suite.simulate('pay', orderNo, '--channel', 'unionpay', '--times', '2');

    expect(paid.code).toBe(0);
    expect(paid.stdout).toContain(action);
    expect(paid.stdout).toContain(`notify_url ${suite.env.PUBLIC_BASE_URL}/notify/unionpay`);
    await expectPaidOnce(orderNo);
    expect(created.channelOrderTime).toMatch(/^\d{14}$/);
  });
});
