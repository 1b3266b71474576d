import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { register as metricsRegistry } from 'prom-client';
import { AdminModule } from '../../src/admin/admin.module';
import { RefusedNotificationQueries } from '../../src/admin/refused-notifications/refused-notification.queries';
import { RefusedNotificationReverification } from '../../src/admin/refused-notifications/refused-notification-reverification';
import { NotifyModule } from '../../src/intake/notify.module';
import { AdminRole } from '../../src/operators/admin.config';
import { OrderModule } from '../../src/order/order.module';
import {
  RefusedHoursRetention,
  RefusedNotificationsRetention,
} from '../../src/payments/refused-notification/refused-notifications.retention';
import { RefusedNotificationModule } from '../../src/payments/refused-notification/refused-notification.module';
import { RetentionPruner } from '../../src/platform/retention/retention-pruner';
import {
  Refusal,
  RefusedNotificationRepository,
  utcHour,
} from '../../src/payments/refused-notification/refused-notification.repository';
import { RetentionModule } from '../../src/platform/retention/retention.module';
import { alipayDelivery, alipayTradeParams, generateRsaKeyPair, yuan } from '../../tools/simulator/platform-signers';
import { eventually, sleep } from '../support/eventually';
import { Factories } from '../support/factories';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { FORM, receive } from '../support/medium-intake';
import { metricValue } from '../support/order-effects';
import { count, TestPlatforms, uniqueId } from '../support/test-app';

/**
 * As services: a notification refused for its signature, its merchant, its
 * decryption or an unknown order is kept by the notify use case (NotificationIntake.receive, whose
 * reply is the platform's) with its bytes, headers and reason, once per (channel, bytes), at most
 * REFUSED_NOTIFICATIONS_PER_HOUR new ones per channel and hour whichever instance refuses them, the
 * rest counted as dropped; the admin queries list and read them; the re-verification settles one
 * through the same use case after the key is fixed, the payment once; retention prunes them. Moved
 * from test/refused-notifications.e2e-spec.ts with the same assertions; the admin API's roles,
 * validation, masking per role and audits of refusals stay there.
 */
const DAY_MS = 24 * 3600_000;
const WECHAT_WINDOW_S = 300;
/** Retention as a day for refused notifications only: the rest is never pruned by this suite. */
const RETENTION = { RETENTION_REFUSED_DAYS: '1', RETENTION_RAW_DAYS: '36500', RETENTION_EVENTS_DAYS: '36500' };
const MODULES = [
  OrderModule,
  NotifyModule,
  AdminModule,
  RetentionModule.forRoot([RefusedNotificationsRetention, RefusedHoursRetention], [RefusedNotificationModule]),
];

let setup: Medium;
let platforms: TestPlatforms;
/** The platforms' keys as they should be. */
let right: MediumContext;
/** The same service on the same database, with the wrong platform public keys (a botched rotation). */
let wrong: MediumContext;
let make: Factories;
let pool: Pool;

beforeAll(async () => {
  // The hourly caps and their counts are per channel across the database, and retention prunes all of it.
  setup = await startMedium(RETENTION, { imports: MODULES, fake: false, ownDatabase: true });
  ({ platforms, ctx: right, make, pool } = setup);
  const dir = mkdtempSync(join(tmpdir(), 'pcs-wrong-keys-'));
  writeFileSync(join(dir, 'wrong-pub.pem'), generateRsaKeyPair().publicKeyPem);
  wrong = await setup.another({
    ...RETENTION,
    WECHATPAY_PUBLIC_KEY_PATH: join(dir, 'wrong-pub.pem'),
    ALIPAY_PUBLIC_KEY_PATH: join(dir, 'wrong-pub.pem'),
  });
});

afterAll(() => setup?.close());

const sha256 = (body: string) => createHash('sha256').update(body, 'utf8').digest();
/** Exactly what a platform posts: its headers and bytes. */
interface RawDelivery {
  headers: Record<string, string>;
  body: string;
}
const wechatpay = (ctx: MediumContext, d: RawDelivery) => receive(ctx, 'wechatpay', d.headers, d.body);
const alipay = (ctx: MediumContext, form: string) => receive(ctx, 'alipay', { 'content-type': FORM }, form);
/** An admin's re-verification (what POST /admin/refused-notifications/:id/reverify calls), in a context of its own as a request. */
const reverify = (ctx: MediumContext, id: string) =>
  ctx.inContext(() => ctx.get(RefusedNotificationReverification).reverify(id, 'alice'));
