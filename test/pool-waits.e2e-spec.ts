import { randomBytes } from 'node:crypto';
import { Pool } from 'mysql2/promise';
import { DataSource, QueryRunner } from 'typeorm';
import { sleep, waitFor } from './support/eventually';
import { metricValue } from './support/order-effects';
import { deliver, isAck, paymentEffects, registerAll, stormPayments } from './support/payment-storm';
import {
  createTestPlatforms,
  HttpAnswer,
  notificationsOnly,
  RunningApp,
  startApp,
  TestClient,
  testDatabasePool,
  TestPlatforms,
} from './support/test-app';

const POOL_SIZE = 2;
const ACQUIRE_TIMEOUT_MS = 1500;
const HELD_MS = 600;
const notify = { pool: 'notify' };

describe('waits for a database connection, as metrics (database_pool_waiting, database_pool_acquire_seconds)', () => {
  let platforms: TestPlatforms;
  let pool: Pool;
  let app: RunningApp;
  let client: TestClient;
  const viewer = { id: 'viewer', token: randomBytes(24).toString('hex') };

  beforeAll(async () => {
    platforms = await createTestPlatforms();
    pool = testDatabasePool();
    app = await startApp({
      ...notificationsOnly(platforms.env),
      ADMIN_TOKENS: `${viewer.id}:${viewer.token}:viewer`,
      DATABASE_POOL_SIZE: String(POOL_SIZE),
      DATABASE_POOL_ACQUIRE_TIMEOUT_MS: String(ACQUIRE_TIMEOUT_MS),
    });
    client = new TestClient(app.url, platforms);
  });
  afterAll(async () => {
    await app?.close();
    await pool?.end();
  });

  const scrape = async () => (await fetch(`${app.managementUrl}/metrics`)).text();

  /** Every connection of the notify pool, taken through the app's own DataSource as its requests take them. */
  async function holdWholePool(): Promise<QueryRunner[]> {
    const runners = Array.from({ length: POOL_SIZE }, () => app.app.get(DataSource).createQueryRunner());
    for (const runner of runners) await runner.connect();
    return runners;
  }

  /** Observations of the notify pool's acquire histogram longer than `seconds` (a bucket bound). */
  const waitsLongerThan = (exposition: string, seconds: string) =>
    metricValue(exposition, 'database_pool_acquire_seconds_count', notify) -
    metricValue(exposition, 'database_pool_acquire_seconds_bucket', { ...notify, le: seconds });

  // The service's own workers (the outbox relay, the retention and trade-query sweeps) take the same
  // pool, so a count can include their waits besides the delivery's.
  it('should show a first delivery waiting while the pool is taken, and its wait once it got a connection', async () => {
    const payments = stormPayments(1, 'PW');
    await registerAll(client, payments);
    const before = await scrape();
    const held = await holdWholePool();

    const answer = deliver(client, payments[0]);
    let answered = false;
    void answer.then(() => (answered = true));
    await waitFor('the delivery to wait for a connection', async () => {
      return metricValue(await scrape(), 'database_pool_waiting', notify) >= 1;
    });
    await sleep(HELD_MS);
    expect(answered).toBe(false);
    await held[0].release();

    expect(isAck(payments[0], await answer)).toBe(true);
    await held[1].release();
    await waitFor('nobody waiting', async () => metricValue(await scrape(), 'database_pool_waiting', notify) === 0);
    expect(waitsLongerThan(await scrape(), '0.5') - waitsLongerThan(before, '0.5')).toBeGreaterThanOrEqual(1);
    expect(await paymentEffects(pool, payments)).toMatchObject({ paidOrders: 1, ordersNotExactlyOnce: [] });
  });

  it('should count a caller that gave up at the acquire timeout, and wait for nobody afterwards', async () => {
    const payments = stormPayments(1, 'PT');
    await registerAll(client, payments);
    const before = await scrape();
    const held = await holdWholePool();
    let answer: HttpAnswer;
    try {
      answer = await deliver(client, payments[0]);
    } finally {
      for (const runner of held) await runner.release();
    }

    expect(answer.status).toBe(503);
    // Nobody is left counted as waiting: the caller that gave up is off the gauge.
    await waitFor('nobody waiting', async () => metricValue(await scrape(), 'database_pool_waiting', notify) === 0);
    const after = await scrape();
    // It waited the whole acquire timeout (1.5 s): between the 1 s and 2.5 s buckets.
    expect(waitsLongerThan(after, '1') - waitsLongerThan(before, '1')).toBeGreaterThanOrEqual(1);
    expect(waitsLongerThan(after, '2.5') - waitsLongerThan(before, '2.5')).toBe(0);
    expect(await paymentEffects(pool, payments)).toMatchObject({ paidOrders: 0 });

    // The platform's retry, with the pool free again, pays it once.
    expect(isAck(payments[0], await deliver(client, payments[0]))).toBe(true);
    expect(await paymentEffects(pool, payments)).toMatchObject({ paidOrders: 1, ordersNotExactlyOnce: [] });
  });

  it("should report the admin API's reads under the reporting pool, apart from the notify pool", async () => {
    const before = await scrape();
    const read = await fetch(`${app.url}/admin/anomalies`, { headers: { authorization: `Bearer ${viewer.token}` } });
    expect(read.status).toBe(200);
    const after = await scrape();
    const reporting = { pool: 'reporting' };
    expect(
      metricValue(after, 'database_pool_acquire_seconds_count', reporting) -
        metricValue(before, 'database_pool_acquire_seconds_count', reporting),
    ).toBeGreaterThanOrEqual(1);
    expect(metricValue(after, 'database_pool_waiting', reporting)).toBe(0);
  });
});
