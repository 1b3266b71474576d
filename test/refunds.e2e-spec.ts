import { Channel } from '../src/domain/notification';
import { sleep } from './support/eventually';
import { OrderEffects } from './support/order-effects';
import { RefundEffects } from './support/refund-effects';
import { paidOrder as paidOrderBy } from './support/paid-orders';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { FakePlatform } from '../tools/simulator/fake-platform';
import { FakePlatformSuite, startFakePlatformSuite } from './support/fake-platform-suite';
import { count, HttpAnswer, RunningApp, startApp, TestClient, TestPlatforms, uniqueId } from './support/test-app';

/**
 * Emergency refunds end to end: real signed payments make the anomalies, the admin API records the
 * refund, the service calls a local fake of each channel's refund API (which checks the merchant's
 * request signatures and signs its answers), and refund notifications settle what the API left open.
 */
let platforms: TestPlatforms;
let fake: FakePlatform;
let replicaA: RunningApp;
let replicaB: RunningApp;
let clientA: TestClient;
let clientB: TestClient;
let pool: Pool;
let orders: OrderEffects;
let refunds: RefundEffects;

const REFUND_TIMEOUT_MS = 500;
const PROCESSING_MAX_AGE_S = 3;

let suite: FakePlatformSuite;

beforeAll(async () => {
  suite = await startFakePlatformSuite({ hangMs: 2000 });
  ({ platforms, fake, pool } = suite);
  const env = {
    ...suite.env,
    REFUND_REQUEST_TIMEOUT_MS: String(REFUND_TIMEOUT_MS),
    REFUND_RETRY_BASE_DELAY_MS: '1000',
    REFUND_RETRY_MAX_DELAY_MS: '2000',
    REFUND_POLL_INTERVAL_MS: '100',
    REFUND_PROCESSING_MAX_AGE_SECONDS: String(PROCESSING_MAX_AGE_S),
  };
  replicaA = await suite.startApp(env);
  replicaB = await suite.startApp(env);
  clientA = suite.clientOf(replicaA);
  clientB = suite.clientOf(replicaB);
  orders = new OrderEffects(pool);
  refunds = new RefundEffects(pool);
});

afterAll(() => suite?.close());

/** An order paid by one transaction, and (optionally) paid again by a second one: a DUPLICATE_PAYMENT. */
const paidOrder = (channel: Channel, amount: number, duplicate = false) =>
  paidOrderBy(clientA, channel, amount, { duplicate });

function emergencyRefund(
  client: TestClient,
  token: string,
  body: { orderNo: string; transactionId: string; amount?: number; reason?: string; refundNo?: string },
): Promise<HttpAnswer> {
  return client.admin('POST', '/admin/refunds/emergency', token, { reason: 'money taken twice', ...body });
}

async function row(sql: string, params: unknown[]): Promise<Record<string, unknown> | undefined> {
  const [rows] = await pool.query<RowDataPacket[]>(sql, params);
  return rows[0];
}

