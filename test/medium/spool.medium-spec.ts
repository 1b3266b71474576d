import { mkdtempSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPool, Pool, RowDataPacket } from 'mysql2/promise';
import { randomAlphanumeric } from '../../tools/simulator/platform-signers';
import { v2PaymentNotification } from '../../tools/simulator/wechatpay/v2/v2-notifications';
import { eventually, sleep } from '../support/eventually';
import { Medium, Replica, startMedium } from '../support/medium';
import { INTAKE_MODULES, isAck, metric } from '../support/medium-intake';
import {
  databaseProxy,
  databaseUrlVia,
  inParallel,
  paymentEffects,
  StormPayment,
  stormPayments,
} from '../support/payment-storm';
import { TcpProxy } from '../support/tcp-proxy';
import { databaseUrl, TEST_DATABASE_PREFIX, withAdminConnection } from '../support/test-database';
import { count, notificationsOnly, TestPlatforms, uniqueId } from '../support/test-app';

/**
 * The durable spool (SPOOL_DIR) as the notify use case and the replayer use it, without HTTP: the
 * database cut by a TCP proxy, deliveries handed to NotificationIntake.receive (the platform's
 * reply is its answer), readiness as the app composes it, the effects counted in the database.
 * A second instance started as a process on a held directory, and a replay SIGKILLed, are in
 * the e2e tier (they need a process).
 */
const CUT_MS = 10_000;
const API_V2_KEY = randomAlphanumeric(32);
const V2_ACK = '<xml><return_code><![CDATA[SUCCESS]]></return_code><return_msg><![CDATA[OK]]></return_msg></xml>';

let medium: Medium;
let platforms: TestPlatforms;
let pool: Pool;
let proxy: TcpProxy;
let instance: Replica | undefined;

const newSpoolDir = () => mkdtempSync(join(tmpdir(), 'pcs-spool-'));

function start(spoolDir: string | undefined, extra: Record<string, string> = {}): Promise<Replica> {
  return medium.another((p) => ({
    ...notificationsOnly(p.env),
    WECHATPAY_APIV2_KEY: API_V2_KEY,
    DATABASE_URL: databaseUrlVia(proxy),
    ...(spoolDir ? { SPOOL_DIR: spoolDir } : {}),
    ...extra,
  }));
}

function segmentFiles(spoolDir: string): string[] {
  return readdirSync(join(spoolDir, 'segments'))
    .filter((name) => name.endsWith('.seg'))
    .map((name) => join(spoolDir, 'segments', name));
}

const spooledAcks = () => metric('payment_notifications_total', { outcome: 'SPOOLED' });

beforeAll(async () => {
  medium = await startMedium({}, { imports: INTAKE_MODULES, fake: false, replicas: 0 });
  ({ platforms, pool } = medium);
  proxy = await databaseProxy();
});
afterEach(async () => {
  // Restored, whether the test ended with the database cut or not.
  await proxy.stop();
  await proxy.start();
  await instance?.close();
  instance = undefined;
});
afterAll(async () => {
  await proxy?.stop();
  await medium?.close();
});

