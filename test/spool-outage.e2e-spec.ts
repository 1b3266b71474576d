import { mkdtempSync, readdirSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPool, Pool } from 'mysql2/promise';
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
import { databaseUrl, TEST_DATABASE_PREFIX, withAdminConnection } from './support/test-database';
import {
  createTestPlatforms,
  NO_PLATFORM_API,
  notificationsOnly,
  RunningApp,
  startApp,
  TestClient,
  testDatabasePool,
  TestPlatforms,
} from './support/test-app';

interface Readiness {
  status: number;
  database: { status: string; affectsReadiness?: boolean };
  spool: { pending: number; parked: number };
}

async function readiness(url: string): Promise<Readiness> {
  const response = await fetch(`${url}/health/ready`);
  const { details } = (await response.json()) as { details: Omit<Readiness, 'status'> };
  return { status: response.status, ...details };
}

async function spoolPending(url: string): Promise<number> {
  return (await readiness(url)).spool.pending;
}

/** Migration files of the source tree: what a migrated database lists in schema_migrations. */
function migrationCount(): number {
  return readdirSync(join(__dirname, '../src/platform/database/migrations')).filter((f) => f.endsWith('.ts')).length;
}

describe('the durable spool across instances and outages', () => {
  let platforms: TestPlatforms;
  let pool: Pool;
  let proxy: TcpProxy;
  let app: RunningApp | undefined;
  let directDatabaseUrl: string;

  const spoolEnv = (spoolDir: string, extra: Record<string, string> = {}): Record<string, string> => ({
    ...notificationsOnly(platforms.env),
    DATABASE_URL: databaseUrlVia(proxy),
    SPOOL_DIR: spoolDir,
    ...extra,
  });

  beforeAll(async () => {
    platforms = await createTestPlatforms();
    directDatabaseUrl = process.env.DATABASE_URL!; // startApp points process.env at the proxy
    pool = testDatabasePool();
    proxy = await databaseProxy();
  });
  afterEach(async () => {
    await proxy.stop();
    await proxy.start();
    await app?.close();
    app = undefined;
  });
  afterAll(async () => {
    await proxy?.stop();
    await pool?.end();
  });

  describe('two instances on one SPOOL_DIR', () => {
    it('should refuse the second with one line naming the directory and the holder, and apply every payment the first spooled', async () => {
      const spoolDir = mkdtempSync(join(tmpdir(), 'pcs-spool-'));
      app = await startApp(spoolEnv(spoolDir));
      const client = new TestClient(app.url, platforms);
      const payments = stormPayments(60, 'L');
      await registerAll(client, payments);
      await proxy.stop();
      for (const p of payments.slice(0, 30)) expect(isAck(p, await deliver(client, p))).toBe(true);

      // src/main.ts itself, as production starts it: one JSON line on stderr, exit 1.
      const second = spawnMain({
        ...NO_PLATFORM_API,
        ...spoolEnv(spoolDir, { DATABASE_URL: directDatabaseUrl }),
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
      expect(await spoolPending(app.managementUrl)).toBe(payments.length);
      await proxy.start();
      await eventually('the spool to drain', async () => (await spoolPending(app!.managementUrl)) === 0, 60_000);
      expect(await paymentEffects(pool, payments)).toMatchObject({
        paidOrders: payments.length,
        ordersNotExactlyOnce: [],
        callbacks: payments.length,
        deliveries: payments.length,
      });
    });

    it('should let the next instance take the directory once the first has stopped', async () => {
      const spoolDir = mkdtempSync(join(tmpdir(), 'pcs-spool-'));
      app = await startApp(spoolEnv(spoolDir));
      await app.close();
      app = await startApp(spoolEnv(spoolDir));
      expect((await fetch(`${app.url}/health/live`)).status).toBe(200);
    });
  });

  describe('in a database outage', () => {
    it('should stay ready while the spool has room, and turn unready once it is full', async () => {
      const spoolDir = mkdtempSync(join(tmpdir(), 'pcs-spool-'));
      app = await startApp(spoolEnv(spoolDir, { SPOOL_MAX_BYTES: String(64 * 1024) }));
      const client = new TestClient(app.url, platforms);
      const payments = stormPayments(150, 'R');
      await registerAll(client, payments);
      await proxy.stop();

      const during = await readiness(app.managementUrl);
      expect(during.status).toBe(200);
      expect(during.database).toMatchObject({ status: 'down', affectsReadiness: false });
      const acked = [];
      for (const p of payments) {
        if (!isAck(p, await deliver(client, p))) break;
        acked.push(p);
      }
      expect(acked.length).toBeGreaterThan(5);
      expect(acked.length).toBeLessThan(payments.length);
      // Full: a delivery would be refused, so the pod hands its traffic to the others.
      expect((await readiness(app.managementUrl)).status).toBe(503);

      await proxy.start();
      await eventually('the spool to drain', async () => (await spoolPending(app!.managementUrl)) === 0, 60_000);
      expect((await readiness(app.managementUrl)).status).toBe(200);
      expect(await paymentEffects(pool, acked)).toMatchObject({
        paidOrders: acked.length,
        ordersNotExactlyOnce: [],
        deliveries: acked.length,
      });
    });

    it('should start without the database, spool, then migrate and replay once it answers', async () => {
      const name = `${process.env.TEST_DATABASE_NAME}_cold`;
      expect(name.startsWith(TEST_DATABASE_PREFIX)).toBe(true);
      await withAdminConnection((conn) => conn.query(`CREATE DATABASE \`${name}\``));
      const cold = createPool({ uri: databaseUrl(name), connectionLimit: 2, supportBigNumbers: true });
      try {
        await proxy.stop();
        const spoolDir = mkdtempSync(join(tmpdir(), 'pcs-spool-'));
        const viaProxy = databaseUrl(name).replace(/@[^/]+\//, `@127.0.0.1:${proxy.port}/`);
        app = await startApp(spoolEnv(spoolDir, { DATABASE_URL: viaProxy }));
        const client = new TestClient(app.url, platforms);
        expect((await readiness(app.managementUrl)).status).toBe(200);
        const payments = stormPayments(20, 'C');
        for (const p of payments) expect(isAck(p, await deliver(client, p))).toBe(true);
        expect(await spoolPending(app.managementUrl)).toBe(payments.length);

        await proxy.start();
        await eventually(
          'the migrations to be applied',
          async () => (await tableCount(cold, 'schema_migrations')) === migrationCount(),
          60_000,
        );
        // The schema is current a moment before the instance lets queries through (databaseAnswered).
        await eventually(
          'the instance to reach the database',
          async () => (await readiness(app!.managementUrl)).database.status === 'up',
          60_000,
        );
        // The orders are registered only now (the database was away): the replayed payments wait parked for them.
        await registerAll(client, payments);
        await eventually(
          'every spooled payment to apply',
          async () => (await paymentEffects(cold, payments)).paidOrders === payments.length,
          90_000,
        );
        expect(await paymentEffects(cold, payments)).toMatchObject({
          paidOrders: payments.length,
          ordersNotExactlyOnce: [],
          callbacks: payments.length,
          deliveries: payments.length,
        });
      } finally {
        await app?.close();
        app = undefined;
        await cold.end();
        await withAdminConnection((conn) => conn.query(`DROP DATABASE IF EXISTS \`${name}\``));
      }
    });
  });
});

async function tableCount(pool: Pool, table: string): Promise<number> {
  try {
    const [rows] = await pool.query(`SELECT COUNT(*) AS n FROM ${table}`);
    return Number((rows as Array<{ n: number }>)[0].n);
  } catch {
    return -1; // not created yet
  }
}