describe('emergency refund of a duplicate payment', () => {
  it('should make one refund and one channel call when two admins on two replicas fire it 20 times at once', async () => {
    const { orderNo, duplicateBy, amount } = await paidOrder('WECHATPAY', 2500, true);
    expect(await refunds.anomalyStatus(duplicateBy)).toBe('OPEN');
    const auditBefore = await count(pool, 'SELECT COUNT(*) FROM admin_audit WHERE target = ?', [`order:${orderNo}`]);

    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0
          ? emergencyRefund(clientA, platforms.admins.admin, { orderNo, transactionId: duplicateBy })
          : emergencyRefund(clientB, platforms.admins.admin2, { orderNo, transactionId: duplicateBy }),
      ),
    );

    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(202));
    const refundNos = new Set(answers.map((a) => a.json().refundNo));
    expect(refundNos.size).toBe(1);
    expect(answers.filter((a) => a.json().created === true)).toHaveLength(1);
    const [refundNo] = refundNos as Set<string>;
    expect(answers[0].json()).toMatchObject({
      orderNo,
      transactionId: duplicateBy,
      channel: 'WECHATPAY',
      purpose: 'DUPLICATE_PAYMENT',
      amount,
      currency: 'CNY',
    });

    const refund = await refunds.statusIs(refundNo, 'SUCCEEDED');
    expect(refund.channel_refund_id).toMatch(/^5000\d{25}$/);
    expect(fake.callsFor(refundNo)).toBe(1);
    expect(fake.calls.find((c) => c.refundNo === refundNo)).toMatchObject({ transactionId: duplicateBy, amount });
    expect(await count(pool, 'SELECT COUNT(*) FROM refund WHERE transaction_id = ?', [duplicateBy])).toBe(1);
    expect(await refunds.anomalyStatus(duplicateBy)).toBe('RESOLVED');
    expect(await orders.status(orderNo)).toBe('PAID');
    expect(await refunds.succeededEvents(orderNo)).toBe(1);
    const [audits] = await pool.query<
      Array<RowDataPacket & { operator_id: string; result: string | { created: boolean; refundNo: string } }>
    >('SELECT operator_id, action, result FROM admin_audit WHERE target = ? ORDER BY id', [`order:${orderNo}`]);
    expect(audits.length - auditBefore).toBe(20);
    expect(new Set(audits.map((a) => a.operator_id))).toEqual(new Set(['alice', 'bob']));
    expect(audits.every((a) => a.action === 'EMERGENCY_REFUND')).toBe(true);
    const results = audits.map((a) =>
      typeof a.result === 'string' ? (JSON.parse(a.result) as { created: boolean; refundNo: string }) : a.result,
    );
    expect(results.filter((r) => r.created === true)).toHaveLength(1);
    expect(results.every((r) => r.refundNo === refundNo)).toBe(true);
  });
});

describe('refunding the transaction that paid the order', () => {
  // The refusal's effects in the database, and the partial refunds around it, are in test/medium/refund.medium-spec.ts.
  it('should answer 422 OverRefund for more than the transaction paid, and write no refund, only the refusal audit', async () => {
    const { orderNo, paidBy } = await paidOrder('WECHATPAY', 1000);
    const audits = await count(pool, 'SELECT COUNT(*) FROM admin_audit WHERE target = ?', [`order:${orderNo}`]);

    const tooMuch = await emergencyRefund(clientA, platforms.admins.admin, {
      orderNo,
      transactionId: paidBy,
      amount: 1001,
    });

    expect(tooMuch.status).toBe(422);
    expect(tooMuch.json()).toMatchObject({ error: 'OverRefund' });
    expect(tooMuch.json().message).toContain('at most 1000 can still be refunded');
    expect(await count(pool, 'SELECT COUNT(*) FROM refund WHERE order_no = ?', [orderNo])).toBe(0);
    // Issue 35, item 7: the refused attempt is audited, as no change.
    expect(await count(pool, 'SELECT COUNT(*) FROM admin_audit WHERE target = ?', [`order:${orderNo}`])).toBe(
      audits + 1,
    );
    expect(
      await count(pool, "SELECT COUNT(*) FROM admin_audit WHERE target = ? AND action = 'EMERGENCY_REFUND_REFUSED'", [
        `order:${orderNo}`,
      ]),
    ).toBe(1);
    expect(await orders.status(orderNo)).toBe('PAID');
  });

  it('should let only an admin refund: 403 for a viewer, 401 without a token, nothing written', async () => {
    const { orderNo, paidBy } = await paidOrder('WECHATPAY', 1300);
    const audits = await count(pool, 'SELECT COUNT(*) FROM admin_audit');

    const asViewer = await emergencyRefund(clientA, platforms.admins.viewer, { orderNo, transactionId: paidBy });
    const anonymous = await clientA.admin('POST', '/admin/refunds/emergency', undefined, {
      orderNo,
      transactionId: paidBy,
      reason: 'x',
    });

    expect(asViewer.status).toBe(403);
    expect(asViewer.json()).toMatchObject({ error: 'Forbidden' });
    expect(anonymous.status).toBe(401);
    expect(await count(pool, 'SELECT COUNT(*) FROM refund WHERE order_no = ?', [orderNo])).toBe(0);
    // Issue 35, item 7: the viewer's refused attempt is audited (the anonymous one names no operator).
    expect(await count(pool, 'SELECT COUNT(*) FROM admin_audit')).toBe(audits + 1);
    expect(
      await count(pool, "SELECT COUNT(*) FROM admin_audit WHERE operator_id = 'victor' AND target = ?", [
        `order:${orderNo}`,
      ]),
    ).toBe(1);
    expect(await orders.status(orderNo)).toBe('PAID');
  });

  it('should answer 404 for a transaction that did not pay that order', async () => {
    const { orderNo } = await paidOrder('WECHATPAY', 1400);
    const answer = await emergencyRefund(clientA, platforms.admins.admin, { orderNo, transactionId: uniqueId('NOPE') });
    expect(answer.status).toBe(404);
    expect(answer.json()).toMatchObject({ error: 'PaymentNotFound' });
  });
});

