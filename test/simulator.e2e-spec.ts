import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { CHANNELS } from '../tools/simulator/channels';
import { eventually } from './support/eventually';
import { CliRun, PlatformProcess, runSimulator } from './support/simulator-process';
import { freePort, SimulatorSuite, startSimulatorSuite } from './support/simulator-suite';
import { count, RunningApp, uniqueId } from './support/test-app';

/**
 * `npm run simulate` and `npm run drill` as a person runs them: each command a child process, against the real
 * app configured by nothing but the `.env.local` that `simulate init` wrote, and the simulator's own platform
 * server (`simulate platform`, a child process too) answering the service's refund, query and close calls.
 * Every claim is checked by exit code and by the rows in the database.
 */
let dir: string;
let keysDir: string;
let app: RunningApp;
let platform: PlatformProcess;
let pool: Pool;

let suite: SimulatorSuite;

beforeAll(async () => {
  suite = await startSimulatorSuite('pcs-simulator-');
  ({ dir, keysDir, app, platform, pool } = suite);
});

afterAll(() => suite?.stop());

function simulate(...args: string[]): Promise<CliRun> {
  return suite.simulate(...args);
}

async function orderRow(orderNo: string): Promise<Record<string, unknown> | undefined> {
  const [rows] = await pool.query<RowDataPacket[]>('SELECT * FROM payment_order WHERE order_no = ?', [orderNo]);
  return rows[0];
}

function deliveriesOf(orderNo: string): Promise<number> {
  return count(pool, 'SELECT COUNT(*) FROM callback_delivery WHERE order_no = ?', [orderNo]);
}

/** The first admin's token, as `.env.local` gives it (operatorId:token:role). */
function adminToken(): string {
  return suite.env.ADMIN_TOKENS.split(',')[0].split(':')[1];
}

