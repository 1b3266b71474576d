import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { RetentionPruner } from '../src/platform/retention/retention-pruner';
import { alipayDelivery, alipayTradeParams, generateRsaKeyPair, yuan } from '../tools/simulator/platform-signers';
import { sleep } from './support/eventually';
import { metricValue } from './support/order-effects';
import {
  count,
  createTestPlatforms,
  HttpAnswer,
  RunningApp,
  startApp,
  TestClient,
  testDatabasePool,
  TestPlatforms,
  uniqueId,
} from './support/test-app';

/**
 * Issue 39, item 2: a notification refused for its signature, its merchant, its decryption or an
 * unknown order is kept (bytes, headers, reason), once per (channel, bytes), at most
 * REFUSED_NOTIFICATIONS_PER_HOUR new ones per channel and hour whichever replica refuses them, the
 * rest counted as dropped; operators list and read them; an admin re-verifies one after fixing the
 * key, through the notify use case, audited, the payment settled once.
 */
const DAY_MS = 24 * 3600_000;
const WECHAT_WINDOW_S = 300;

let platforms: TestPlatforms;
/** The platforms' keys as they should be. */
let right: RunningApp;
/** The same service on the same database, started with the wrong platform public keys (a botched rotation). */
let wrong: RunningApp;
let client: TestClient;
let wrongClient: TestClient;
let pool: Pool;

beforeAll(async () => {
  platforms = await createTestPlatforms();
  const dir = mkdtempSync(join(tmpdir(), 'pcs-wrong-keys-'));
  const wrongKey = generateRsaKeyPair();
  writeFileSync(join(dir, 'wrong-pub.pem'), wrongKey.publicKeyPem);
  // Retention as a day for refused notifications only: the rest is never pruned by this suite.
  const retention = { RETENTION_REFUSED_DAYS: '1', RETENTION_RAW_DAYS: '36500', RETENTION_EVENTS_DAYS: '36500' };
  right = await startApp({ ...platforms.env, ...retention });
  wrong = await startApp({
    ...platforms.env,
    ...retention,
    WECHATPAY_PUBLIC_KEY_PATH: join(dir, 'wrong-pub.pem'),
    ALIPAY_PUBLIC_KEY_PATH: join(dir, 'wrong-pub.pem'),
  });
  client = new TestClient(right.url, platforms);
  wrongClient = new TestClient(wrong.url, platforms);
  pool = testDatabasePool();
});

afterAll(async () => {
  await right?.close();
  await wrong?.close();
  await pool?.end();
});

const sha256 = (body: string) => createHash('sha256').update(body, 'utf8').digest();

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
  return client.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: amount }, { timestamp });
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

async function metric(app: RunningApp, name: string, labels: Record<string, string>): Promise<number> {
  return metricValue(await (await fetch(`${app.managementUrl}/metrics`)).text(), name, labels);
}

async function auditActions(target: string): Promise<string[]> {
  const [rows] = await pool.query<RowDataPacket[]>('SELECT action FROM admin_audit WHERE target = ? ORDER BY id', [
    target,
  ]);
  return rows.map((r) => r.action as string);
}

const reverify = (app: RunningApp, id: string, token: string): Promise<HttpAnswer> =>
  new TestClient(app.url, platforms).admin('POST', `/admin/refused-notifications/${id}/reverify`, token);

