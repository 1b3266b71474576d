import { mkdtempSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'mysql2/promise';
import { spawnMain } from './support/app-process';
import { eventually, sleep } from './support/eventually';
import {
  databaseProxy,
  databaseUrlVia,
  deliver,
  isAck,
  paymentEffects,
  registerAll,
  stormPayments,
} from './support/payment-storm';
import { TcpProxy } from './support/tcp-proxy';
import {
  createTestPlatforms,
  NO_PLATFORM_API,
  notificationsOnly,
  RunningApp,
  startApp,
  TestClient,
  testDatabasePool,
} from './support/test-app';

/**
 * A second instance, started as production starts it (src/main.ts, a process of its own), on a
 * SPOOL_DIR the first holds. The spool's other cases (outages, full, parked, quarantined, a cold
 * start, the next instance on a released directory) are in test/medium/spool.medium-spec.ts.
 */
let pool: Pool;
let proxy: TcpProxy;
let app: RunningApp | undefined;

beforeAll(async () => {
  pool = testDatabasePool();
  proxy = await databaseProxy();
});
afterAll(async () => {
  await app?.close();
  await proxy?.stop();
  await pool?.end();
});

it('should refuse the second with one line naming the directory and the holder, and apply every payment the first spooled', async () => {
  const platforms = await createTestPlatforms();
  const directDatabaseUrl = process.env.DATABASE_URL!; // startApp points process.env at the proxy
  const spoolDir = mkdtempSync(join(tmpdir(), 'pcs-spool-'));
  const spoolEnv = { ...notificationsOnly(platforms.env), SPOOL_DIR: spoolDir };
  app = await startApp({ ...spoolEnv, DATABASE_URL: databaseUrlVia(proxy) });
  const client = new TestClient(app.url, platforms);
  const payments = stormPayments(60, 'L');
  await registerAll(client, payments);
  await proxy.stop();
  for (const p of payments.slice(0, 30)) expect(isAck(p, await deliver(client, p))).toBe(true);

  // src/main.ts itself, as production starts it: one JSON line on stderr, exit 1.
  const second = spawnMain({
    ...NO_PLATFORM_API,
    ...spoolEnv,
    DATABASE_URL: directDatabaseUrl,
    PORT: '0',
    LOG_LEVEL: 'silent',
  });
  const exit = await Promise.race([second.exited, sleep(90_000).then(() => 'still running')]);
  if (exit === 'still running') second.child.kill('SIGKILL');
  expect(exit).toEqual({ code: 1, signal: null });
  const lines = second.output().trim().split('\n');
  expect(lines).toHaveLength(1);
  const { msg } = JSON.parse(lines[0]) as { msg: string };
  expect(msg).toContain(`SPOOL_DIR ${spoolDir} `);
  expect(msg).toContain(`pid ${process.pid} on ${hostname()}`);

  // The first instance's segments are intact: it keeps spooling, and replays everything.
  for (const p of payments.slice(30)) expect(isAck(p, await deliver(client, p))).toBe(true);
  const pending = async () => {
    const body = (await (await fetch(`${app!.managementUrl}/health/ready`)).json()) as {
      details: { spool: { pending: number } };
    };
    return body.details.spool.pending;
  };
  expect(await pending()).toBe(payments.length);
  await proxy.start();
  await eventually('the spool to drain', async () => (await pending()) === 0, 60_000);
  expect(await paymentEffects(pool, payments)).toMatchObject({
    paidOrders: payments.length,
    ordersNotExactlyOnce: [],
    callbacks: payments.length,
    deliveries: payments.length,
  });
});