const queries = () => right.get(RefusedNotificationQueries);

interface KeptRow {
  id: string;
  channel: string;
  reason: string;
  times_seen: number;
  raw_body: Buffer;
  headers: Record<string, string>;
  status: string;
  reverify_count: number;
  reverify_reason: string | null;
}

async function keptRows(channel: string, body: string): Promise<KeptRow[]> {
  const [rows] = await pool.query<RowDataPacket[]>(
    'SELECT * FROM refused_notification WHERE channel = ? AND body_sha256 = ?',
    [channel, sha256(body)],
  );
  return rows.map((r) => ({
    ...(r as KeptRow),
    id: String(r.id),
    headers:
      typeof r.headers === 'string'
        ? (JSON.parse(r.headers) as Record<string, string>)
        : (r.headers as Record<string, string>),
  }));
}

async function keptRow(channel: string, body: string): Promise<KeptRow> {
  const rows = await keptRows(channel, body);
  expect(rows).toHaveLength(1);
  return rows[0];
}

/** A WeChat Pay payment signed with the platform's real key at `timestamp` (Unix seconds). */
function signedAt(orderNo: string, transactionId: string, amount: number, timestamp: number) {
  return make.deliveries.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: amount }, { timestamp });
}

/** A WeChat Pay payment signed by someone who is not WeChat Pay. */
function forgedWechatpay(orderNo: string): RawDelivery {
  return make.deliveries.wechatpayPayment(
    { outTradeNo: orderNo, transactionId: uniqueId('T'), total: 100 },
    { signer: { ...platforms.wechatpay.publicKeySigner, privateKey: generateRsaKeyPair().privateKey } },
  );
}

/** An Alipay payment signed by someone who is not Alipay. */
function forgedAlipay(orderNo: string): string {
  return alipayDelivery(
    generateRsaKeyPair().privateKey,
    alipayTradeParams({
      appId: platforms.alipay.appId,
      sellerId: platforms.alipay.sellerId,
      outTradeNo: orderNo,
      tradeNo: uniqueId('T'),
      totalAmount: yuan(100),
      tradeStatus: 'TRADE_SUCCESS',
    }),
  );
}

/** The series of this process's registry (every instance here counts in it). */
async function metric(name: string, labels: Record<string, string>): Promise<number> {
  return metricValue(await metricsRegistry.metrics(), name, labels);
}

async function auditActions(target: string): Promise<string[]> {
  const [rows] = await pool.query<RowDataPacket[]>('SELECT action FROM admin_audit WHERE target = ? ORDER BY id', [
    target,
  ]);
  return rows.map((r) => r.action as string);
}

function replyBody(body: unknown): unknown {
  return typeof body === 'string' ? JSON.parse(body) : body;
}