describe('simulate init', () => {
  it('should write a key set and an .env.local that enable every channel, the order API and two admins', async () => {
    const env = parseEnv(readFileSync(join(dir, '.env.local'), 'utf8'));
    expect(env.WECHATPAY_MERCHANT_PRIVATE_KEY_PATH).toBe(join(keysDir, 'wechatpay-merchant-key.pem'));
    expect(env.ALIPAY_APP_PRIVATE_KEY_PATH).toBe(join(keysDir, 'alipay-app-key.pem'));
    expect(env.ADMIN_TOKENS?.split(',').map((entry) => entry.split(':')[2])).toEqual(['admin', 'admin']);
    for (const channel of CHANNELS) {
      const answer = await fetch(`${app.url}/notify/${channel}`, { method: 'POST' });
      expect(answer.status).not.toBe(503); // a disabled channel answers 503
    }
    const orders = await fetch(`${app.url}/payment-orders/nothing`, {
      headers: { authorization: `Bearer ${env.INTERNAL_API_TOKEN}` },
    });
    expect(orders.status).toBe(404);
  });

  it('should give another --port its own database and management port, and REFUND_APPROVAL_THRESHOLD for the two admins', async () => {
    const envFile = join(dir, 'port.env');
    const run = await runSimulator([
      'init',
      '--keys',
      join(dir, 'keys-port'),
      '--env-local',
      envFile,
      '--port',
      '4567',
    ]);

    expect(run.code).toBe(0);
    // A second checkout on another port: its own database and management port, nothing shared.
    expect(parseEnv(readFileSync(envFile, 'utf8'))).toMatchObject({
      PORT: '4567',
      METRICS_PORT: '11031',
      REFUND_APPROVAL_THRESHOLD: '100000',
      DATABASE_URL: 'mariadb://root@127.0.0.1:3306/payments_4567',
      UNIONPAY_BACK_URL: 'http://127.0.0.1:4567/notify/unionpay',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    });
    // The default port: the database the README creates and the service's own management port.
    expect(parseEnv(readFileSync(join(dir, '.env.local'), 'utf8'))).toMatchObject({
      PORT: '3000',
      METRICS_PORT: '9464',
      DATABASE_URL: 'mariadb://root@127.0.0.1:3306/payments',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    });
  });

  it('should take the database and the management port from --database and --metrics-port, and refuse a port used twice', async () => {
    const envFile = join(dir, 'chosen.env');
    const keys = join(dir, 'keys-chosen');
    const common = ['init', '--keys', keys, '--env-local', envFile, '--port', '4600'];

    const run = await runSimulator([...common, '--database', 'pcs_dev_b', '--metrics-port', '9600']);

    expect(run.code).toBe(0);
    expect(parseEnv(readFileSync(envFile, 'utf8'))).toMatchObject({
      PORT: '4600',
      METRICS_PORT: '9600',
      DATABASE_URL: 'mariadb://root@127.0.0.1:3306/pcs_dev_b',
    });
    const twice = await runSimulator([...common, '--force', '--metrics-port', '4600']);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('--port, --metrics-port and --platform-port must be three different ports');
    const badName = await runSimulator([...common, '--force', '--database', 'pay-ments;drop']);
    expect(badName.code).toBe(2);
    expect(badName.stderr).toContain('--database must be 1 to 64 letters, digits or _');
  });

  it('should let the development service register a webhook endpoint on this machine', async () => {
    const created = await fetch(`${app.url}/admin/webhook-endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'http://127.0.0.1:3001/hooks' }),
    });

    expect(created.status).toBe(201);
  });

  it('should refuse to overwrite an existing key set without --force, and leave it as it was', async () => {
    const before = readFileSync(join(keysDir, 'keys.json'), 'utf8');
    const again = await runSimulator(['init', '--keys', keysDir, '--env-local', join(dir, '.env.local')]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('--force');
    expect(readFileSync(join(keysDir, 'keys.json'), 'utf8')).toBe(before);
  });
});

describe('simulate order and pay', () => {
  it('should pay a registered order once from three concurrent deliveries of one WeChat Pay transaction', async () => {
    const orderNo = uniqueId('SIM');
    const registered = await simulate('order', orderNo, '--amount', '1999', '--channel', 'wechatpay');
    expect(registered.code).toBe(0);
    expect(registered.stdout).toContain('201 registered');
    expect(await orderRow(orderNo)).toMatchObject({ status: 'WAIT_PAY', amount: 1999 });

    const paid = await simulate('pay', orderNo, '--channel', 'wechatpay', '--times', '3', '--concurrent');

    expect(paid.code).toBe(0);
    expect(paid.stdout.match(/ acked /g)).toHaveLength(3);
    expect(paid.stdout).toContain('outcome PAID');
    expect(paid.stdout).toContain(`order ${orderNo} is PAID`);
    expect(await orderRow(orderNo)).toMatchObject({ status: 'PAID' });
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE order_no = ?', [orderNo])).toBe(1);
    expect(await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no = ?', [orderNo])).toBe(1);
    expect(await deliveriesOf(orderNo)).toBe(3);
  });

  it('should pay a payment the service created at the platform as its buyer would, once', async () => {
    const orderNo = uniqueId('SIM');
    const created = await fetch(`${app.url}/payment-orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${suite.env.INTERNAL_API_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        ...{ orderNo, userId: 'u-1', amount: 1234, currency: 'CNY' },
        ...{ channel: 'WECHATPAY', method: 'NATIVE', description: 'A simulated coffee' },
      }),
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({
      payment: { state: 'CREATED', buyer: { params: { code_url: expect.any(String) } } },
    });

    const paid = await simulate('pay', orderNo, '--channel', 'wechatpay', '--times', '2');

    expect(paid.code).toBe(0);
    expect(paid.stdout).toContain('the buyer scans the code_url (native');
    expect(paid.stdout).toContain(`notify_url ${suite.env.PUBLIC_BASE_URL}/notify/wechatpay`);
    expect(paid.stdout).toContain(`order ${orderNo} is PAID`);
    expect(await orderRow(orderNo)).toMatchObject({ status: 'PAID', amount: 1234 });
    expect(await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no = ?', [orderNo])).toBe(1);
  });

  it('should pay a UnionPay order once from three concurrent deliveries of one signed notification', async () => {
    const orderNo = uniqueId('SIM');
    expect((await simulate('order', orderNo, '--amount', '2599', '--channel', 'unionpay')).code).toBe(0);

    const paid = await simulate('pay', orderNo, '--channel', 'unionpay', '--times', '3', '--concurrent');

    expect(paid.code).toBe(0);
    expect(paid.stdout).toContain('UnionPay respCode 00');
    expect(paid.stdout.match(/ acked/g)).toHaveLength(3);
    expect(paid.stdout).toContain(`order ${orderNo} is PAID`);
    expect(await orderRow(orderNo)).toMatchObject({ status: 'PAID', channel: 'UNIONPAY' });
    expect(
      await count(pool, "SELECT COUNT(*) FROM payment_callback WHERE order_no = ? AND channel = 'UNIONPAY'", [orderNo]),
    ).toBe(1);
    expect(await deliveriesOf(orderNo)).toBe(3);
  });

  it('should register a UnionPay order with --channel-order-time, and pay it with that txnTime', async () => {
    const orderNo = uniqueId('SIM');
    // An hour ago, Beijing time: the platform refuses a txnTime older than its age limit.
    const sentAt = new Date(Date.now() + 7 * 3600_000).toISOString().replace(/\D/g, '').slice(0, 14);
    const registered = await simulate(
      'order',
      orderNo,
      '--amount',
      '1200',
      '--channel',
      'unionpay',
      '--channel-order-time',
      sentAt,
    );
    expect(registered.code).toBe(0);
    expect(await orderRow(orderNo)).toMatchObject({ channel: 'UNIONPAY', channel_order_time: sentAt });

    expect((await simulate('pay', orderNo, '--channel', 'unionpay')).code).toBe(0);
    const [rows] = await pool.query<RowDataPacket[]>('SELECT raw_body FROM callback_delivery WHERE order_no = ?', [
      orderNo,
    ]);
    expect(rows.map((r) => new URLSearchParams((r.raw_body as Buffer).toString('utf8')).get('txnTime'))).toEqual([
      sentAt,
    ]);
  });

  it('should register a UnionPay order without --channel-order-time at the time of now, Beijing', async () => {
    const orderNo = uniqueId('SIM');
    expect((await simulate('order', orderNo, '--amount', '1300', '--channel', 'unionpay')).code).toBe(0);
    expect((await orderRow(orderNo))?.channel_order_time).toMatch(/^20\d{12}$/);
  });

  it('should deliver an Alipay WAIT_BUYER_PAY that is acked and pays nothing', async () => {
    const orderNo = uniqueId('SIM');
    expect((await simulate('order', orderNo, '--amount', '8888')).code).toBe(0);

    const run = await simulate('pay', orderNo, '--channel', 'alipay', '--status', 'WAIT_BUYER_PAY');

    expect(run.code).toBe(0);
    expect(await orderRow(orderNo)).toMatchObject({ status: 'WAIT_PAY' });
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE order_no = ?', [orderNo])).toBe(0);
    expect(
      await count(pool, "SELECT COUNT(*) FROM callback_delivery WHERE order_no = ? AND outcome = 'NOT_PAYING'", [
        orderNo,
      ]),
    ).toBe(1);
  });

  it('should exit 1 and say REFUSED when the service refuses the notification (an unknown order)', async () => {
    const orderNo = uniqueId('SIM');

    const run = await simulate('pay', orderNo, '--channel', 'alipay', '--amount', '100');

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/404 {2}REFUSED: order .* is not registered/);
    expect(await deliveriesOf(orderNo)).toBe(0);
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE order_no = ?', [orderNo])).toBe(0);
  });

  it('should exit 2 with the usage on a mistake in the command, sending nothing', async () => {
    const orderNo = uniqueId('SIM');
    expect((await simulate('order', orderNo, '--amount', '100')).code).toBe(0);

    const noChannel = await simulate('pay', orderNo, '--channel', 'paypal');
    const badTimes = await simulate('pay', orderNo, '--channel', 'alipay', '--times', '1.5');
    const unknown = await runSimulator(['pay-twice']);

    expect([noChannel.code, badTimes.code, unknown.code]).toEqual([2, 2, 2]);
    expect(noChannel.stderr).toContain('--channel must be wechatpay or alipay');
    expect(badTimes.stderr).toContain('--times must be a positive integer');
    expect(unknown.stderr).toContain('unknown command "pay-twice"');
    expect(await deliveriesOf(orderNo)).toBe(0);
  });

  it('should send to the PORT of .env.local when no --target is given', async () => {
    const envFile = join(dir, 'target.env');
    writeFileSync(envFile, `PORT="${new URL(app.url).port}"\n`);
    const orderNo = uniqueId('SIM');

    const run = await runSimulator(['order', orderNo, '--amount', '300', '--keys', keysDir, '--env-local', envFile]);

    expect(run.code).toBe(0);
    expect(await orderRow(orderNo)).toMatchObject({ status: 'WAIT_PAY', amount: 300 });
  });

  it('should exit 1 naming the target when the service does not answer', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const run = await runSimulator(['order', 'X1', '--amount', '1', '--keys', keysDir, '--target', closed]);

    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`${closed}/payment-orders failed (ECONNREFUSED): is it running?`);
  });
});