describe('refused notifications, kept', () => {
  it('should keep a bad signature delivered 8 times at once as one row seen 8 times, and answer 401 each', async () => {
    const orderNo = uniqueId('RB');
    expect((await client.registerOrder({ orderNo, amount: 100 })).status).toBe(201);
    const forged = client.wechatpayPayment(
      { outTradeNo: orderNo, transactionId: uniqueId('T'), total: 100 },
      { signer: { ...platforms.wechatpay.publicKeySigner, privateKey: generateRsaKeyPair().privateKey } },
    );

    const answers = await Promise.all(Array.from({ length: 8 }, () => client.postWechatpay(forged)));

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
    const before = await metric(right, 'payment_notifications_total', labels);
    const orderNo = uniqueId('RU');
    const body = client.alipayPayment({ outTradeNo: orderNo, tradeNo: uniqueId('T'), totalAmount: yuan(250) });

    const answer = await client.postAlipay(body);

    expect(answer.status).toBe(404);
    expect(await metric(right, 'payment_notifications_total', labels)).toBe(before + 1);
    const row = await keptRow('ALIPAY', body);
    expect(row).toMatchObject({ reason: 'OrderNotFound', times_seen: 1 });
    expect(row.headers['content-type']).toMatch(/x-www-form-urlencoded/);

    // Once the order is registered, an admin settles it from the kept bytes.
    expect((await client.registerOrder({ orderNo, amount: 250 })).status).toBe(201);
    const reverified = await reverify(right, row.id, platforms.admins.admin);
    expect(reverified.status).toBe(200);
    expect(reverified.json()).toMatchObject({ accepted: true, status: 'ACCEPTED', answerStatus: 200 });
    expect(
      await count(pool, "SELECT COUNT(*) FROM payment_order WHERE order_no = ? AND status = 'PAID'", [orderNo]),
    ).toBe(1);
  });

  it('should not keep a malformed body or a stale signature, which no key can fix', async () => {
    const malformed = '{"id":';
    const answer = await client.postWechatpay({ headers: { 'content-type': 'application/json' }, body: malformed });
    expect(answer.status).toBe(400);
    expect(await keptRows('WECHATPAY', malformed)).toEqual([]);

    const stale = signedAt(uniqueId('RS'), uniqueId('T'), 100, Math.floor(Date.now() / 1000) - 3600);
    expect((await client.postWechatpay(stale)).status).toBe(401);
    expect(await keptRows('WECHATPAY', stale.body)).toEqual([]);
  });

  it('should still answer 401 when the row cannot be written, count it FAILED and keep nothing of it', async () => {
    const forged = client.wechatpayPayment(
      { outTradeNo: uniqueId('RW'), transactionId: uniqueId('T'), total: 100 },
      { signer: { ...platforms.wechatpay.publicKeySigner, privateKey: generateRsaKeyPair().privateKey } },
    );
    const labels = { channel: 'WECHATPAY', reason: 'InvalidSignature', result: 'FAILED' };
    const before = await metric(right, 'refused_notifications_total', labels);
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
      const answer = await client.postWechatpay(forged);

      expect(answer.status).toBe(401);
      expect(answer.json()).toEqual({ code: 'FAIL', message: expect.any(String) });
    } finally {
      await pool.query('DROP TRIGGER IF EXISTS fail_refused_insert');
    }
    expect(await metric(right, 'refused_notifications_total', labels)).toBe(before + 1);
    expect(await keptRows('WECHATPAY', forged.body)).toEqual([]);
    // The hour's claim rolled back with the row: the place is not lost.
    if (new Date(Math.floor(Date.now() / 3600_000) * 3600_000).getTime() === hour.getTime()) {
      expect(await kept()).toBe(keptBefore);
    }
  });

  it('should cap new ones per channel and hour across two replicas under a flood, and count what it dropped', async () => {
    // Far enough from the hour's end that the whole flood falls in one hour.
    const minutesLeft = 60 - new Date().getUTCMinutes();
    if (minutesLeft < 2) await sleep(minutesLeft * 60_000 + 1000);
    const hour = new Date(Math.floor(Date.now() / 3600_000) * 3600_000);
    const hourRow = async () => {
      const [rows] = await pool.query<RowDataPacket[]>(
        "SELECT kept, dropped FROM refused_notification_hour WHERE channel = 'ALIPAY' AND hour = ? AND kind = 'UNSIGNED'",
        [hour],
      );
      return { kept: Number(rows[0]?.kept ?? 0), dropped: Number(rows[0]?.dropped ?? 0) };
    };
    const before = await hourRow();
    const cap = String(before.kept + 3);
    const replicas = await Promise.all([
      startApp({ ...platforms.env, REFUSED_NOTIFICATIONS_PER_HOUR: cap }),
      startApp({ ...platforms.env, REFUSED_NOTIFICATIONS_PER_HOUR: cap }),
    ]);
    try {
      const bodies = Array.from({ length: 12 }, () => forgedAlipay(uniqueId('RF')));
      const answers = await Promise.all(
        bodies.map((body, i) => new TestClient(replicas[i % 2].url, platforms).postAlipay(body)),
      );

      expect(answers.map((a) => a.status)).toEqual(Array(12).fill(401));
      const after = await hourRow();
      expect({ kept: after.kept - before.kept, dropped: after.dropped - before.dropped }).toEqual({
        kept: 3,
        dropped: 9,
      });
      expect(
        await count(pool, "SELECT COUNT(*) FROM refused_notification WHERE channel = 'ALIPAY' AND body_sha256 IN (?)", [
          bodies.map(sha256),
        ]),
      ).toBe(3);
      const dropped = await Promise.all(
        replicas.map((r) =>
          metric(r, 'refused_notifications_total', {
            channel: 'ALIPAY',
            reason: 'InvalidSignature',
            result: 'DROPPED',
          }),
        ),
      );
      // The two replicas may share one registry in this process: at least what was dropped, at most twice.
      expect(Math.max(...dropped)).toBeGreaterThanOrEqual(9);

      // A repeat of kept bytes is no new one: counted on its row, not against the cap or as dropped.
      const keptBody = (
        await Promise.all(bodies.map(async (body) => ((await keptRows('ALIPAY', body)).length > 0 ? body : undefined)))
      ).find((body) => body !== undefined)!;
      expect((await new TestClient(replicas[0].url, platforms).postAlipay(keptBody)).status).toBe(401);
      expect(await hourRow()).toEqual(after);
      expect((await keptRow('ALIPAY', keptBody)).times_seen).toBe(2);

      // An unknown order, which only the platform can sign, has a cap of its own: forgeries never crowd it out.
      const unknown = client.alipayPayment({
        outTradeNo: uniqueId('RN'),
        tradeNo: uniqueId('T'),
        totalAmount: yuan(1),
      });
      expect((await new TestClient(replicas[1].url, platforms).postAlipay(unknown)).status).toBe(404);
      expect((await keptRow('ALIPAY', unknown)).reason).toBe('OrderNotFound');

      // Operators see the hour.
      const hours = await client.admin('GET', '/admin/refused-notifications/hours', platforms.admins.viewer);
      expect(hours.status).toBe(200);
      const shown = hours
        .json<{ rows: Array<{ channel: string; hour: string; kind: string; kept: number; dropped: number }> }>()
        .rows.find((r) => r.channel === 'ALIPAY' && r.hour === hour.toISOString() && r.kind === 'UNSIGNED');
      expect(shown).toEqual({ channel: 'ALIPAY', hour: hour.toISOString(), kind: 'UNSIGNED', ...(await hourRow()) });
    } finally {
      await Promise.all(replicas.map((r) => r.close()));
    }
  });
});