describe('refused notifications, kept', () => {
  it('should keep a bad signature delivered 8 times at once as one row seen 8 times, and answer 401 each', async () => {
    const { orderNo } = await make.order({ amount: 100 });
    const forged = forgedWechatpay(orderNo);

    const answers = await Promise.all(Array.from({ length: 8 }, () => wechatpay(right, forged)));

    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(401));
    const row = await keptRow('WECHATPAY', forged.body);
    expect(row).toMatchObject({ reason: 'InvalidSignature', times_seen: 8, status: 'REFUSED', reverify_count: 0 });
    expect(row.raw_body.toString('utf8')).toBe(forged.body);
    for (const name of ['wechatpay-signature', 'wechatpay-timestamp', 'wechatpay-nonce', 'wechatpay-serial']) {
      expect(row.headers[name]).toBe(forged.headers[name]);
    }
    expect(
      await count(pool, "SELECT COUNT(*) FROM payment_order WHERE order_no = ? AND status = 'WAIT_PAY'", [orderNo]),
    ).toBe(1);
  });

  it('should keep a notification for an unknown order and count it REFUSED in the metric the alert reads', async () => {
    const labels = { channel: 'ALIPAY', outcome: 'REFUSED', reason: 'OrderNotFound' };
    const before = await metric('payment_notifications_total', labels);
    const orderNo = uniqueId('RU');
    const body = make.deliveries.alipayPayment({ outTradeNo: orderNo, tradeNo: uniqueId('T'), totalAmount: yuan(250) });

    const answer = await alipay(right, body);

    expect(answer.status).toBe(404);
    expect(await metric('payment_notifications_total', labels)).toBe(before + 1);
    const row = await keptRow('ALIPAY', body);
    expect(row).toMatchObject({ reason: 'OrderNotFound', times_seen: 1 });
    expect(row.headers['content-type']).toMatch(/x-www-form-urlencoded/);

    // Once the order is registered, an admin settles it from the kept bytes.
    await make.order({ orderNo, amount: 250 });
    const reverified = await reverify(right, row.id);
    expect(reverified).toMatchObject({ accepted: true, status: 'ACCEPTED', answerStatus: 200 });
    expect(
      await count(pool, "SELECT COUNT(*) FROM payment_order WHERE order_no = ? AND status = 'PAID'", [orderNo]),
    ).toBe(1);
  });

  it('should not keep a malformed body or a stale signature, which no key can fix', async () => {
    const malformed = '{"id":';
    const answer = await wechatpay(right, { headers: { 'content-type': 'application/json' }, body: malformed });
    expect(answer.status).toBe(400);
    expect(await keptRows('WECHATPAY', malformed)).toEqual([]);

    const stale = signedAt(uniqueId('RS'), uniqueId('T'), 100, Math.floor(Date.now() / 1000) - 3600);
    expect((await wechatpay(right, stale)).status).toBe(401);
    expect(await keptRows('WECHATPAY', stale.body)).toEqual([]);
  });

  it('should still answer 401 when the row cannot be written, count it FAILED and keep nothing of it', async () => {
    const forged = forgedWechatpay(uniqueId('RW'));
    const labels = { channel: 'WECHATPAY', reason: 'InvalidSignature', result: 'FAILED' };
    const before = await metric('refused_notifications_total', labels);
    const hour = new Date(Math.floor(Date.now() / 3600_000) * 3600_000);
    const kept = () =>
      count(
        pool,
        "SELECT COALESCE(SUM(kept), 0) FROM refused_notification_hour WHERE channel = 'WECHATPAY' AND hour = ?",
        [hour],
      );
    const keptBefore = await kept();
    await pool.query(
      `CREATE TRIGGER fail_refused_insert BEFORE INSERT ON refused_notification FOR EACH ROW
       IF NEW.body_sha256 = UNHEX('${sha256(forged.body).toString('hex')}') THEN
         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'injected failure'; END IF`,
    );
    try {
      const answer = await wechatpay(right, forged);

      expect(answer.status).toBe(401);
      expect(replyBody(answer.body)).toEqual({ code: 'FAIL', message: expect.any(String) });
    } finally {
      await pool.query('DROP TRIGGER IF EXISTS fail_refused_insert');
    }
    expect(await metric('refused_notifications_total', labels)).toBe(before + 1);
    expect(await keptRows('WECHATPAY', forged.body)).toEqual([]);
    // The hour's claim rolled back with the row: the place is not lost.
    if (new Date(Math.floor(Date.now() / 3600_000) * 3600_000).getTime() === hour.getTime()) {
      expect(await kept()).toBe(keptBefore);
    }
  });

  it('should cap new ones per channel and hour across two instances under a flood, and count what it dropped', async () => {
    const forgeries = { channel: 'ALIPAY', reason: 'InvalidSignature' };
    const hourRow = async (hour: Date) => {
      const [rows] = await pool.query<RowDataPacket[]>(
        "SELECT kept, dropped FROM refused_notification_hour WHERE channel = 'ALIPAY' AND hour = ? AND kind = 'UNSIGNED'",
        [hour],
      );
      return { kept: Number(rows[0]?.kept ?? 0), dropped: Number(rows[0]?.dropped ?? 0) };
    };
    const instances: MediumContext[] = [];
    /**
     * 12 forgeries to two new instances capped at 3 more than the hour has kept so far: 8 at once
     * (as many as the instances write at once, so none gives up waiting for a write), then 4 more,
     * each wave once every refusal of it has been counted (the count follows the write, which may
     * finish after the 401 went).
     */
    const flood = async () => {
      const hour = utcHour(new Date());
      const before = await hourRow(hour);
      const capped = { ...platforms.env, ...RETENTION, REFUSED_NOTIFICATIONS_PER_HOUR: String(before.kept + 3) };
      const pair = [await setup.another(() => capped, MODULES), await setup.another(() => capped, MODULES)];
      instances.push(...pair);
      const droppedBefore = await metric('refused_notifications_total', { ...forgeries, result: 'DROPPED' });
      const bodies = Array.from({ length: 12 }, () => forgedAlipay(uniqueId('RF')));
      const answers = [];
      for (const wave of [bodies.slice(0, 8), bodies.slice(8)]) {
        const counted = await metric('refused_notifications_total', forgeries);
        answers.push(...(await Promise.all(wave.map((body, i) => alipay(pair[i % 2], body)))));
        await eventually(
          'every refusal of the wave counted',
          async () => (await metric('refused_notifications_total', forgeries)) === counted + wave.length,
        );
      }
      return { hour, before, bodies, answers, droppedBefore };
    };
    try {
      // The cap is per UTC hour of arrival: a flood that crossed the top of an hour is run again,
      // wholly in the new hour, which it is far too short to leave.
      let run = await flood();
      if (utcHour(new Date()).getTime() !== run.hour.getTime()) run = await flood();
      const { hour, before, bodies, answers, droppedBefore } = run;

      expect(answers.map((a) => a.status)).toEqual(Array(12).fill(401));
      const after = await hourRow(hour);
      expect({ kept: after.kept - before.kept, dropped: after.dropped - before.dropped }).toEqual({
        kept: 3,
        dropped: 9,
      });
      expect(
        await count(pool, "SELECT COUNT(*) FROM refused_notification WHERE channel = 'ALIPAY' AND body_sha256 IN (?)", [
          bodies.map(sha256),
        ]),
      ).toBe(3);
      // The instances count in this process's one registry: what was dropped, once each.
      const dropped = await metric('refused_notifications_total', { ...forgeries, result: 'DROPPED' });
      expect(dropped - droppedBefore).toBeGreaterThanOrEqual(9);

      // A repeat of kept bytes is no new one: counted on its row, not against the cap or as dropped.
      const keptBody = (
        await Promise.all(bodies.map(async (body) => ((await keptRows('ALIPAY', body)).length > 0 ? body : undefined)))
      ).find((body) => body !== undefined)!;
      expect((await alipay(instances[0], keptBody)).status).toBe(401);
      expect(await hourRow(hour)).toEqual(after);
      expect((await keptRow('ALIPAY', keptBody)).times_seen).toBe(2);

      // An unknown order, which only the platform can sign, has a cap of its own: forgeries never crowd it out.
      const unknown = make.deliveries.alipayPayment({
        outTradeNo: uniqueId('RN'),
        tradeNo: uniqueId('T'),
        totalAmount: yuan(1),
      });
      expect((await alipay(instances[1], unknown)).status).toBe(404);
      expect((await keptRow('ALIPAY', unknown)).reason).toBe('OrderNotFound');

      // Operators see the hour (what GET /admin/refused-notifications/hours answers).
      const shown = (await queries().hours({})).rows.find(
        (r) => r.channel === 'ALIPAY' && r.hour === hour.toISOString() && r.kind === 'UNSIGNED',
      );
      expect(shown).toEqual({
        channel: 'ALIPAY',
        hour: hour.toISOString(),
        kind: 'UNSIGNED',
        ...(await hourRow(hour)),
      });
    } finally {
      for (const instance of instances) await instance.close();
    }
  });
});