describe('help and tokens', () => {
  // Each command's help is checked without a process in test/unit/simulate-cli.spec.ts; here the exit codes.
  it('should print the usage and exit 0 for simulate --help and drill help, sending nothing', async () => {
    const [simulateHelp, drillHelp] = await Promise.all([runSimulator(['--help']), runSimulator(['help'], 'drill')]);

    expect(simulateHelp).toMatchObject({ code: 0, stderr: '' });
    expect(simulateHelp.stdout).toContain('usage: npm run simulate -- <command>');
    expect(drillHelp).toMatchObject({ code: 0, stderr: '' });
    expect(drillHelp.stdout).toContain('usage: drill [--target URL]');
  });

  it('should print the tokens of the key set, for a shell with --shell', async () => {
    const keys = JSON.parse(readFileSync(join(keysDir, 'keys.json'), 'utf8')) as {
      internalApiToken: string;
      admins: Array<{ id: string; token: string }>;
    };

    const run = await simulate('tokens', '--shell');

    expect(run.code).toBe(0);
    expect(parseEnv(run.stdout)).toEqual({
      INTERNAL_API_TOKEN: keys.internalApiToken,
      ALICE_TOKEN: keys.admins[0].token,
      BOB_TOKEN: keys.admins[1].token,
      // The service the README's curl lines call: .env.local's PORT, or --target.
      SERVICE_URL: app.url,
    });
  });
});