describe('channel failures', () => {
  it('should answer 503 and write nothing when the channel has no refund credentials', async () => {
    const { ALIPAY_APP_PRIVATE_KEY_PATH: _unset, ...env } = platforms.env;
    const noAlipayRefunds = await startApp({ ...env, ALIPAY_GATEWAY_URL: fake.alipayGatewayUrl });
    try {
      const { orderNo, paidBy } = await paidOrder('ALIPAY', 4500);
      const client = new TestClient(noAlipayRefunds.url, platforms);

      const answer = await emergencyRefund(client, platforms.admins.admin, { orderNo, transactionId: paidBy });

      expect(answer.status).toBe(503);
      expect(answer.json()).toMatchObject({ error: 'RefundChannelUnavailable' });
      expect(answer.json().message).toContain('ALIPAY_APP_PRIVATE_KEY_PATH');
      expect(await count(pool, 'SELECT COUNT(*) FROM refund WHERE order_no = ?', [orderNo])).toBe(0);
      expect(await orders.status(orderNo)).toBe('PAID');
    } finally {
      await noAlipayRefunds.close();
    }
  });
});

describe('refund notifications', () => {
  it('should acknowledge a refund notification for a refund this service never made, changing nothing', async () => {
    const { orderNo, paidBy } = await paidOrder('WECHATPAY', 700);
    const notice = clientA.wechatpayRefundNotice({
      outTradeNo: orderNo,
      transactionId: paidBy,
      outRefundNo: uniqueId('CONSOLE'),
      refundId: '50000000382019052709732678859',
      total: 700,
      refund: 700,
    });

    expect((await clientA.postWechatpay(notice)).status).toBe(204);

    expect(await orders.status(orderNo)).toBe('PAID');
    expect(
      await row("SELECT outcome FROM callback_delivery WHERE order_no = ? AND event_type = 'REFUND.SUCCESS'", [
        orderNo,
      ]),
    ).toEqual({ outcome: 'UNKNOWN_REFUND' });
  });

  // Alipay's reply to a refund notification (the settling cases moved to test/medium/refund.medium-spec.ts).
  it('should answer an Alipay refund notification for a refund this service never made with success, changing nothing', async () => {
    const { orderNo, paidBy } = await paidOrder('ALIPAY', 800);
    const notice = clientA.alipayRefundNotice({
      outTradeNo: orderNo,
      tradeNo: paidBy,
      totalAmount: '8.00',
      outBizNo: uniqueId('CONSOLE'),
      refundFee: '8.00',
    });

    const answer = await clientB.postAlipay(notice);

    expect(answer.status).toBe(200);
    expect(answer.body).toBe('success');
    expect(await orders.status(orderNo)).toBe('PAID');
    expect(
      await row("SELECT outcome FROM callback_delivery WHERE order_no = ? AND event_type LIKE 'REFUND%'", [orderNo]),
    ).toEqual({ outcome: 'UNKNOWN_REFUND' });
  });
});

