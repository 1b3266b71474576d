import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { eventually } from './support/eventually';
import { CliRun, PlatformProcess } from './support/simulator-process';
import { SimulatorSuite, startSimulatorSuite } from './support/simulator-suite';
import { RunningApp, uniqueId } from './support/test-app';

/**
 * `simulate init --alipay-cert` as a person runs it: the service configured by nothing but the `.env.local` it
 * wrote (Alipay in certificate mode), the simulator's platform server (a child process) playing the gateway in
 * certificate mode, the simulator's commands paying and refunding. Checked by exit codes and database rows.
 */
let keysDir: string;
let env: Record<string, string>;
let app: RunningApp;
let platform: PlatformProcess;
let pool: Pool;

let suite: SimulatorSuite;

beforeAll(async () => {
  suite = await startSimulatorSuite('pcs-simulator-cert-', ['--alipay-cert']);
  ({ keysDir, env, app, platform, pool } = suite);
  expect(suite.init.stdout).toMatch(/certificate mode: alipay_cert_sn [0-9a-f]{32}, app_cert_sn [0-9a-f]{32}/);
});

afterAll(() => suite?.stop());

function simulate(...args: string[]): Promise<CliRun> {
  return suite.simulate(...args);
}

async function row(sql: string, params: unknown[]): Promise<Record<string, unknown> | undefined> {
  const [rows] = await pool.query<RowDataPacket[]>(sql, params);
  return rows[0];
}

describe('simulate init --alipay-cert', () => {
  it('should configure Alipay by its certificates, not by a public key', () => {
    expect(env.ALIPAY_PUBLIC_KEY_PATH).toBeUndefined();
    expect(env.ALIPAY_PUBLIC_CERT_PATHS).toBe(join(keysDir, 'alipayCertPublicKey_RSA2.crt'));
    expect(env.ALIPAY_ROOT_CERT_PATH).toBe(join(keysDir, 'alipayRootCert.crt'));
    expect(env.ALIPAY_APP_CERT_PATH).toBe(join(keysDir, `appCertPublicKey_${env.ALIPAY_APP_ID}.crt`));
  });

  it('should pay an Alipay order with the simulator, and refund it through the certificate-mode gateway', async () => {
    const orderNo = uniqueId('SIMC');
    expect((await simulate('order', orderNo, '--amount', '2500', '--channel', 'alipay')).code).toBe(0);

    const paid = await simulate('pay', orderNo, '--channel', 'alipay', '--times', '2', '--concurrent');

    expect(paid.code).toBe(0);
    expect(paid.stdout).toContain(`order ${orderNo} is PAID`);
    const order = await row('SELECT status, transaction_id FROM payment_order WHERE order_no = ?', [orderNo]);
    expect(order?.status).toBe('PAID');
    // The simulator's certificate-mode notifications name the certificate that signed them.
    const keysJson = JSON.parse(readFileSync(join(keysDir, 'keys.json'), 'utf8')) as {
      alipay: { certMode: { alipayCertSn: string } };
    };
    const delivery = await row('SELECT raw_body FROM callback_delivery WHERE order_no = ? LIMIT 1', [orderNo]);
    expect((delivery?.raw_body as Buffer).toString('latin1')).toContain(
      `alipay_cert_sn=${keysJson.alipay.certMode.alipayCertSn}`,
    );
    const keys = JSON.parse(readFileSync(join(keysDir, 'keys.json'), 'utf8')) as { admins: Array<{ token: string }> };
    const refundNo = uniqueId('RC');
    const requested = await fetch(`${app.url}/admin/refunds/emergency`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.admins[0].token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ orderNo, transactionId: order?.transaction_id, reason: 'simulator test', refundNo }),
    });
    expect(requested.status).toBe(202);
    await eventually(
      'the certificate-mode gateway to refund',
      async () => (await row('SELECT status FROM refund WHERE refund_no = ?', [refundNo]))?.status === 'SUCCEEDED',
    );
    expect((await row('SELECT status FROM payment_order WHERE order_no = ?', [orderNo]))?.status).toBe('REFUNDED');
    await eventually('the platform to log the refund', () => platform.output().includes(`refund ${refundNo}  ALIPAY`));
    expect(platform.output()).not.toContain('REFUSED');
  });
});