describe('simulate storm', () => {
  it('should register the orders and pay each exactly once however often it is delivered', async () => {
    const run = await simulate('storm', '--orders', '12', '--concurrency', '8');

    expect(run.code).toBe(0);
    const prefix = /\((STORM[0-9A-Z]+)N1 …/.exec(run.stdout)![1];
    const deliveries = Number(/; (\d+) deliveries/.exec(run.stdout)![1]);
    const like = [`${prefix}N%`];
    expect(run.stdout).toContain('12 of 12 orders PAID');
    expect(
      await count(pool, "SELECT COUNT(*) FROM payment_order WHERE order_no LIKE ? AND status = 'PAID'", like),
    ).toBe(12);
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE order_no LIKE ?', like)).toBe(12);
    expect(await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no LIKE ?', like)).toBe(12);
    expect(await count(pool, 'SELECT COUNT(*) FROM callback_delivery WHERE order_no LIKE ?', like)).toBe(deliveries);
    expect(deliveries).toBeGreaterThanOrEqual(12);
  });
});

describe('simulate platform and refund-notice', () => {
  it('should answer the emergency refund PROCESSING, then settle it by the signed refund notification', async () => {
    const orderNo = uniqueId('SIM');
    expect((await simulate('order', orderNo, '--amount', '5000')).code).toBe(0);
    expect((await simulate('pay', orderNo, '--channel', 'wechatpay')).code).toBe(0);
    const second = await simulate('pay', orderNo, '--channel', 'wechatpay');
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/outcome DUPLICATE_PAYMENT anomaly opened \(#\d+, OPEN\)/);
    const transactionId = /transaction (\d+)/.exec(second.stdout)![1];
    const keys = JSON.parse(readFileSync(join(keysDir, 'keys.json'), 'utf8')) as { admins: Array<{ token: string }> };
    const refundNo = uniqueId('R');
    const requested = await fetch(`${app.url}/admin/refunds/emergency`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.admins[0].token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ orderNo, transactionId, reason: 'simulator test', refundNo }),
    });
    expect(requested.status).toBe(202);
    const refundStatus = () => refundRow(refundNo).then((row) => row?.status as string);
    await eventually('the platform to answer the refund', async () => (await refundStatus()) === 'PROCESSING');

    // Without --order: the platform knows the order from the payment `simulate pay` told it about.
    const notice = await simulate('refund-notice', refundNo);

    expect(notice.code).toBe(0);
    expect(await refundStatus()).toBe('SUCCEEDED');
    expect((await refundRow(refundNo))?.last_error).toBeNull(); // not "notified SUCCEEDED"
    expect(
      await count(pool, "SELECT COUNT(*) FROM callback_delivery WHERE outcome = 'REFUND_SUCCEEDED' AND order_no = ?", [
        orderNo,
      ]),
    ).toBe(1);
    const [anomalies] = await pool.query<RowDataPacket[]>(
      'SELECT status FROM payment_anomaly WHERE transaction_id = ?',
      [transactionId],
    );
    expect(anomalies).toEqual([{ status: 'RESOLVED' }]);
    expect(platform.output()).toContain(`refund ${refundNo}  WECHATPAY ${transactionId}  50.00  → processing`);
  });

  it('should exit 1 for a refund the platform was never asked for, sending nothing', async () => {
    const refundNo = uniqueId('R');

    const run = await simulate('refund-notice', refundNo);

    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`the service has asked for no refund ${refundNo} here`);
    expect(await count(pool, 'SELECT COUNT(*) FROM refund WHERE refund_no = ?', [refundNo])).toBe(0);
  });
});