/** A WeChat refund accepted as PROCESSING, for the tests of what comes after. */
async function processingWechatpayRefund(amount: number, refundAmount = amount) {
  const { orderNo, paidBy } = await paidOrder('WECHATPAY', amount);
  const refundNo = uniqueId('AB');
  fake.script(refundNo, 'processing');
  const answer = await emergencyRefund(clientA, platforms.admins.admin, {
    orderNo,
    transactionId: paidBy,
    amount: refundAmount,
    refundNo,
  });
  expect(answer.status).toBe(202);
  const processing = await refunds.statusIs(refundNo, 'PROCESSING');
  const notice = (status: 'SUCCESS' | 'CLOSED' | 'ABNORMAL') =>
    clientA.wechatpayRefundNotice(
      {
        outTradeNo: orderNo,
        transactionId: paidBy,
        outRefundNo: refundNo,
        refundId: String(processing.channel_refund_id),
        refundStatus: status,
        total: amount,
        refund: refundAmount,
      },
      `REFUND.${status}`,
    );
  return { orderNo, paidBy, refundNo, notice };
}

describe('POST /admin/refunds/:refundNo/resolve-offline', () => {
  const resolve = (refundNo: string, token: string | undefined, body: unknown = { reason: 'paid by bank transfer' }) =>
    clientA.admin('POST', `/admin/refunds/${encodeURIComponent(refundNo)}/resolve-offline`, token, body);
  /** The audited changes of a refund; its refused attempts are audited apart (issue 35, item 7). */
  const audits = (refundNo: string) =>
    count(pool, "SELECT COUNT(*) FROM admin_audit WHERE target = ? AND action NOT LIKE '%\\_REFUSED'", [
      `refund:${refundNo}`,
    ]);
  const refusals = (refundNo: string) =>
    count(pool, "SELECT COUNT(*) FROM admin_audit WHERE target = ? AND action LIKE '%\\_REFUSED'", [
      `refund:${refundNo}`,
    ]);

  it('should settle an ABNORMAL refund as refunded, audited in the same transaction', async () => {
    const { orderNo, paidBy, refundNo, notice } = await processingWechatpayRefund(1600);
    expect((await clientA.postWechatpay(notice('ABNORMAL'))).status).toBe(204);

    const answer = await resolve(refundNo, platforms.admins.admin2);

    expect(answer.status).toBe(200);
    expect(answer.json()).toMatchObject({ refundNo, status: 'RESOLVED_OFFLINE', amount: 1600 });
    expect(await refunds.row(refundNo)).toMatchObject({ status: 'RESOLVED_OFFLINE' });
    expect(await orders.status(orderNo)).toBe('REFUNDED');
    expect(await refunds.reserved(paidBy)).toBe(1600);
    expect(await refunds.succeededEvents(orderNo)).toBe(1);
    const audit = await row('SELECT operator_id, action, request_body, result FROM admin_audit WHERE target = ?', [
      `refund:${refundNo}`,
    ]);
    expect(audit).toMatchObject({ operator_id: 'bob', action: 'REFUND_RESOLVED_OFFLINE' });
    const requestBody = audit!.request_body;
    expect(typeof requestBody === 'string' ? JSON.parse(requestBody) : requestBody).toEqual({
      reason: 'paid by bank transfer',
    });

    // The channel's late SUCCESS changes nothing more.
    expect((await clientB.postWechatpay(notice('SUCCESS'))).status).toBe(204);
    expect(await refunds.row(refundNo)).toMatchObject({ status: 'RESOLVED_OFFLINE' });
    expect((await refunds.deliveries(orderNo)).at(-1)).toBe('REFUND.SUCCESS DUPLICATE');
  });

  it('should answer 409 for a refund that is not ABNORMAL, 404 for an unknown one, and write nothing', async () => {
    const { orderNo, refundNo } = await processingWechatpayRefund(1500);

    const notAbnormal = await resolve(refundNo, platforms.admins.admin);
    const unknown = await resolve(uniqueId('NOPE'), platforms.admins.admin);

    expect(notAbnormal.status).toBe(409);
    expect(notAbnormal.json()).toMatchObject({ error: 'RefundConflict' });
    expect(notAbnormal.json().message).toContain(
      'is PROCESSING; only a refund that is ABNORMAL can be resolved offline',
    );
    expect(unknown.status).toBe(404);
    expect(unknown.json()).toMatchObject({ error: 'RefundNotFound' });
    expect(await refunds.row(refundNo)).toMatchObject({ status: 'PROCESSING' });
    expect(await orders.status(orderNo)).toBe('REFUNDING');
    expect(await audits(refundNo)).toBe(0);
    expect(await refusals(refundNo)).toBe(1);
  });

  it('should let only an admin resolve, with a reason, and write nothing otherwise', async () => {
    const { orderNo, refundNo, notice } = await processingWechatpayRefund(1400);
    expect((await clientA.postWechatpay(notice('ABNORMAL'))).status).toBe(204);

    const answers = {
      viewer: (await resolve(refundNo, platforms.admins.viewer)).status,
      anonymous: (await resolve(refundNo, undefined)).status,
      noReason: (await resolve(refundNo, platforms.admins.admin, {})).status,
      blankReason: (await resolve(refundNo, platforms.admins.admin, { reason: '   ' })).status,
      unknownField: (await resolve(refundNo, platforms.admins.admin, { reason: 'x', amount: 1 })).status,
    };

    expect(answers).toEqual({ viewer: 403, anonymous: 401, noReason: 400, blankReason: 400, unknownField: 400 });
    expect(await refunds.row(refundNo)).toMatchObject({ status: 'ABNORMAL' });
    expect(await orders.status(orderNo)).toBe('REFUNDING');
    expect(await audits(refundNo)).toBe(0);
    expect(await refusals(refundNo)).toBe(4);
  });
});