describe('refused notifications, read and re-verified', () => {
  it('should re-verify after the key is fixed: paid once under 8 concurrent re-verifications, audited', async () => {
    const orderNo = uniqueId('RK');
    const transactionId = uniqueId('T');
    await make.order({ orderNo, amount: 880 });
    // Signed 4 min 50 s ago: fresh when received, stale (past WeChat's 5 minutes) by the time it is re-verified.
    const signedAtS = Math.floor(Date.now() / 1000) - (WECHAT_WINDOW_S - 10);
    const delivery = signedAt(orderNo, transactionId, 880, signedAtS);

    expect((await wechatpay(wrong, delivery)).status).toBe(401);
    const row = await keptRow('WECHATPAY', delivery.body);
    expect(row.reason).toBe('InvalidSignature');

    // Re-verified where the key is still wrong: refused again, nothing paid, the reason on the row.
    const again = await reverify(wrong, row.id);
    expect(again).toMatchObject({ accepted: false, status: 'REFUSED', reverifyReason: 'InvalidSignature' });
    expect(await keptRow('WECHATPAY', delivery.body)).toMatchObject({ times_seen: 1, reverify_count: 1 });

    // Past the window now: the same bytes sent today are stale.
    while (Date.now() / 1000 - signedAtS <= WECHAT_WINDOW_S + 2) await sleep(1000);
    expect((await wechatpay(right, delivery)).status).toBe(401);

    const answers = await Promise.all(Array.from({ length: 8 }, () => reverify(right, row.id)));

    expect(answers.map((a) => a.accepted)).toEqual(Array(8).fill(true));
    expect(
      await count(pool, "SELECT COUNT(*) FROM payment_order WHERE order_no = ? AND status = 'PAID'", [orderNo]),
    ).toBe(1);
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE transaction_id = ?', [transactionId])).toBe(
      1,
    );
    expect(
      await count(pool, "SELECT COUNT(*) FROM callback_delivery WHERE transaction_id = ? AND outcome = 'PAID'", [
        transactionId,
      ]),
    ).toBe(1);
    expect(await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no = ?', [orderNo])).toBe(1);
    expect(
      await count(pool, "SELECT COUNT(*) FROM order_status_change WHERE order_no = ? AND to_status = 'PAID'", [
        orderNo,
      ]),
    ).toBe(1);
    expect(await keptRow('WECHATPAY', delivery.body)).toMatchObject({
      status: 'ACCEPTED',
      reverify_count: 9,
      reverify_reason: null,
    });
    const actions = await auditActions(`refused-notification:${row.id}`);
    expect(actions.filter((a) => a === 'REFUSED_NOTIFICATION_REVERIFIED')).toHaveLength(9);
  }, 60_000);

  it('should list with filters and pages, the bytes masked for a viewer and exact for an admin', async () => {
    const bodies = [forgedAlipay(uniqueId('RL')), forgedAlipay(uniqueId('RL'))];
    for (const body of bodies) expect((await alipay(right, body)).status).toBe(401);
    const ids = await Promise.all(bodies.map(async (body) => (await keptRow('ALIPAY', body)).id));

    const first = await queries().list({ channel: 'ALIPAY', reason: 'InvalidSignature', limit: 1 });
    expect(first.items.map((i) => i.id)).toEqual([ids[1]]);
    const second = await queries().list({
      channel: 'ALIPAY',
      reason: 'InvalidSignature',
      limit: 1,
      cursor: first.nextCursor!,
    });
    expect(second.items[0]).toMatchObject({
      id: ids[0],
      reason: 'InvalidSignature',
      timesSeen: 1,
      bodyBytes: Buffer.byteLength(bodies[0]),
    });
    expect((await queries().list({ channel: 'WECHATPAY', limit: 200 })).items.map((i) => i.id)).not.toContain(ids[0]);
    expect(await queries().list({ from: '2000-01-01T00:00:00Z', to: '2000-01-02T00:00:00Z' })).toEqual({
      items: [],
      nextCursor: null,
    });

    expect(await queries().one(ids[0], AdminRole.Viewer)).toMatchObject({
      id: ids[0],
      masked: true,
      headers: { 'content-type': expect.any(String) },
    });
    expect(await queries().one(ids[0], AdminRole.Admin)).toMatchObject({
      masked: false,
      rawBody: bodies[0],
      rawBodyBase64: Buffer.from(bodies[0]).toString('base64'),
    });
    await expect(queries().one('999999999999', AdminRole.Viewer)).rejects.toMatchObject({ status: 404 });
  });

  it('should be pruned by retention RETENTION_REFUSED_DAYS after it was first refused', async () => {
    const body = forgedAlipay(uniqueId('RR'));
    expect((await alipay(right, body)).status).toBe(401);
    const pruner = right.get(RetentionPruner);

    await pruner.pruneBatch(new Date(Date.now() + DAY_MS / 2));
    expect(await keptRows('ALIPAY', body)).toHaveLength(1);

    for (let round = 0; round < 100; round++) {
      const counts = await pruner.pruneBatch(new Date(Date.now() + 2 * DAY_MS));
      if (counts.refused_notification === 0 && counts.refused_notification_hour === 0) break;
    }
    expect(await keptRows('ALIPAY', body)).toEqual([]);
    // The hourly counts go with them: every hour so far is past that horizon.
    expect(await count(pool, 'SELECT COUNT(*) FROM refused_notification_hour')).toBe(0);
  });
});