describe('npm run drill', () => {
  it.each(CHANNELS)(
    'should run the duplicate-payment procedure on %s to the anomaly RESOLVED, and print the checklist',
    async (channel) => {
      const run = await runSimulator(['--keys', keysDir, '--target', app.url, '--channel', channel], 'drill');

      expect(run.code).toBe(0);
      expect(run.stdout).toContain('PASSED');
      expect(run.stdout.match(/^ \[x\] /gm)).toHaveLength(9);
      expect(run.stdout).toContain('no approval needed');
      const orderNo = /order (DRILL\w+)/.exec(run.stdout)![1];
      const [anomalies] = await pool.query<RowDataPacket[]>(
        'SELECT type, status FROM payment_anomaly WHERE order_no = ?',
        [orderNo],
      );
      expect(anomalies).toEqual([{ type: 'DUPLICATE_PAYMENT', status: 'RESOLVED' }]);
      const [refunds] = await pool.query<RowDataPacket[]>('SELECT status, amount FROM refund WHERE order_no = ?', [
        orderNo,
      ]);
      expect(refunds).toEqual([{ status: 'SUCCEEDED', amount: (await orderRow(orderNo))!.amount }]);
      expect(await orderRow(orderNo)).toMatchObject({ status: 'PAID' });
      // WeChat and UnionPay answer the refund PROCESSING and its notification settles it; Alipay's answer settles it at once.
      const settledBy = (outcome: string) =>
        count(
          pool,
          // UnionPay's refund result names the refunded payment (origQryId), not the order.
          `SELECT COUNT(*) FROM callback_delivery WHERE outcome = ?
           AND (order_no = ? OR transaction_id IN (SELECT transaction_id FROM refund WHERE order_no = ?))`,
          [outcome, orderNo, orderNo],
        );
      expect(await settledBy('REFUND_SUCCEEDED')).toBe(channel === 'alipay' ? 0 : 1);
      expect(await settledBy('DUPLICATE')).toBe(channel === 'alipay' ? 1 : 0);
      // The platform prints every refund call, UnionPay's too.
      const [[refund]] = await pool.query<RowDataPacket[]>(
        'SELECT refund_no, channel, transaction_id FROM refund WHERE order_no = ?',
        [orderNo],
      );
      await eventually('the platform to print the refund', () =>
        platform.output().includes(`refund ${refund.refund_no}  ${refund.channel} ${refund.transaction_id}  `),
      );
    },
  );

  it('should fail the first step that does not happen, leave the rest unticked and exit 1', async () => {
    const run = await runSimulator(['--keys', keysDir, '--target', `http://127.0.0.1:${await freePort()}`], 'drill');

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^ \[!\] {2}1\. create an order .*ECONNREFUSED/m);
    expect(run.stdout.match(/^ \[ \] .*not reached$/gm)).toHaveLength(8);
    expect(run.stdout).toContain('FAILED');
  });
});

async function refundRow(refundNo: string): Promise<RowDataPacket | undefined> {
  const [rows] = await pool.query<RowDataPacket[]>('SELECT * FROM refund WHERE refund_no = ?', [refundNo]);
  return rows[0];
}
