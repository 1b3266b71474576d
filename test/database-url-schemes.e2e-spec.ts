import { Pool } from 'mysql2/promise';
import { AppProcess, startAppProcess } from './support/app-process';
import { eventually } from './support/eventually';
import { assertTestDatabase, TEST_DATABASE_PREFIX, withAdminConnection } from './support/test-database';
import {
  count,
  createTestPlatforms,
  RunningApp,
  startApp,
  TestClient,
  testDatabasePool,
  TestPlatforms,
  uniqueId,
} from './support/test-app';

/** The run's database under another scheme: `mysql://` is what most people write for a MariaDB server too. */
function urlWithScheme(scheme: 'mysql' | 'mariadb', database = process.env.TEST_DATABASE_NAME!): string {
  const url = new URL(process.env.DATABASE_URL!);
  return `${scheme}://${url.username ? `${url.username}${url.password ? `:${url.password}` : ''}@` : ''}${url.host}/${database}`;
}

describe.each(['mysql', 'mariadb'] as const)('DATABASE_URL=%s://… against the server that answers', (scheme) => {
  let platforms: TestPlatforms;
  let app: RunningApp;
  let client: TestClient;
  let pool: Pool;

  beforeAll(async () => {
    platforms = await createTestPlatforms();
    app = await startApp({ ...platforms.env, DATABASE_URL: urlWithScheme(scheme) });
    client = new TestClient(app.url, platforms);
    pool = testDatabasePool();
  });

  afterAll(async () => {
    await app?.close();
    await pool?.end();
  });

  it('should apply a payment delivered four times at once exactly once', async () => {
    const orderNo = uniqueId('SCHEME');
    expect((await client.registerOrder({ orderNo, amount: 1234 })).status).toBe(201);
    const delivery = client.wechatpayPayment({ outTradeNo: orderNo, transactionId: uniqueId('T'), total: 1234 });
    const answers = await Promise.all([1, 2, 3, 4].map(() => client.postWechatpay(delivery)));
    expect(answers.map((a) => a.status)).toEqual([204, 204, 204, 204]);
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE order_no = ?', [orderNo])).toBe(1);
    expect(
      await count(pool, "SELECT COUNT(*) FROM order_status_change WHERE order_no = ? AND to_status = 'PAID'", [
        orderNo,
      ]),
    ).toBe(1);
  });

  it.each([
    ['the anomalies', '/admin/anomalies'],
    ['the approvals queue', '/admin/refunds?status=AWAITING_APPROVAL'],
    ['the callback stats', '/admin/stats/callbacks'],
  ])(
    'should answer the admin read of %s with 200 (on the reporting pool, its time limit the server’s own)',
    async (_, path) => {
      const answer = await client.admin('GET', path, platforms.admins.viewer);
      expect([answer.status, answer.body.slice(0, 300)]).toEqual([200, expect.any(String)]);
    },
  );

  it("should show an order's admin view with 200", async () => {
    const orderNo = uniqueId('SCHEMEV');
    expect((await client.registerOrder({ orderNo, amount: 500 })).status).toBe(201);
    const answer = await client.admin('GET', `/admin/orders/${orderNo}`, platforms.admins.viewer);
    expect(answer.status).toBe(200);
    expect(answer.json<{ order: { status: string } }>().order.status).toBe('WAIT_PAY');
  });

  it('should serve the scrape-time gauges read from the database', async () => {
    const scrape = await (await fetch(`${app.managementUrl}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
    expect(scrape).toMatch(/^operations_gauges_up 1$/m);
  });
});

describe('a statement the database refuses for a configuration mistake', () => {
  const empty = assertTestDatabase(uniqueId(`${TEST_DATABASE_PREFIX}empty_`).toLowerCase());
  let platforms: TestPlatforms;
  let app: AppProcess;
  let output = '';

  beforeAll(async () => {
    await withAdminConnection((conn) => conn.query(`CREATE DATABASE \`${empty}\``));
    platforms = await createTestPlatforms();
    // No migrations on an empty database: the admin read meets a table that is not there.
    app = await startAppProcess({
      ...platforms.env,
      DATABASE_URL: urlWithScheme('mysql', empty),
      MIGRATIONS_RUN: 'false',
      LOG_LEVEL: 'info',
    });
    app.child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  });

  afterAll(async () => {
    app?.child.kill('SIGKILL');
    await app?.exited;
    await withAdminConnection((conn) => conn.query(`DROP DATABASE IF EXISTS \`${empty}\``));
  });

  it('should answer 500, not "database temporarily unavailable", and log the cause in the server’s words', async () => {
    const client = new TestClient(app.url, platforms);
    const answer = await client.admin('GET', '/admin/anomalies', platforms.admins.viewer);
    expect(answer.status).toBe(500);
    expect(answer.body).not.toMatch(/temporarily unavailable/);
    const cause =
      /the database refused a statement.*Table '[^']*payment_anomaly' doesn't exist \(ER_NO_SUCH_TABLE, errno 1146\)/;
    await eventually('the log line naming the cause', () => cause.test(output), 60_000);
    expect(output).toMatch(cause);
  });
});