describe('refused notifications, bounded under a fixed clock', () => {
  const HOUR_MS = 3600_000;
  const CAP = 3;
  /** An hour long past, so that nothing else of this suite is in its hours or before its horizons. */
  const t0 = new Date('2026-03-01T08:00:00.000Z');
  const at = (ms: number) => new Date(t0.getTime() + ms);
  const refusal = (body: string, receivedAt: Date): Refusal => ({
    channel: 'UNIONPAY',
    notifyPath: 'unionpay',
    reason: 'InvalidSignature',
    body: Buffer.from(body),
    bodySha256: sha256(body),
    headers: { 'content-type': FORM },
    receivedAt,
    orderNo: null,
    transactionId: null,
  });
  const keep = (body: string, receivedAt: Date) =>
    right.get(RefusedNotificationRepository).keep(refusal(body, receivedAt), CAP);
  /** Retention run to the end at `now`, as the background pruner does batch after batch. */
  async function pruneAt(now: Date): Promise<void> {
    for (let round = 0; round < 100; round++) {
      const counts = await right.get(RetentionPruner).pruneBatch(now);
      if (counts.refused_notification === 0 && counts.refused_notification_hour === 0) return;
    }
  }
  const rows = async (bodies: string[]) =>
    count(pool, "SELECT COUNT(*) FROM refused_notification WHERE channel = 'UNIONPAY' AND body_sha256 IN (?)", [
      bodies.map(sha256),
    ]);

  it('should delete repeated bytes RETENTION_REFUSED_DAYS after they were first refused, however often repeated', async () => {
    const repeated = `repeated=${uniqueId('RB')}`;
    expect(await keep(repeated, t0)).toBe('KEPT');
    // Repeated through the day, the last one a minute before the horizon passes the first refusal.
    for (const hours of [1, 6, 12, 23]) expect(await keep(repeated, at(hours * HOUR_MS))).toBe('REPEAT');
    expect((await keptRow('UNIONPAY', repeated)).times_seen).toBe(5);

    await pruneAt(at(DAY_MS - 60_000));
    expect(await rows([repeated])).toBe(1);
    await pruneAt(at(DAY_MS + 60_000));
    expect(await rows([repeated])).toBe(0);

    // The same bytes again after that are a new row, first refused now, and count against the hour's cap.
    expect(await keep(repeated, at(DAY_MS + 120_000))).toBe('KEPT');
    await pruneAt(at(2 * DAY_MS + 60_000));
    expect(await rows([repeated])).toBe(1);
    await pruneAt(at(2 * DAY_MS + 180_000));
    expect(await rows([repeated])).toBe(0);
  });

  it('should keep at most the cap of distinct bytes an hour, and no more than the cap times the hours retained', async () => {
    const hour = (n: number) => Array.from({ length: 2 * CAP }, (_, i) => `distinct=${uniqueId(`RD${n}x${i}`)}`);
    const hours = [hour(0), hour(1), hour(2)];

    const results: string[] = [];
    for (const [n, bodies] of hours.entries()) {
      // Each hour's bodies, then each again: repeats neither take a place nor keep a dropped one.
      for (const body of [...bodies, ...bodies]) results.push(await keep(body, at(3 * DAY_MS + n * HOUR_MS + 1000)));
    }

    const perHour = (n: number) => results.slice(n * 4 * CAP, (n + 1) * 4 * CAP);
    for (const n of [0, 1, 2]) {
      expect(perHour(n).filter((r) => r === 'KEPT')).toHaveLength(CAP);
      expect(perHour(n).filter((r) => r === 'REPEAT')).toHaveLength(CAP);
      expect(perHour(n).filter((r) => r === 'DROPPED')).toHaveLength(2 * CAP);
    }
    expect(await rows(hours.flat())).toBe(3 * CAP);
    // A day after the first hour's refusals, only the later hours' are left; a day after the last's, none.
    await pruneAt(at(4 * DAY_MS + HOUR_MS / 2));
    expect(await rows(hours.flat())).toBe(2 * CAP);
    await pruneAt(at(4 * DAY_MS + 3 * HOUR_MS));
    expect(await rows(hours.flat())).toBe(0);
  });
});
