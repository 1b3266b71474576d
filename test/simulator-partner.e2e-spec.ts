import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { eventually } from './support/eventually';
import { CliRun } from './support/simulator-process';
import { SimulatorSuite, startSimulatorSuite } from './support/simulator-suite';
import { count, RunningApp, uniqueId } from './support/test-app';

/**
 * `npm run simulate` with a service provider's key set (`init --dialect partner`): the service configured by the
 * `.env.local` it wrote (WECHATPAY_SUB_MCHIDS), `pay --dialect partner` sending partner notifications, and the
 * simulator's platform server answering the refund on the partner terms (sub_mchid) before `refund-notice`
 * settles it with a partner REFUND.SUCCESS.
 */
let dir: string;
let keysDir: string;
let app: RunningApp;
let pool: Pool;
let init: CliRun;

let suite: SimulatorSuite;

beforeAll(async () => {
  suite = await startSimulatorSuite('pcs-simulator-partner-', ['--dialect', 'partner']);
  ({ dir, keysDir, app, pool, init } = suite);
});

afterAll(() => suite?.stop());

function simulate(...args: string[]): Promise<CliRun> {
  return suite.simulate(...args);
}

async function paymentRow(orderNo: string): Promise<RowDataPacket | undefined> {
  const [rows] = await pool.query<RowDataPacket[]>('SELECT * FROM payment_callback WHERE order_no = ?', [orderNo]);
  return rows[0];
}

describe('simulate --dialect partner', () => {
  it('should configure the service as a service provider for two sub-merchants', () => {
    const env = parseEnv(readFileSync(join(dir, '.env.local'), 'utf8'));

    expect(env.WECHATPAY_SUB_MCHIDS).toBe('1900000111,1900000112');
    expect(init.stdout).toContain('a service provider (partner mode) for sub-merchants 1900000111, 1900000112');
  });

  it('should pay an order once from three concurrent partner deliveries, recording the sub-merchant, and settle its refund by a partner notice', async () => {
    const orderNo = uniqueId('SIMP');
    expect((await simulate('order', orderNo, '--amount', '2500', '--channel', 'wechatpay')).code).toBe(0);

    const paid = await simulate(
      'pay',
      orderNo,
      '--channel',
      'wechatpay',
      '--dialect',
      'partner',
      '--sub-mchid',
      '1900000112',
      '--times',
      '3',
      '--concurrent',
    );

    expect(paid.code).toBe(0);
    expect(paid.stdout.match(/ acked /g)).toHaveLength(3);
    expect(paid.stdout).toContain('outcome PAID');
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE order_no = ?', [orderNo])).toBe(1);
    expect(await paymentRow(orderNo)).toMatchObject({ merchant_id: '1900000109', sub_merchant_id: '1900000112' });
    const [orders] = await pool.query<RowDataPacket[]>(
      'SELECT status, sub_merchant_id FROM payment_order WHERE order_no = ?',
      [orderNo],
    );
    expect(orders).toEqual([{ status: 'PAID', sub_merchant_id: '1900000112' }]);

    const transactionId = String((await paymentRow(orderNo))!.transaction_id);
    const keys = JSON.parse(readFileSync(join(keysDir, 'keys.json'), 'utf8')) as { admins: Array<{ token: string }> };
    const refundNo = uniqueId('R');
    const requested = await fetch(`${app.url}/admin/refunds/emergency`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.admins[0].token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ orderNo, transactionId, reason: 'simulator partner test', refundNo }),
    });
    expect(requested.status).toBe(202);
    const refundStatus = async () => {
      const [rows] = await pool.query<RowDataPacket[]>('SELECT status FROM refund WHERE refund_no = ?', [refundNo]);
      return rows[0]?.status as string | undefined;
    };
    await eventually('the platform to answer the refund', async () => (await refundStatus()) === 'PROCESSING');

    const notice = await simulate('refund-notice', refundNo);

    expect(notice.code).toBe(0);
    expect(await refundStatus()).toBe('SUCCEEDED');
    expect(
      await count(pool, "SELECT COUNT(*) FROM callback_delivery WHERE outcome = 'REFUND_SUCCEEDED' AND order_no = ?", [
        orderNo,
      ]),
    ).toBe(1);
  });

  it('should refuse --dialect v3 for a provider key set, and --sub-mchid with Alipay, with the usage (exit 2)', async () => {
    const orderNo = uniqueId('SIMP');

    const v3 = await simulate('pay', orderNo, '--channel', 'wechatpay', '--dialect', 'v3', '--amount', '100');
    const alipay = await simulate(
      'pay',
      orderNo,
      '--channel',
      'alipay',
      '--sub-mchid',
      '1900000111',
      '--amount',
      '100',
    );

    expect(v3.code).toBe(2);
    expect(v3.stderr).toContain("this key set is a service provider's");
    expect(alipay.code).toBe(2);
    expect(alipay.stderr).toContain('--dialect and --sub-mchid are WeChat Pay options');
    expect(await count(pool, 'SELECT COUNT(*) FROM callback_delivery WHERE order_no = ?', [orderNo])).toBe(0);
  });
});