describe('GET /admin/refunds', () => {
  interface RefundPage {
    items: Array<{ refundNo: string; channel: string; status: string; createdAt: string }>;
    nextCursor: string | null;
  }
  const list = async (query: Record<string, string | number>, token = platforms.admins.viewer) => {
    const search = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
    return clientA.admin('GET', `/admin/refunds?${search.toString()}`, token);
  };

  it('should list refunds newest first, filtered by status, channel and time, page by page', async () => {
    const from = new Date().toISOString();
    const wechat = await processingWechatpayRefund(1100);
    const alipay = await paidOrder('ALIPAY', 1200);
    const alipayRefund = await emergencyRefund(clientA, platforms.admins.admin, {
      orderNo: alipay.orderNo,
      transactionId: alipay.paidBy,
      refundNo: uniqueId('LS'),
    });
    await refunds.statusIs(alipayRefund.json().refundNo as string, 'SUCCEEDED');
    const later = await processingWechatpayRefund(1300);
    const to = new Date(Date.now() + 1).toISOString();
    const window = { from, to };

    const all = await list(window);
    const processing = await list({ ...window, status: 'PROCESSING', channel: 'WECHATPAY' });
    const alipays = await list({ ...window, channel: 'ALIPAY' });
    const first = await list({ ...window, limit: 2 });
    const second = await list({ ...window, limit: 2, cursor: first.json<RefundPage>().nextCursor! });

    expect(all.status).toBe(200);
    expect(all.json<RefundPage>().items.map((r) => r.refundNo)).toEqual([
      later.refundNo,
      alipayRefund.json().refundNo,
      wechat.refundNo,
    ]);
    expect(all.json<RefundPage>().nextCursor).toBeNull();
    expect(processing.json<RefundPage>().items.map((r) => r.refundNo)).toEqual([later.refundNo, wechat.refundNo]);
    expect(alipays.json<RefundPage>().items).toEqual([
      expect.objectContaining({ refundNo: alipayRefund.json().refundNo, channel: 'ALIPAY', status: 'SUCCEEDED' }),
    ]);
    expect(first.json<RefundPage>().items.map((r) => r.refundNo)).toEqual([
      later.refundNo,
      alipayRefund.json().refundNo,
    ]);
    expect(second.json<RefundPage>()).toEqual({
      items: [expect.objectContaining({ refundNo: wechat.refundNo })],
      nextCursor: null,
    });
  });

  it.each([
    [{ status: 'LOST' }, 'status must be one of'],
    [{ channel: 'PAYPAL' }, 'channel must be one of'],
    [{ limit: 0 }, 'limit must be at least 1'],
    [{ limit: 201 }, 'limit must be at most 200'],
    [{ cursor: 'abc' }, 'cursor must be the nextCursor of a previous page'],
    [{ from: 'yesterday' }, 'from must be an ISO 8601 date-time'],
    [{ from: '2026-12-01T00:00:00Z', to: '2026-11-30T00:00:00Z' }, 'from must be before to'],
  ])('should answer 400 for %j', async (query, message) => {
    const answer = await list(query);
    expect(answer.status).toBe(400);
    expect(answer.json().message).toContain(message);
  });

  it('should need a token', async () => {
    expect((await clientA.admin('GET', '/admin/refunds', undefined)).status).toBe(401);
  });
});

