import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { eventually } from './support/eventually';
import { CliRun } from './support/simulator-process';
import { SimulatorSuite, startSimulatorSuite } from './support/simulator-suite';
import { count, RunningApp, uniqueId } from './support/test-app';

/**
 * `npm run simulate -- pay … --dialect v2` and `refund-notice … --dialect v2` as a person runs them: child
 * processes against the app configured by the `.env.local` that `simulate init` wrote (WECHATPAY_APIV2_KEY
 * included), with the simulator's platform server answering the refund.
 */
let keysDir: string;
let app: RunningApp;
let pool: Pool;

let suite: SimulatorSuite;

beforeAll(async () => {
  suite = await startSimulatorSuite('pcs-simulator-v2-');
  ({ keysDir, app, pool } = suite);
  expect(suite.env.WECHATPAY_APIV2_KEY).toMatch(/^[A-Za-z0-9]{32}$/);
});

afterAll(() => suite?.stop());

function simulate(...args: string[]): Promise<CliRun> {
  return suite.simulate(...args);
}

const row = async (sql: string, params: unknown[]): Promise<Record<string, unknown> | undefined> =>
  (await pool.query<RowDataPacket[]>(sql, params))[0][0];

describe('simulate pay --dialect v2', () => {
  it('should pay once from three concurrent v2 deliveries, then take an HMAC-SHA256 one of another transaction as a duplicate payment', async () => {
    const orderNo = uniqueId('SV2');
    expect((await simulate('order', orderNo, '--amount', '1999', '--channel', 'wechatpay')).code).toBe(0);

    const paid = await simulate(
      'pay',
      orderNo,
      '--channel',
      'wechatpay',
      '--dialect',
      'v2',
      '--times',
      '3',
      '--concurrent',
    );

    expect(paid.code).toBe(0);
    expect(paid.stdout).toContain('WeChat Pay v2 SUCCESS (MD5)');
    expect(paid.stdout.match(/ acked /g)).toHaveLength(3);
    expect(paid.stdout).toContain('outcome PAID');
    expect(await row('SELECT status FROM payment_order WHERE order_no = ?', [orderNo])).toEqual({ status: 'PAID' });
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE order_no = ?', [orderNo])).toBe(1);

    const again = await simulate(
      'pay',
      orderNo,
      '--channel',
      'wechatpay',
      '--dialect',
      'v2',
      '--sign-type',
      'HMAC-SHA256',
    );
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('(HMAC-SHA256)');
    expect(again.stdout).toMatch(/outcome DUPLICATE_PAYMENT anomaly opened/);
  });

  it('should exit 2 for --dialect v2 with Alipay or an unknown sign type, sending nothing', async () => {
    const orderNo = uniqueId('SV2');
    expect((await simulate('order', orderNo, '--amount', '100')).code).toBe(0);
    expect((await simulate('pay', orderNo, '--channel', 'alipay', '--dialect', 'v2')).code).toBe(2);
    expect(
      (await simulate('pay', orderNo, '--channel', 'wechatpay', '--dialect', 'v2', '--sign-type', 'SHA1')).code,
    ).toBe(2);
    expect(await count(pool, 'SELECT COUNT(*) FROM callback_delivery WHERE order_no = ?', [orderNo])).toBe(0);
  });

  it('should settle a refund by its v2 refund notification (req_info)', async () => {
    const orderNo = uniqueId('SV2');
    expect((await simulate('order', orderNo, '--amount', '5000')).code).toBe(0);
    const paid = await simulate('pay', orderNo, '--channel', 'wechatpay', '--dialect', 'v2');
    expect(paid.code).toBe(0);
    const transactionId = /transaction (\d+)/.exec(paid.stdout)![1];
    const keys = JSON.parse(readFileSync(join(keysDir, 'keys.json'), 'utf8')) as { admins: Array<{ token: string }> };
    const refundNo = uniqueId('R');
    const requested = await fetch(`${app.url}/admin/refunds/emergency`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.admins[0].token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ orderNo, transactionId, reason: 'simulator v2 test', refundNo }),
    });
    expect(requested.status).toBe(202);
    const refundStatus = async () => (await row('SELECT status FROM refund WHERE refund_no = ?', [refundNo]))?.status;
    await eventually('the platform to answer the refund', async () => (await refundStatus()) === 'PROCESSING');

    const notice = await simulate('refund-notice', refundNo, '--dialect', 'v2');

    expect(notice.code).toBe(0);
    expect(notice.stdout).toContain('WeChat Pay v2 refund SUCCESS');
    expect(await refundStatus()).toBe('SUCCEEDED');
    expect(
      await row('SELECT outcome FROM callback_delivery WHERE order_no = ? AND event_type = ?', [
        orderNo,
        'V2.REFUND.SUCCESS',
      ]),
    ).toEqual({ outcome: 'REFUND_SUCCEEDED' });
  });
});