describe('refused notifications, read and re-verified', () => {
  it('should re-verify after the key is fixed: paid once under 8 concurrent re-verifications, audited', async () => {
    const orderNo = uniqueId('RK');
    const transactionId = uniqueId('T');
    expect((await client.registerOrder({ orderNo, amount: 880 })).status).toBe(201);
    // Signed 4 min 50 s ago: fresh when received, stale (past WeChat's 5 minutes) by the time it is re-verified.
    const signedAtS = Math.floor(Date.now() / 1000) - (WECHAT_WINDOW_S - 10);
    const delivery = signedAt(orderNo, transactionId, 880, signedAtS);

    expect((await wrongClient.postWechatpay(delivery)).status).toBe(401);
    const row = await keptRow('WECHATPAY', delivery.body);
    expect(row.reason).toBe('InvalidSignature');

    // Re-verified where the key is still wrong: refused again, nothing paid, the reason on the row.
    const again = await reverify(wrong, row.id, platforms.admins.admin);
    expect(again.status).toBe(200);
    expect(again.json()).toMatchObject({ accepted: false, status: 'REFUSED', reverifyReason: 'InvalidSignature' });
    expect((await keptRow('WECHATPAY', delivery.body)).times_seen).toBe(1);

    // A viewer may not, a malformed or unknown id is refused: nothing changes but the audit of the refusals.
    expect((await reverify(right, row.id, platforms.admins.viewer)).status).toBe(403);
    expect((await reverify(right, 'abc', platforms.admins.admin)).status).toBe(400);
    expect((await reverify(right, '999999999999', platforms.admins.admin)).status).toBe(404);
    expect((await keptRow('WECHATPAY', delivery.body)).reverify_count).toBe(1);

    // Past the window now: the same bytes sent today are stale.
    while (Date.now() / 1000 - signedAtS <= WECHAT_WINDOW_S + 2) await sleep(1000);
    expect((await client.postWechatpay(delivery)).status).toBe(401);

    const answers = await Promise.all(Array.from({ length: 8 }, () => reverify(right, row.id, platforms.admins.admin)));

    expect(answers.map((a) => [a.status, a.json().accepted])).toEqual(Array(8).fill([200, true]));
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
    expect(actions.filter((a) => a === 'REFUSED_NOTIFICATION_REVERIFY_REFUSED')).toHaveLength(1);
    expect(await auditActions('refused-notification:abc')).toEqual(['REFUSED_NOTIFICATION_REVERIFY_REFUSED']);
  }, 60_000);

  it('should list with filters and pages for a viewer, the bytes masked for a viewer and exact for an admin', async () => {
    const bodies = [forgedAlipay(uniqueId('RL')), forgedAlipay(uniqueId('RL'))];
    for (const body of bodies) expect((await client.postAlipay(body)).status).toBe(401);
    const ids = await Promise.all(bodies.map(async (body) => (await keptRow('ALIPAY', body)).id));

    const list = async (query: string, token = platforms.admins.viewer) =>
      client.admin('GET', `/admin/refused-notifications${query}`, token);
    const first = await list('?channel=ALIPAY&reason=InvalidSignature&limit=1');
    expect(first.status).toBe(200);
    const page = first.json<{ items: Array<{ id: string; channel: string }>; nextCursor: string }>();
    expect(page.items.map((i) => i.id)).toEqual([ids[1]]);
    const second = (await list(`?channel=ALIPAY&reason=InvalidSignature&limit=1&cursor=${page.nextCursor}`)).json<{
      items: Array<{ id: string; reason: string; timesSeen: number; bodyBytes: number }>;
    }>();
    expect(second.items[0]).toMatchObject({
      id: ids[0],
      reason: 'InvalidSignature',
      timesSeen: 1,
      bodyBytes: Buffer.byteLength(bodies[0]),
    });
    expect(
      (await list('?channel=WECHATPAY&limit=200')).json<{ items: Array<{ id: string }> }>().items.map((i) => i.id),
    ).not.toContain(ids[0]);
    expect((await list('?from=2000-01-01T00:00:00Z&to=2000-01-02T00:00:00Z')).json()).toEqual({
      items: [],
      nextCursor: null,
    });
    expect((await list('?reason=Nonsense')).status).toBe(400);
    expect((await list('?channel=PAYPAL')).status).toBe(400);
    expect((await list('')).status).toBe(200);
    expect((await client.admin('GET', '/admin/refused-notifications', undefined)).status).toBe(401);

    const asViewer = await client.admin('GET', `/admin/refused-notifications/${ids[0]}`, platforms.admins.viewer);
    expect(asViewer.status).toBe(200);
    expect(asViewer.json()).toMatchObject({
      id: ids[0],
      masked: true,
      headers: { 'content-type': expect.any(String) },
    });
    expect(await auditActions(`refused-notification:${ids[0]}`)).toEqual([]);
    const asAdmin = await client.admin('GET', `/admin/refused-notifications/${ids[0]}`, platforms.admins.admin);
    expect(asAdmin.json()).toMatchObject({
      masked: false,
      rawBody: bodies[0],
      rawBodyBase64: Buffer.from(bodies[0]).toString('base64'),
    });
    expect(await auditActions(`refused-notification:${ids[0]}`)).toEqual(['PAYLOAD_READ_UNMASKED']);
    expect(
      (await client.admin('GET', '/admin/refused-notifications/999999999999', platforms.admins.viewer)).status,
    ).toBe(404);
    expect((await client.admin('GET', '/admin/refused-notifications/1x', platforms.admins.viewer)).status).toBe(400);
  });

  it('should be pruned by retention once not refused again for RETENTION_REFUSED_DAYS', async () => {
    const body = forgedAlipay(uniqueId('RR'));
    expect((await client.postAlipay(body)).status).toBe(401);
    const pruner = right.app.get(RetentionPruner);

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
