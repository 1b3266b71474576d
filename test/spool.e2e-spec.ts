import { mkdtempSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'mysql2/promise';
import { eventually, sleep } from './support/eventually';
import { metricValue } from './support/order-effects';
import {
  databaseProxy,
  databaseUrlVia,
  deliver,
  inParallel,
  isAck,
  paymentEffects,
  registerAll,
  StormPayment,
  stormPayments,
} from './support/payment-storm';
import { TcpProxy } from './support/tcp-proxy';
import {
  count,
  createTestPlatforms,
  notificationsOnly,
  RunningApp,
  startApp,
  TestClient,
  testDatabasePool,
  TestPlatforms,
} from './support/test-app';

const CUT_MS = 10_000;

interface SpoolDetails {
  status: string;
  pending: number;
  parked: number;
  oldestAgeSeconds: number;
  bytes: number;
  maxBytes: number;
  quarantined: number;
}

async function readiness(url: string): Promise<{ status: number; spool: SpoolDetails; database?: { status: string } }> {
  const response = await fetch(`${url}/health/ready`);
  const body = (await response.json()) as { details: { spool: SpoolDetails; database?: { status: string } } };
  return { status: response.status, spool: body.details.spool, database: body.details.database };
}

/** payment_notifications_total{outcome="SPOOLED"}, summed over the channels. */
async function spooledAcks(url: string): Promise<number> {
  return metricValue(await (await fetch(`${url}/metrics`)).text(), 'payment_notifications_total', {
    outcome: 'SPOOLED',
  });
}

function segmentFiles(spoolDir: string): string[] {
  return readdirSync(join(spoolDir, 'segments'))
    .filter((name) => name.endsWith('.seg'))
    .map((name) => join(spoolDir, 'segments', name));
}

describe('the durable spool (SPOOL_DIR)', () => {
  let platforms: TestPlatforms;
  let pool: Pool;
  let proxy: TcpProxy;
  let app: RunningApp | undefined;

  function spoolEnv(spoolDir: string | undefined, extra: Record<string, string> = {}): Record<string, string> {
    return {
      ...notificationsOnly(platforms.env),
      DATABASE_URL: databaseUrlVia(proxy),
      ...(spoolDir ? { SPOOL_DIR: spoolDir } : {}),
      ...extra,
    };
  }

  beforeAll(async () => {
    platforms = await createTestPlatforms();
    pool = testDatabasePool();
    proxy = await databaseProxy();
  });
  afterEach(async () => {
    // Restored, whether the test ended with the database cut or not.
    await proxy.stop();
    await proxy.start();
    await app?.close();
    app = undefined;
  });
  afterAll(async () => {
    await proxy?.stop();
    await pool?.end();
  });

  it('should ack a storm during a 10 s database cut from the spool, and apply every payment exactly once after', async () => {
    const spoolDir = mkdtempSync(join(tmpdir(), 'pcs-spool-'));
    app = await startApp(spoolEnv(spoolDir));
    const client = new TestClient(app.url, platforms);
    const payments = stormPayments(160, 'S');
    await registerAll(client, payments);
    // Some payments committed before the cut: their repeats arrive during it.
    const paidBefore = payments.slice(0, 20);
    for (const p of paidBefore) expect(isAck(p, await deliver(client, p))).toBe(true);
    const spooledBefore = await spooledAcks(app.managementUrl);

    await proxy.stop();
    const cutAt = Date.now();
    // 1 to 4 deliveries of each payment, shuffled, spread over the cut.
    const storm = payments.flatMap((p, i) => Array.from({ length: 1 + (i % 4) }, () => p));
    storm.sort(() => Math.random() - 0.5);
    const spacingMs = (CUT_MS * 0.8) / storm.length;
    const refused: string[] = [];
    await inParallel(
      storm.map((p, i) => ({ p, at: cutAt + i * spacingMs })),
      16,
      async ({ p, at }) => {
        await sleep(Math.max(0, at - Date.now()));
        const answer = await deliver(client, p);
        if (!isAck(p, answer)) refused.push(`${p.orderNo}: ${answer.status} ${answer.body}`);
      },
    );
    expect(refused).toEqual([]);
    const during = await readiness(app.managementUrl);
    // The database is down, but the spool has room: the pod keeps its traffic and acks from the spool.
    expect(during.status).toBe(200);
    expect(during.database).toMatchObject({ status: 'down' });
    expect(during.spool).toMatchObject({ status: 'up', pending: storm.length, parked: 0, quarantined: 0 });
    expect(await spooledAcks(app.managementUrl)).toBe(spooledBefore + storm.length);
    // Nothing was applied while the database was away.
    expect((await paymentEffects(pool, payments)).paidOrders).toBe(paidBefore.length);
    await sleep(Math.max(0, cutAt + CUT_MS - Date.now()));

    await proxy.start();
    // Platform retries racing the replay: the same dedup key decides.
    const retried = payments.filter((_, i) => i % 5 === 0);
    await inParallel(retried, 8, async (p) => expect(isAck(p, await deliver(client, p))).toBe(true));
    await eventually(
      'the spool to drain',
      async () => {
        const { status, spool } = await readiness(app!.managementUrl);
        return status === 200 && spool.pending === 0;
      },
      120_000,
    );

    const effects = await paymentEffects(pool, payments);
    expect(effects).toEqual({
      paidOrders: payments.length,
      ordersNotExactlyOnce: [],
      paidTransitions: payments.length,
      outboxEvents: payments.length,
      callbacks: payments.length,
      // Every acked delivery is on record, once: before the cut, spooled during it, retried after.
      deliveries: paidBefore.length + storm.length + retried.length,
      paidDeliveries: payments.length,
      anomalies: 0,
    });
    const drained = await readiness(app.managementUrl);
    expect(drained.spool).toMatchObject({ pending: 0, parked: 0, quarantined: 0 });
    expect(readdirSync(join(spoolDir, 'quarantine'))).toEqual([]);
    // Consumed segments are deleted; what is left holds no record.
    expect(segmentFiles(spoolDir).reduce((sum, file) => sum + statSync(file).size, 0)).toBe(0);
  });

  it('should spool a captured sending replayed during a cut once, acking each copy (issue 35, item 3)', async () => {
    const spoolDir = mkdtempSync(join(tmpdir(), 'pcs-spool-'));
    app = await startApp(spoolEnv(spoolDir));
    const client = new TestClient(app.url, platforms);
    const [p] = stormPayments(1, 'R');
    await registerAll(client, [p]);
    const sending = client.wechatpayPayment({ outTradeNo: p.orderNo, transactionId: p.transactionId, total: p.amount });
    await proxy.stop();

    for (let i = 0; i < 6; i++) expect((await client.postWechatpay(sending)).status).toBe(204);

    expect((await readiness(app.managementUrl)).spool).toMatchObject({ pending: 1 });
    await proxy.start();
    await eventually(
      'the spool to drain',
      async () => (await readiness(app!.managementUrl)).spool.pending === 0,
      60_000,
    );
    expect(await paymentEffects(pool, [p])).toMatchObject({ paidOrders: 1, callbacks: 1, deliveries: 1 });
  });

  it('should answer the retryable failure without SPOOL_DIR, as before', async () => {
    app = await startApp(spoolEnv(undefined));
    const client = new TestClient(app.url, platforms);
    const [p] = stormPayments(1, 'N');
    await registerAll(client, [p]);
    await proxy.stop();
    const answer = await deliver(client, p);
    expect(answer.status).toBe(503);
    expect(isAck(p, answer)).toBe(false);
    await proxy.start();
    expect(await paymentEffects(pool, [p])).toMatchObject({ paidOrders: 0, callbacks: 0, deliveries: 0 });
    expect((await readiness(app.managementUrl)).spool).toMatchObject({
      status: 'up',
      mode: 'disabled (SPOOL_DIR not set)',
    });
  });

  it('should answer the retryable failure once the spool is full, and apply what it took', async () => {
    const spoolDir = mkdtempSync(join(tmpdir(), 'pcs-spool-'));
    app = await startApp(spoolEnv(spoolDir, { SPOOL_MAX_BYTES: String(64 * 1024) }));
    const client = new TestClient(app.url, platforms);
    const payments = stormPayments(120, 'F');
    await registerAll(client, payments);
    await proxy.stop();
    const taken: StormPayment[] = [];
    const refused: StormPayment[] = [];
    for (const p of payments) {
      const answer = await deliver(client, p);
      if (isAck(p, answer)) taken.push(p);
      else {
        expect(answer.status).toBe(503);
        refused.push(p);
      }
    }
    // Once full, it stays full: everything after the first refusal is refused.
    expect(taken.length).toBeGreaterThan(5);
    expect(refused.length).toBeGreaterThan(5);
    expect(payments.indexOf(refused[0])).toBe(taken.length);
    const full = await readiness(app.managementUrl);
    expect(full.spool.pending).toBe(taken.length);
    expect(full.spool.bytes).toBeLessThanOrEqual(64 * 1024);

    await proxy.start();
    await eventually(
      'the spool to drain',
      async () => (await readiness(app!.managementUrl)).spool.pending === 0,
      60_000,
    );
    expect(await paymentEffects(pool, taken)).toMatchObject({
      paidOrders: taken.length,
      ordersNotExactlyOnce: [],
      deliveries: taken.length,
    });
    expect(await paymentEffects(pool, refused)).toMatchObject({ paidOrders: 0, callbacks: 0, deliveries: 0 });
    // The platform delivers a refused one again, and now it applies.
    expect(isAck(refused[0], await deliver(client, refused[0]))).toBe(true);
    expect(await paymentEffects(pool, [refused[0]])).toMatchObject({ paidOrders: 1, ordersNotExactlyOnce: [] });
  });

  it('should park a spooled payment whose order is not registered yet, surface it, and apply it once the order exists', async () => {
    const spoolDir = mkdtempSync(join(tmpdir(), 'pcs-spool-'));
    app = await startApp(spoolEnv(spoolDir));
    const client = new TestClient(app.url, platforms);
    const [early, other] = stormPayments(2, 'P');
    await registerAll(client, [other]);
    await proxy.stop();
    // Acked from the spool: with the database away, nobody can know the order is missing.
    expect(isAck(early, await deliver(client, early))).toBe(true);
    expect(isAck(other, await deliver(client, other))).toBe(true);
    await proxy.start();

    await eventually('the unknown order to be parked', async () => {
      const { spool } = await readiness(app!.managementUrl);
      return spool.pending === 0 && spool.parked === 1;
    });
    // It waits out of the way: the delivery behind it applied.
    expect(await paymentEffects(pool, [other])).toMatchObject({ paidOrders: 1, ordersNotExactlyOnce: [] });
    expect(await paymentEffects(pool, [early])).toMatchObject({ callbacks: 0, deliveries: 0 });
    expect(readdirSync(join(spoolDir, 'parked'))).toHaveLength(1);
    const metrics = await (await fetch(`${app.managementUrl}/metrics`)).text();
    expect(metricValue(metrics, 'payment_spool_deliveries', { state: 'parked' })).toBe(1);
    expect(metricValue(metrics, 'payment_spool_replayed_total', { outcome: 'PARKED' })).toBeGreaterThan(0);

    expect((await client.registerOrder({ orderNo: early.orderNo, amount: early.amount })).status).toBe(201);
    await eventually(
      'the parked payment to apply',
      async () => (await readiness(app!.managementUrl)).spool.parked === 0,
      60_000,
    );
    expect(await paymentEffects(pool, [early])).toMatchObject({
      paidOrders: 1,
      ordersNotExactlyOnce: [],
      deliveries: 1,
      paidDeliveries: 1,
    });
    expect(readdirSync(join(spoolDir, 'parked'))).toEqual([]);
  });

  it('should quarantine a corrupt record and a torn tail, and apply the records behind them', async () => {
    const spoolDir = mkdtempSync(join(tmpdir(), 'pcs-spool-'));
    app = await startApp(spoolEnv(spoolDir));
    let client = new TestClient(app.url, platforms);
    const [a, corrupt, c, torn, e] = stormPayments(5, 'Q');
    await registerAll(client, [a, corrupt, c, torn, e]);
    await proxy.stop();
    for (const p of [a, corrupt, c, torn]) expect(isAck(p, await deliver(client, p))).toBe(true);
    await app.close();
    app = undefined;

    // Bit rot in the middle of the segment, and a tail cut short as a crash mid-write leaves it.
    const [segment] = segmentFiles(spoolDir).filter((file) => statSync(file).size > 0);
    const bytes = readFileSync(segment);
    const corruptAt = bytes.indexOf(corrupt.orderNo);
    expect(corruptAt).toBeGreaterThan(0);
    bytes[corruptAt] ^= 0x01;
    writeFileSync(segment, bytes);
    const tornAt = bytes.indexOf(torn.orderNo);
    expect(tornAt).toBeGreaterThan(corruptAt);
    truncateSync(segment, tornAt);

    await proxy.start();
    app = await startApp(spoolEnv(spoolDir));
    client = new TestClient(app.url, platforms);
    await eventually('the spool to drain', async () => (await readiness(app!.managementUrl)).spool.pending === 0);
    // A record behind the torn tail: spooled by this instance during another cut.
    await proxy.stop();
    expect(isAck(e, await deliver(client, e))).toBe(true);
    await proxy.start();
    await eventually('the spool to drain again', async () => {
      const { status, spool } = await readiness(app!.managementUrl);
      return status === 200 && spool.pending === 0;
    });

    expect(await paymentEffects(pool, [a, c, e])).toMatchObject({
      paidOrders: 3,
      ordersNotExactlyOnce: [],
      deliveries: 3,
    });
    expect(await paymentEffects(pool, [corrupt, torn])).toMatchObject({ paidOrders: 0, callbacks: 0, deliveries: 0 });
    expect((await readiness(app.managementUrl)).spool.quarantined).toBe(2);
    const quarantined = readdirSync(join(spoolDir, 'quarantine')).map((file) =>
      readFileSync(join(spoolDir, 'quarantine', file)).toString('latin1'),
    );
    expect(quarantined).toHaveLength(2);
    // The corrupt record is kept whole (its first byte of the order number flipped); the torn tail is the rest.
    expect(quarantined.filter((kept) => kept.includes(corrupt.orderNo.slice(1)))).toHaveLength(1);
    expect(
      await count(pool, 'SELECT COUNT(*) FROM payment_order WHERE order_no IN (?) AND status = ?', [
        [corrupt.orderNo, torn.orderNo],
        'WAIT_PAY',
      ]),
    ).toBe(2);
  });
});