describe('the durable spool (SPOOL_DIR)', () => {
  it('should ack a storm during a 10 s database cut from the spool, and apply every payment exactly once after', async () => {
    const spoolDir = newSpoolDir();
    const app = (instance = await start(spoolDir));
    const payments = stormPayments(160, 'S');
    await app.registerAll(payments);
    // Some payments committed before the cut: their repeats arrive during it.
    const paidBefore = payments.slice(0, 20);
    for (const p of paidBefore) expect(isAck(p, await app.deliver(p))).toBe(true);
    const spooledBefore = await spooledAcks();

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
        const answer = await app.deliver(p);
        if (!isAck(p, answer)) refused.push(`${p.orderNo}: ${answer.status} ${JSON.stringify(answer.body)}`);
      },
    );
    expect(refused).toEqual([]);
    const during = await app.readiness();
    // The database is down, but the spool has room: the pod keeps its traffic and acks from the spool.
    expect(during.ready).toBe(true);
    expect(during.details.database).toMatchObject({ status: 'down' });
    expect(during.details.spool).toMatchObject({ status: 'up', pending: storm.length, parked: 0, quarantined: 0 });
    expect(await spooledAcks()).toBe(spooledBefore + storm.length);
    // Nothing was applied while the database was away.
    expect((await paymentEffects(pool, payments)).paidOrders).toBe(paidBefore.length);
    await sleep(Math.max(0, cutAt + CUT_MS - Date.now()));

    await proxy.start();
    // Platform retries racing the replay: the same dedup key decides.
    const retried = payments.filter((_, i) => i % 5 === 0);
    await inParallel(retried, 8, async (p) => expect(isAck(p, await app.deliver(p))).toBe(true));
    await eventually(
      'the spool to drain',
      async () => {
        const { ready, details } = await app.readiness();
        return ready && details.spool.pending === 0;
      },
      120_000,
    );

    expect(await paymentEffects(pool, payments)).toEqual({
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
    expect(await app.spool()).toMatchObject({ pending: 0, parked: 0, quarantined: 0 });
    expect(readdirSync(join(spoolDir, 'quarantine'))).toEqual([]);
    // Consumed segments are deleted; what is left holds no record.
    expect(segmentFiles(spoolDir).reduce((sum, file) => sum + statSync(file).size, 0)).toBe(0);
  });

  it('should spool a captured sending replayed during a cut once, acking each copy', async () => {
    const app = (instance = await start(newSpoolDir()));
    const [p] = stormPayments(1, 'R');
    await app.registerAll([p]);
    const sending = app.signed.wechatpayPayment({
      outTradeNo: p.orderNo,
      transactionId: p.transactionId,
      total: p.amount,
    });
    await proxy.stop();

    for (let i = 0; i < 6; i++) expect((await app.wechatpay(sending)).status).toBe(204);

    expect(await app.spool()).toMatchObject({ pending: 1 });
    await proxy.start();
    await eventually('the spool to drain', async () => (await app.spool()).pending === 0, 60_000);
    expect(await paymentEffects(pool, [p])).toMatchObject({ paidOrders: 1, callbacks: 1, deliveries: 1 });
  });

  it('should answer the retryable failure without SPOOL_DIR, as before', async () => {
    const app = (instance = await start(undefined));
    const [p] = stormPayments(1, 'N');
    await app.registerAll([p]);
    await proxy.stop();
    const answer = await app.deliver(p);
    expect(answer.status).toBe(503);
    expect(isAck(p, answer)).toBe(false);
    await proxy.start();
    expect(await paymentEffects(pool, [p])).toMatchObject({ paidOrders: 0, callbacks: 0, deliveries: 0 });
    expect(await app.spool()).toMatchObject({ status: 'up', mode: 'disabled (SPOOL_DIR not set)' });
  });

  it('should answer the retryable failure once the spool is full, and apply what it took', async () => {
    const app = (instance = await start(newSpoolDir(), { SPOOL_MAX_BYTES: String(64 * 1024) }));
    const payments = stormPayments(120, 'F');
    await app.registerAll(payments);
    await proxy.stop();
    const taken: StormPayment[] = [];
    const refused: StormPayment[] = [];
    for (const p of payments) {
      const answer = await app.deliver(p);
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
    const full = await app.spool();
    expect(full.pending).toBe(taken.length);
    expect(full.bytes).toBeLessThanOrEqual(64 * 1024);

    await proxy.start();
    await eventually('the spool to drain', async () => (await app.spool()).pending === 0, 60_000);
    expect(await paymentEffects(pool, taken)).toMatchObject({
      paidOrders: taken.length,
      ordersNotExactlyOnce: [],
      deliveries: taken.length,
    });
    expect(await paymentEffects(pool, refused)).toMatchObject({ paidOrders: 0, callbacks: 0, deliveries: 0 });
    // The platform delivers a refused one again, and now it applies.
    expect(isAck(refused[0], await app.deliver(refused[0]))).toBe(true);
    expect(await paymentEffects(pool, [refused[0]])).toMatchObject({ paidOrders: 1, ordersNotExactlyOnce: [] });
  });

  it('should park a spooled payment whose order is not registered yet, surface it, and apply it once the order exists', async () => {
    const spoolDir = newSpoolDir();
    const app = (instance = await start(spoolDir));
    const [early, other] = stormPayments(2, 'P');
    await app.registerAll([other]);
    await proxy.stop();
    // Acked from the spool: with the database away, nobody can know the order is missing.
    expect(isAck(early, await app.deliver(early))).toBe(true);
    expect(isAck(other, await app.deliver(other))).toBe(true);
    await proxy.start();

    await eventually('the unknown order to be parked', async () => {
      const spool = await app.spool();
      return spool.pending === 0 && spool.parked === 1;
    });
    // It waits out of the way: the delivery behind it applied.
    expect(await paymentEffects(pool, [other])).toMatchObject({ paidOrders: 1, ordersNotExactlyOnce: [] });
    expect(await paymentEffects(pool, [early])).toMatchObject({ callbacks: 0, deliveries: 0 });
    expect(readdirSync(join(spoolDir, 'parked'))).toHaveLength(1);
    // The gauges are published at the end of the replayer's round, which may still be going on.
    await eventually(
      'the gauge to count it parked',
      async () => (await metric('payment_spool_deliveries', { state: 'parked' })) === 1,
    );
    expect(await metric('payment_spool_replayed_total', { outcome: 'PARKED' })).toBeGreaterThan(0);

    await app.make.order({ orderNo: early.orderNo, amount: early.amount });
    await eventually('the parked payment to apply', async () => (await app.spool()).parked === 0, 60_000);
    expect(await paymentEffects(pool, [early])).toMatchObject({
      paidOrders: 1,
      ordersNotExactlyOnce: [],
      deliveries: 1,
      paidDeliveries: 1,
    });
    expect(readdirSync(join(spoolDir, 'parked'))).toEqual([]);
  });

  it('should quarantine a corrupt record and a torn tail, and apply the records behind them', async () => {
    const spoolDir = newSpoolDir();
    let app = (instance = await start(spoolDir));
    const [a, corrupt, c, torn, e] = stormPayments(5, 'Q');
    await app.registerAll([a, corrupt, c, torn, e]);
    await proxy.stop();
    for (const p of [a, corrupt, c, torn]) expect(isAck(p, await app.deliver(p))).toBe(true);
    await app.close();
    instance = undefined;

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
    app = instance = await start(spoolDir);
    await eventually('the spool to drain', async () => (await app.spool()).pending === 0);
    // A record behind the torn tail: spooled by this instance during another cut.
    await proxy.stop();
    expect(isAck(e, await app.deliver(e))).toBe(true);
    await proxy.start();
    await eventually('the spool to drain again', async () => {
      const { ready, details } = await app.readiness();
      return ready && details.spool.pending === 0;
    });

    expect(await paymentEffects(pool, [a, c, e])).toMatchObject({
      paidOrders: 3,
      ordersNotExactlyOnce: [],
      deliveries: 3,
    });
    expect(await paymentEffects(pool, [corrupt, torn])).toMatchObject({ paidOrders: 0, callbacks: 0, deliveries: 0 });
    expect((await app.spool()).quarantined).toBe(2);
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

  it('should let the next instance take the directory once the first has stopped', async () => {
    const spoolDir = newSpoolDir();
    await (await start(spoolDir)).close();
    const app = (instance = await start(spoolDir));
    expect(await app.readiness()).toMatchObject({ ready: true, details: { spool: { status: 'up', pending: 0 } } });
  });
});

describe('the spool in a database outage', () => {
  it('should stay ready while the spool has room, and turn unready once it is full', async () => {
    const app = (instance = await start(newSpoolDir(), { SPOOL_MAX_BYTES: String(64 * 1024) }));
    const payments = stormPayments(150, 'R');
    await app.registerAll(payments);
    await proxy.stop();

    const during = await app.readiness();
    expect(during.ready).toBe(true);
    expect(during.details.database).toMatchObject({ status: 'down', affectsReadiness: false });
    const acked = [];
    for (const p of payments) {
      if (!isAck(p, await app.deliver(p))) break;
      acked.push(p);
    }
    expect(acked.length).toBeGreaterThan(5);
    expect(acked.length).toBeLessThan(payments.length);
    // Full: a delivery would be refused, so the pod hands its traffic to the others.
    expect((await app.readiness()).ready).toBe(false);

    await proxy.start();
    await eventually('the spool to drain', async () => (await app.spool()).pending === 0, 60_000);
    expect((await app.readiness()).ready).toBe(true);
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
      const viaProxy = databaseUrl(name).replace(/@[^/]+\//, `@127.0.0.1:${proxy.port}/`);
      const app = (instance = await start(newSpoolDir(), { DATABASE_URL: viaProxy }));
      expect((await app.readiness()).ready).toBe(true);
      const payments = stormPayments(20, 'C');
      for (const p of payments) expect(isAck(p, await app.deliver(p))).toBe(true);
      expect((await app.spool()).pending).toBe(payments.length);

      await proxy.start();
      await eventually(
        'the migrations to be applied',
        async () => (await tableCount(cold, 'schema_migrations')) === migrationCount(),
        60_000,
      );
      // The schema is current a moment before the instance lets queries through (databaseAnswered).
      await eventually(
        'the instance to reach the database',
        async () => (await app.readiness()).details.database.status === 'up',
        60_000,
      );
      // The orders are registered only now (the database was away): the replayed payments wait parked for them.
      await app.registerAll(payments);
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
      await instance?.close();
      instance = undefined;
      await cold.end();
      await withAdminConnection((conn) => conn.query(`DROP DATABASE IF EXISTS \`${name}\``));
    }
  });
});

describe('WeChat Pay v2 notifications and the spool', () => {
  const v2Payments = (n: number): StormPayment[] =>
    Array.from({ length: n }, (_, i) => ({
      orderNo: uniqueId('V2P'),
      channel: 'WECHATPAY',
      transactionId: uniqueId('T'),
      amount: 300 + i,
    }));

  function deliverV2(app: Replica, p: StormPayment) {
    const { wechatpay } = platforms;
    const xml = v2PaymentNotification(
      {
        mchid: wechatpay.mchid,
        appid: wechatpay.appid,
        outTradeNo: p.orderNo,
        transactionId: p.transactionId,
        totalFee: p.amount,
        paidAt: new Date(),
      },
      API_V2_KEY,
    );
    return app.receive('wechatpay-v2', { 'content-type': 'text/xml' }, xml);
  }

  it('should ack them from the spool while the database is cut, and apply each payment exactly once after', async () => {
    const app = (instance = await start(mkdtempSync(join(tmpdir(), 'pcs-spool-v2-'))));
    const payments = v2Payments(20);
    await app.registerAll(payments, 8);

    await proxy.stop();
    const answers = await Promise.all(payments.flatMap((p) => [deliverV2(app, p), deliverV2(app, p)]));
    expect(answers.filter((a) => a.status !== 200 || a.body !== V2_ACK)).toEqual([]);
    expect((await paymentEffects(pool, payments)).paidOrders).toBe(0);

    await proxy.start();
    await eventually(
      'every spooled v2 payment to be applied',
      async () => (await paymentEffects(pool, payments)).deliveries === 40,
      120_000,
    );
    expect(await paymentEffects(pool, payments)).toMatchObject({
      paidOrders: 20,
      ordersNotExactlyOnce: [],
      callbacks: 20,
      deliveries: 40,
      paidDeliveries: 20,
      anomalies: 0,
    });
    const [kept] = await pool.query<RowDataPacket[]>('SELECT raw_body FROM callback_delivery WHERE order_no = ?', [
      payments[0].orderNo,
    ]);
    expect(
      kept.every((r) =>
        Buffer.from(r.raw_body as Buffer)
          .toString('utf8')
          .startsWith('<xml>'),
      ),
    ).toBe(true);
  });

  it('should answer a v2 FAIL with 503 without SPOOL_DIR, writing nothing', async () => {
    const app = (instance = await start(undefined));
    const [p] = v2Payments(1);
    await app.registerAll([p]);
    await proxy.stop();
    const answer = await deliverV2(app, p);
    expect(answer.status).toBe(503);
    expect(answer.body).toMatch(/^<xml><return_code><!\[CDATA\[FAIL\]\]><\/return_code><return_msg><!\[CDATA\[.+/);
    await proxy.start();
    expect(await paymentEffects(pool, [p])).toMatchObject({ paidOrders: 0, callbacks: 0, deliveries: 0 });
  });
});

/** Migration files of the source tree: what a migrated database lists in schema_migrations. */
function migrationCount(): number {
  return readdirSync(join(__dirname, '../../src/platform/database/migrations')).filter((f) => f.endsWith('.ts')).length;
}

async function tableCount(db: Pool, table: string): Promise<number> {
  try {
    const [rows] = await db.query(`SELECT COUNT(*) AS n FROM ${table}`);
    return Number((rows as Array<{ n: number }>)[0].n);
  } catch {
    return -1; // not created yet
  }
}