describe('the refunds_unsettled metric', () => {
  const unsettled = async (channel: string, status: string) => {
    const text = await (await fetch(`${replicaB.managementUrl}/metrics`)).text();
    const line = text
      .split('\n')
      .find((l) => l.startsWith(`refunds_unsettled{channel="${channel}",status="${status}"}`));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };

  it('should count ABNORMAL refunds until they settle', async () => {
    const before = await unsettled('WECHATPAY', 'ABNORMAL');
    const { refundNo, notice } = await processingWechatpayRefund(1000);
    expect((await clientA.postWechatpay(notice('ABNORMAL'))).status).toBe(204);

    expect(await unsettled('WECHATPAY', 'ABNORMAL')).toBe(before + 1);

    expect((await clientA.postWechatpay(notice('SUCCESS'))).status).toBe(204);
    await refunds.statusIs(refundNo, 'SUCCEEDED');
    expect(await unsettled('WECHATPAY', 'ABNORMAL')).toBe(before);
  });

  it('should count PENDING and PROCESSING refunds only once they are older than REFUND_PROCESSING_MAX_AGE_SECONDS', async () => {
    const openProcessing = () =>
      count(pool, "SELECT COUNT(*) FROM refund WHERE channel = 'WECHATPAY' AND status = 'PROCESSING'");
    // Every other open refund first passes the age, so that the counts below are exact.
    const newest = await row("SELECT MAX(created_at) AS at FROM refund WHERE status IN ('PENDING', 'PROCESSING')", []);
    if (newest?.at) await sleep((newest.at as Date).getTime() + PROCESSING_MAX_AGE_S * 1000 + 200 - Date.now());
    const { refundNo } = await processingWechatpayRefund(900);
    const createdAt = ((await refunds.row(refundNo))!.created_at as Date).getTime();

    const young = await unsettled('WECHATPAY', 'PROCESSING');
    expect(Date.now() - createdAt).toBeLessThan(PROCESSING_MAX_AGE_S * 1000);
    expect(young).toBe((await openProcessing()) - 1);

    await sleep(createdAt + PROCESSING_MAX_AGE_S * 1000 + 200 - Date.now());

    expect(await unsettled('WECHATPAY', 'PROCESSING')).toBe(await openProcessing());
  });
});
