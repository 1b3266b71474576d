import { randomBytes } from 'node:crypto';
import { Pool } from 'mysql2/promise';
import { ReportingDatabase } from '../src/platform/database/reporting-database';
import {
  deliver,
  inParallel,
  isAck,
  paymentEffects,
  registerAll,
  StormPayment,
  stormPayments,
} from './support/payment-storm';
import {
  createTestPlatforms,
  notificationsOnly,
  RunningApp,
  startApp,
  TestClient,
  testDatabasePool,
  TestPlatforms,
} from './support/test-app';

const SEEDED_DELIVERIES = 100_000;
const OPERATORS = 8;
const READS_PER_OPERATOR = 5;
const PAYMENTS = 20;
const HOUR_MS = 3600_000;

/** Delivery rows spread over the last 2,000 hours, written straight into the table (MariaDB's sequence engine). */
async function seedDeliveries(pool: Pool, prefix: string): Promise<void> {
  await pool.query(
    `INSERT INTO callback_delivery
       (channel, event_type, transaction_id, order_no, pays, outcome, raw_body, headers, received_at, processing_ms)
     SELECT IF(seq % 2, 'WECHATPAY', 'ALIPAY'), 'TRANSACTION.SUCCESS', CONCAT(?, seq % 30000), CONCAT(?, seq),
            1, 'PAID', 'x', '{}', UTC_TIMESTAMP(3) - INTERVAL (seq % 7200000) SECOND, seq % 50
       FROM seq_1_to_${SEEDED_DELIVERIES}`,
    [`${prefix}T`, `${prefix}O`],
  );
}

describe('a flood of admin reads beside the notify path', () => {
  let platforms: TestPlatforms;
  let pool: Pool;
  let app: RunningApp;
  const viewers = Array.from({ length: OPERATORS }, (_, i) => ({
    id: `viewer${i}`,
    token: randomBytes(24).toString('hex'),
  }));

  beforeAll(async () => {
    platforms = await createTestPlatforms();
    pool = testDatabasePool();
    app = await startApp({
      ...notificationsOnly(platforms.env),
      ADMIN_TOKENS: viewers.map((v) => `${v.id}:${v.token}:viewer`).join(','),
      // A small notify pool, and the production acquire bound: a read that held its connections would show.
      DATABASE_POOL_SIZE: '4',
      DATABASE_POOL_ACQUIRE_TIMEOUT_MS: '3000',
      REPORTING_POOL_SIZE: '2',
      REPORTING_STATEMENT_TIMEOUT_MS: '3000',
      ADMIN_READS_PER_OPERATOR: '2',
    });
    await seedDeliveries(pool, `F${Date.now()}`);
  });
  afterAll(async () => {
    await app?.close();
    await pool?.end();
  });

  it(`should ack every payment while ${OPERATORS * READS_PER_OPERATOR} callback-stats reads run, and bound the reads`, async () => {
    const client = new TestClient(app.url, platforms);
    const payments = stormPayments(PAYMENTS, 'A');
    await registerAll(client, payments);
    const to = new Date();
    const range = new URLSearchParams({
      from: new Date(to.getTime() - 2000 * HOUR_MS).toISOString(),
      to: to.toISOString(),
    });
    const reads = viewers.flatMap((v) => Array.from({ length: READS_PER_OPERATOR }, () => v));
    const startedAt = Date.now();
    const readStatuses: number[] = [];
    const flood = inParallel(reads, reads.length, async (viewer) => {
      const response = await fetch(`${app.url}/admin/stats/callbacks?${range.toString()}`, {
        headers: { authorization: `Bearer ${viewer.token}` },
        signal: AbortSignal.timeout(30_000),
      });
      readStatuses.push(response.status);
    });
    const refused: StormPayment[] = [];
    // The notifications arrive while the reads run.
    await inParallel(payments, 4, async (p) => {
      if (!isAck(p, await deliver(client, p))) refused.push(p);
    });
    await flood;
    const floodMs = Date.now() - startedAt;

    expect(refused.map((p) => p.orderNo)).toEqual([]);
    expect(await paymentEffects(pool, payments)).toMatchObject({
      paidOrders: PAYMENTS,
      ordersNotExactlyOnce: [],
      callbacks: PAYMENTS,
    });
    // Every read answered: some served, the rest refused at once per operator (429), or by the
    // reporting pool's queue or statement limit (503); never a 500, never unbounded.
    expect(readStatuses).toHaveLength(reads.length);
    expect(readStatuses.filter((s) => ![200, 429, 503].includes(s))).toEqual([]);
    expect(readStatuses).toContain(429);
    expect(readStatuses).toContain(200);
    expect(floodMs).toBeLessThan(60_000);
  });

  it('should stop a read on the reporting pool at the statement limit, on the server', async () => {
    const db = await app.app.get(ReportingDatabase).dataSource();
    const startedAt = Date.now();
    await expect(db.query('SELECT SLEEP(10)')).rejects.toMatchObject({ driverError: { errno: 1969 } });
    // Ended by the 3 s statement limit (errno 1969), before the 10 s the statement asked for.
    expect(Date.now() - startedAt).toBeLessThan(10_000);
    // Read-only sessions: a slip in an admin read can never write.
    await expect(db.query('DELETE FROM payment_order WHERE 1 = 0')).rejects.toMatchObject({
      driverError: { errno: 1792 },
    });
  });
});
