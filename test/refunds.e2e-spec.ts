import { Pool, RowDataPacket } from 'mysql2/promise';
import { FourEyesReplicas, startFourEyesReplicas } from './support/four-eyes-replicas';
import { OrderEffects } from './support/order-effects';
import { paidOrder as paidOrderBy } from './support/paid-orders';
import { RefundEffects } from './support/refund-effects';
import { count, startApp, TestClient, uniqueId } from './support/test-app';

/**
 * The refund and anomaly APIs as an HTTP caller sees them: status codes, error bodies, tokens (admin,
 * viewer, none; the order service's internal token) and the audit of refused admin calls. What the
 * services do and write is in test/medium/ (refund*, shop-refund, anomaly-resolution).
 */
const THRESHOLD = 5000;

let setup: FourEyesReplicas | undefined;
let clients: TestClient[], pool: Pool;
let refunds: RefundEffects;
let orders: OrderEffects;
/** The tokens of alice and bob (admins), carol (a third admin) and victor (a viewer). */
let alice: string, bob: string, carol: string, victor: string;

beforeAll(async () => {
  setup = await startFourEyesReplicas(THRESHOLD, { REFUND_POLL_INTERVAL_MS: '50' });
  ({ carol, clients, pool } = setup);
  ({ admin: alice, admin2: bob, viewer: victor } = setup.platforms.admins);
  refunds = new RefundEffects(pool);
  orders = new OrderEffects(pool);
});

afterAll(() => setup?.close());

const paidOrder = (channel: 'WECHATPAY' | 'ALIPAY', amount: number, duplicate = false) =>
  paidOrderBy(clients[0], channel, amount, { duplicate });
const post = (path: string, token: string | undefined, body?: unknown, client = clients[0]) =>
  client.admin('POST', path, token, body);
const emergencyRefund = (token: string | undefined, body: Record<string, unknown>) =>
  post('/admin/refunds/emergency', token, { reason: 'money taken twice', ...body });
const AUDITS = 'SELECT operator_id, action FROM admin_audit WHERE target = ? ORDER BY id';
const audits = async (target: string) =>
  (await pool.query<RowDataPacket[]>(AUDITS, [target]))[0].map((a) => `${a.operator_id} ${a.action}`);
/** The audit row the service wrote for a change that applied: who, what, the request and the outcome. */
async function auditOf(target: string, action: string) {
  const [rows] = await pool.query<RowDataPacket[]>(
    'SELECT operator_id, request_body, result FROM admin_audit WHERE target = ? AND action = ?',
    [target, action],
  );
  const json = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value) : value);
  return rows.map((r) => ({
    operator: r.operator_id as string,
    request: json(r.request_body),
    result: json(r.result),
  }));
}

describe('POST /admin/refunds/emergency', () => {
  it('should answer 422 OverRefund, 404, 403 to a viewer, 401 without a token (refusals audited), then 202', async () => {
    const { orderNo, paidBy } = await paidOrder('WECHATPAY', 1000);
    const before = await count(pool, 'SELECT COUNT(*) FROM admin_audit');

    const tooMuch = await emergencyRefund(alice, { orderNo, transactionId: paidBy, amount: 1001 });
    const notPaidBy = await emergencyRefund(alice, { orderNo, transactionId: uniqueId('NOPE') });
    const asViewer = await emergencyRefund(victor, { orderNo, transactionId: paidBy });
    const anonymous = await emergencyRefund(undefined, { orderNo, transactionId: paidBy });
    expect(await count(pool, 'SELECT COUNT(*) FROM refund WHERE order_no = ?', [orderNo])).toBe(0);
    expect(await orders.status(orderNo)).toBe('PAID');
    const accepted = await emergencyRefund(alice, { orderNo, transactionId: paidBy, amount: 400 });

    expect([tooMuch, notPaidBy, asViewer, anonymous, accepted].map((a) => a.status)).toEqual([422, 404, 403, 401, 202]);
    expect(tooMuch.json()).toMatchObject({ error: 'OverRefund' });
    expect(tooMuch.json().message).toContain('at most 1000 can still be refunded');
    expect([notPaidBy.json().error, asViewer.json().error]).toEqual(['PaymentNotFound', 'Forbidden']);
    const refund = { orderNo, transactionId: paidBy, purpose: 'ORDER_REFUND', amount: 400, created: true };
    expect(accepted.json()).toMatchObject(refund);
    // Refused attempts are audited, as no change; the anonymous one names no operator.
    expect(await count(pool, 'SELECT COUNT(*) FROM admin_audit')).toBe(before + 4);
    expect(await audits(`order:${orderNo}`)).toEqual([
      ...Array<string>(2).fill('alice EMERGENCY_REFUND_REFUSED'),
      'victor EMERGENCY_REFUND_REFUSED',
      'alice EMERGENCY_REFUND',
    ]);
    expect(await auditOf(`order:${orderNo}`, 'EMERGENCY_REFUND')).toEqual([
      {
        operator: 'alice',
        request: { orderNo, transactionId: paidBy, amount: 400, reason: 'money taken twice' },
        result: { refundNo: accepted.json().refundNo, status: expect.any(String), amount: 400, created: true },
      },
    ]);
  });
});

describe('POST /admin/refunds/emergency without a refundNo, as the console sends it', () => {
  const decide = (refundNo: string, decision: 'approve' | 'reject', token: string) =>
    post(`/admin/refunds/${refundNo}/${decision}`, token, { reason: 'not this much' });
  type Answer = { refundNo: string; status: string; amount: number; created: boolean };

  it('should take another amount after a second admin rejected the first, and the same request once', async () => {
    const { orderNo, duplicateBy: transactionId } = await paidOrder('WECHATPAY', 2 * THRESHOLD, true);
    const large = await emergencyRefund(alice, { orderNo, transactionId, amount: THRESHOLD + THRESHOLD / 2 });
    expect([large.status, large.json<Answer>().status]).toEqual([202, 'AWAITING_APPROVAL']);
    expect((await decide(large.json<Answer>().refundNo, 'reject', bob)).status).toBe(200);

    const smaller = await emergencyRefund(alice, { orderNo, transactionId, amount: THRESHOLD });
    const smallerAgain = await emergencyRefund(alice, { orderNo, transactionId, amount: THRESHOLD });

    expect([smaller.status, smallerAgain.status]).toEqual([202, 202]);
    expect(smaller.json()).toMatchObject({ amount: THRESHOLD, status: 'AWAITING_APPROVAL', created: true });
    expect(smallerAgain.json()).toMatchObject({ refundNo: smaller.json<Answer>().refundNo, created: false });
    expect((await decide(smaller.json<Answer>().refundNo, 'approve', bob)).status).toBe(200);
    await refunds.statusIs(smaller.json<Answer>().refundNo, 'SUCCEEDED');
    expect(await count(pool, 'SELECT COUNT(*) FROM refund WHERE transaction_id = ?', [transactionId])).toBe(2);
    expect(await refunds.reserved(transactionId)).toBe(THRESHOLD);
  });

  it('should make two partial refunds in a row, and answer a repeat of the first with it', async () => {
    const { orderNo, duplicateBy: transactionId } = await paidOrder('ALIPAY', 1200, true);

    const first = await emergencyRefund(alice, { orderNo, transactionId, amount: 100 });
    const second = await emergencyRefund(alice, { orderNo, transactionId, amount: 200 });
    const firstAgain = await emergencyRefund(alice, { orderNo, transactionId, amount: 100 });

    expect([first.status, second.status, firstAgain.status]).toEqual([202, 202, 202]);
    expect([first, second, firstAgain].map((a) => a.json<Answer>().created)).toEqual([true, true, false]);
    expect(firstAgain.json<Answer>().refundNo).toBe(first.json<Answer>().refundNo);
    expect(second.json<Answer>().refundNo).not.toBe(first.json<Answer>().refundNo);
    expect(await count(pool, 'SELECT COUNT(*) FROM refund WHERE transaction_id = ?', [transactionId])).toBe(2);
    expect(await refunds.reserved(transactionId)).toBe(300);
  });
});

describe('POST /admin/refunds/emergency without the refund credentials of the channel', () => {
  it('should answer 503 RefundChannelUnavailable and write no refund', async () => {
    const { ALIPAY_APP_PRIVATE_KEY_PATH: _unset, ...env } = setup!.platforms.env;
    const noAlipayRefunds = await startApp({ ...env, ALIPAY_GATEWAY_URL: setup!.fake.alipayGatewayUrl });
    try {
      const { orderNo, paidBy } = await paidOrder('ALIPAY', 4500);
      const client = new TestClient(noAlipayRefunds.url, setup!.platforms);

      const answer = await client.admin('POST', '/admin/refunds/emergency', alice, {
        orderNo,
        transactionId: paidBy,
        reason: 'money taken twice',
      });

      expect([answer.status, answer.json().error]).toEqual([503, 'RefundChannelUnavailable']);
      expect(answer.json().message).toContain('ALIPAY_APP_PRIVATE_KEY_PATH');
      expect(await count(pool, 'SELECT COUNT(*) FROM refund WHERE order_no = ?', [orderNo])).toBe(0);
      expect(await orders.status(orderNo)).toBe('PAID');
    } finally {
      await noAlipayRefunds.close();
    }
  });
});

describe('POST /admin/refunds/:refundNo/resolve-offline, /approve and /reject', () => {
  const resolve = (refundNo: string, token: string | undefined, body: unknown = { reason: 'paid by bank transfer' }) =>
    post(`/admin/refunds/${encodeURIComponent(refundNo)}/resolve-offline`, token, body);

  it('should answer 409, 404, 403, 401 and 400 (refusals audited), then 200 once the refund is ABNORMAL', async () => {
    const { orderNo, paidBy } = await paidOrder('WECHATPAY', 1400);
    const refundNo = uniqueId('AB');
    setup!.fake.script(refundNo, 'processing');
    expect((await emergencyRefund(alice, { orderNo, transactionId: paidBy, refundNo })).status).toBe(202);
    const { channel_refund_id: refundId } = await refunds.statusIs(refundNo, 'PROCESSING');

    const answers = {
      notAbnormal: await resolve(refundNo, alice),
      unknown: await resolve(uniqueId('NOPE'), alice),
      viewer: await resolve(refundNo, victor),
      anonymous: await resolve(refundNo, undefined),
      noReason: await resolve(refundNo, alice, {}),
      blankReason: await resolve(refundNo, alice, { reason: '   ' }),
      unknownField: await resolve(refundNo, alice, { reason: 'x', amount: 1 }),
    };

    expect(Object.values(answers).map((a) => a.status)).toEqual([409, 404, 403, 401, 400, 400, 400]);
    expect(answers.notAbnormal.json()).toMatchObject({ error: 'RefundConflict' });
    const conflict = 'is PROCESSING; only a refund that is ABNORMAL can be resolved offline';
    expect(answers.notAbnormal.json().message).toContain(conflict);
    expect(answers.unknown.json()).toMatchObject({ error: 'RefundNotFound' });
    expect(await refunds.row(refundNo)).toMatchObject({ status: 'PROCESSING' });
    expect(await orders.status(orderNo)).toBe('REFUNDING');
    expect(await audits(`refund:${refundNo}`)).toEqual([
      'alice REFUND_RESOLVE_OFFLINE_REFUSED',
      'victor REFUND_RESOLVE_OFFLINE_REFUSED',
      ...Array<string>(3).fill('alice REFUND_RESOLVE_OFFLINE_REFUSED'),
    ]);
    const notice = { outTradeNo: orderNo, transactionId: paidBy, outRefundNo: refundNo, refundId: String(refundId) };
    const abnormal = { ...notice, total: 1400, refund: 1400, refundStatus: 'ABNORMAL' };
    const ack = await clients[0].postWechatpay(clients[0].wechatpayRefundNotice(abnormal, 'REFUND.ABNORMAL'));
    const resolved = await resolve(refundNo, bob);
    expect([ack.status, resolved.status]).toEqual([204, 200]);
    expect(resolved.json()).toMatchObject({ refundNo, status: 'RESOLVED_OFFLINE', amount: 1400 });
    expect(await auditOf(`refund:${refundNo}`, 'REFUND_RESOLVED_OFFLINE')).toEqual([
      {
        operator: 'bob',
        request: { reason: 'paid by bank transfer' },
        result: { refundNo, status: 'RESOLVED_OFFLINE', amount: 1400 },
      },
    ]);
  });

  const approve = (refundNo: string, token: string, client = clients[0]) =>
    post(`/admin/refunds/${refundNo}/approve`, token, undefined, client);
  const reject = (refundNo: string, token: string, body: unknown = { reason: 'not justified' }) =>
    post(`/admin/refunds/${refundNo}/reject`, token, body);
  /** Alice asks for a refund of a new order's whole payment, at or above the threshold: AWAITING_APPROVAL. */
  async function requested(amount: number): Promise<string> {
    const { orderNo, paidBy } = await paidOrder('ALIPAY', amount);
    const answer = await emergencyRefund(alice, { orderNo, transactionId: paidBy, refundNo: uniqueId('AR') });
    expect(answer.status).toBe(202);
    return answer.json<{ refundNo: string }>().refundNo;
  }

  it('should answer 403 to a viewer and to the requester, 200 to a rejection, then 404, 409 and 400, refusals audited', async () => {
    const refundNo = await requested(7000);

    const own = await approve(refundNo, alice);
    const viewer = await approve(refundNo, victor);
    const viewerReject = await reject(refundNo, victor);
    const rejected = await reject(refundNo, carol);
    const unknown = await reject(uniqueId('NOPE'), carol);
    const notAwaiting = await reject(refundNo, carol);
    const noReason = await reject(refundNo, carol, {});
    const approveUnknown = await approve(uniqueId('NOPE'), carol);

    const all = [own, viewer, viewerReject, rejected, unknown, notAwaiting, noReason, approveUnknown];
    expect(all.map((a) => a.status)).toEqual([403, 403, 403, 200, 404, 409, 400, 404]);
    expect(own.json().message).toContain('alice requested refund');
    expect(rejected.json()).toMatchObject({ refundNo, status: 'REJECTED', reviewedBy: 'carol' });
    expect(unknown.json()).toMatchObject({ error: 'RefundNotFound' });
    const conflict = 'is REJECTED; only a refund that is AWAITING_APPROVAL can be rejected';
    expect(notAwaiting.json().message).toContain(conflict);
    expect(await audits(`refund:${refundNo}`)).toEqual([
      'alice REFUND_APPROVE_REFUSED',
      'victor REFUND_APPROVE_REFUSED',
      'victor REFUND_REJECT_REFUSED',
      'carol REFUND_REJECTED',
      ...Array<string>(2).fill('carol REFUND_REJECT_REFUSED'),
    ]);
  });

  it('should answer one of 20 approvals on two replicas 200 and the 19 others 409, each refusal audited', async () => {
    const refundNo = await requested(9000);

    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => approve(refundNo, i % 2 ? carol : bob, clients[i % 2])),
    );

    expect(answers.map((a) => a.status).sort()).toEqual([200, ...Array<number>(19).fill(409)]);
    expect(answers.find((a) => a.status === 200)!.json()).toMatchObject({ refundNo, requestedBy: 'alice' });
    const conflict = 'only a refund that is AWAITING_APPROVAL can be approved';
    expect(answers.find((a) => a.status === 409)!.json().message).toContain(conflict);
    const written = await audits(`refund:${refundNo}`);
    expect([written.filter((a) => a.endsWith('_REFUSED')).length, written.length]).toEqual([19, 20]);
  });
});

describe('GET /admin/refunds', () => {
  it.each([
    ['status=LOST', 'status must be one of'],
    ['channel=PAYPAL', 'channel must be one of'],
    ['limit=0', 'limit must be at least 1'],
    ['limit=201', 'limit must be at most 200'],
    ['cursor=abc', 'cursor must be the nextCursor of a previous page'],
    ['from=yesterday', 'from must be an ISO 8601 date-time'],
    ['from=2026-12-01T00:00:00Z&to=2026-11-30T00:00:00Z', 'from must be before to'],
  ])('should answer 400 for %s', async (query, message) => {
    const answer = await clients[0].admin('GET', `/admin/refunds?${query}`, victor);
    expect([answer.status, answer.json().message]).toEqual([400, expect.stringContaining(message)]);
  });

  it('should answer a viewer 200 with a page, and 401 without a token', async () => {
    const page = await clients[0].admin('GET', '/admin/refunds?status=AWAITING_APPROVAL', victor);
    expect([page.status, page.json()]).toEqual([200, expect.objectContaining({ items: expect.any(Array) })]);
    expect((await clients[0].admin('GET', '/admin/refunds', undefined)).status).toBe(401);
  });
});

describe('POST /payment-orders/:orderNo/refunds', () => {
  const refundOf = (orderNo: string, body: Record<string, unknown>, token?: string) =>
    clients[0].api('POST', `/payment-orders/${orderNo}/refunds`, { reason: 'returned by the buyer', ...body }, token);

  it('should answer 201 then 200 for the same refund, and 409, 422, 409, 404, 400, 401 for what it refuses', async () => {
    const { orderNo } = await paidOrder('ALIPAY', 2000);
    const refundNo = uniqueId('SR');
    const created = await refundOf(orderNo, { refundNo, amount: 1500 });
    const again = await refundOf(orderNo, { refundNo, amount: 1500 });
    const unpaid = uniqueId('SO');
    expect((await clients[0].registerOrder({ orderNo: unpaid, amount: 700 })).status).toBe(201);

    const refused = [
      await refundOf(orderNo, { refundNo, amount: 500 }),
      await refundOf(orderNo, { refundNo: uniqueId('SR'), amount: 501 }),
      await refundOf(unpaid, { refundNo: uniqueId('SR') }),
      await refundOf(uniqueId('NO'), { refundNo: uniqueId('SR') }),
      await refundOf(orderNo, { refundNo: 'not a refund no', amount: -1 }),
      await refundOf(orderNo, { refundNo: uniqueId('SR') }, 'wrong-token'),
    ];

    expect([created.status, again.status]).toEqual([201, 200]);
    expect(created.json()).toMatchObject({ refundNo, orderNo, amount: 1500, currency: 'CNY', status: 'PENDING' });
    expect(refused.map((a) => a.status)).toEqual([409, 422, 409, 404, 400, 401]);
    expect(refused.slice(0, 3).map((a) => a.json().error)).toEqual(['RefundConflict', 'OverRefund', 'OrderConflict']);
    expect(await count(pool, 'SELECT COUNT(*) FROM refund WHERE order_no IN (?, ?)', [orderNo, unpaid])).toBe(1);
  });
});

describe('the anomaly resolution API', () => {
  const anomalyOf = async (amount: number) => {
    const { orderNo, duplicateBy: transactionId } = await paidOrder('WECHATPAY', amount, true);
    const row = async () => (await pool.query<RowDataPacket[]>(ANOMALY, [transactionId]))[0][0];
    return { orderNo, transactionId, id: String((await row()).id), row };
  };
  const ANOMALY = 'SELECT * FROM payment_anomaly WHERE transaction_id = ?';
  const accepted = { reason: 'ACCEPTED_AS_PAID', note: 'the merchant keeps it' };
  const resolve = (id: string, token: string | undefined, body: unknown = accepted) =>
    post(`/admin/anomalies/${id}/resolve`, token, body);
  const approve = (id: string, token: string) => post(`/admin/anomalies/${id}/resolution/approve`, token);

  it('should answer 401, 403, 400, 404 and 409 to bad requests and change nothing', async () => {
    const { id, row } = await anomalyOf(1000);
    const before = await row();

    const answers = await Promise.all([
      resolve(id, undefined),
      resolve(id, 'not-a-token'),
      resolve(id, victor),
      resolve(id, alice, {}),
      resolve(id, alice, { reason: 'FORGIVEN', note: 'x' }),
      resolve(id, alice, { reason: 'ACCEPTED_AS_PAID' }),
      resolve(id, alice, { reason: 'ACCEPTED_AS_PAID', note: '   ' }),
      resolve(id, alice, { reason: 'ACCEPTED_AS_PAID', note: 'x'.repeat(257) }),
      resolve(id, alice, { reason: 'DUPLICATE_OF', note: 'same as another' }),
      resolve(id, alice, { reason: 'DUPLICATE_OF', note: 'x', reference: 'has space' }),
      resolve(id, alice, { ...accepted, amount: 1 }),
      resolve(id, alice, 'not json'),
      resolve('abc', alice),
      resolve('99999999999', alice),
      approve(id, bob),
      post(`/admin/anomalies/${id}/resolution/reject`, bob, {}),
    ]);

    const statuses = [401, 401, 403, 400, 400, 400, 400, 400, 400, 400, 400, 400, 404, 404, 409, 400];
    expect(answers.map((a) => a.status)).toEqual(statuses);
    expect(answers[8].json().message).toContain('reference is required for DUPLICATE_OF');
    expect(await row()).toEqual(before);
    expect((await audits(`anomaly:${id}`)).filter((a) => !a.endsWith('_REFUSED'))).toEqual([]);
    expect(await count(pool, "SELECT COUNT(*) FROM admin_audit WHERE target = 'anomaly:99999999999'")).toBe(1);
  });

  it('should answer each step of four eyes, and show every decision, refused ones too, in the history', async () => {
    const { id, orderNo, transactionId } = await anomalyOf(THRESHOLD);
    const duplicateOf = { reason: 'DUPLICATE_OF', reference: 'ticket-42', note: 'counted twice' };

    const requested = await resolve(id, alice, duplicateOf);
    const refundMeanwhile = await emergencyRefund(alice, { orderNo, transactionId, refundNo: uniqueId('RR') });
    const own = await approve(id, alice);
    const viewer = await approve(id, victor);
    const approved = await approve(id, bob);
    const history = await clients[0].admin('GET', `/admin/anomalies/${id}/history`, victor);

    const all = [requested, refundMeanwhile, own, viewer, approved, history];
    expect(all.map((a) => a.status)).toEqual([200, 409, 403, 403, 200, 200]);
    const awaiting = { status: 'OPEN', created: true, resolution: { status: 'AWAITING_APPROVAL' } };
    expect(requested.json()).toMatchObject(awaiting);
    expect(own.json().message).toContain('alice asked to resolve anomaly');
    const applied = { status: 'APPLIED', requestedBy: 'alice', reviewedBy: 'bob' };
    expect(approved.json()).toMatchObject({ status: 'RESOLVED', resolution: applied });
    const { items } = history.json<{ items: Array<{ operatorId: string; action: string; requestBody: unknown }> }>();
    expect(items.map((d) => `${d.operatorId} ${d.action}`)).toEqual([
      'alice ANOMALY_RESOLUTION_REQUESTED',
      'alice EMERGENCY_REFUND_REFUSED',
      'alice ANOMALY_RESOLUTION_APPROVE_REFUSED',
      'victor ANOMALY_RESOLUTION_APPROVE_REFUSED',
      'bob ANOMALY_RESOLUTION_APPROVED',
    ]);
    expect(items[0].requestBody).toMatchObject({ reason: 'DUPLICATE_OF', note: 'counted twice' });
  });

  it('should answer 409 to another resolution of a resolved anomaly, audited as refused', async () => {
    const { id } = await anomalyOf(THRESHOLD - 1);
    const outside = { reason: 'REFUNDED_OUTSIDE', note: 'bank transfer' };

    const answers = [await resolve(id, alice, outside), await resolve(id, bob)];

    expect(answers.map((a) => a.status)).toEqual([200, 409]);
    expect(await audits(`anomaly:${id}`)).toEqual(['alice ANOMALY_RESOLVED', 'bob ANOMALY_RESOLVE_REFUSED']);
  });

  it('should show a rejected resolution, the refund made after it and a late approval, refused, in the history', async () => {
    const { id, orderNo, transactionId } = await anomalyOf(THRESHOLD + 1000);

    const requested = await resolve(id, alice);
    const rejected = await post(`/admin/anomalies/${id}/resolution/reject`, carol, { reason: 'refund it instead' });
    const refunded = await emergencyRefund(alice, { orderNo, transactionId, refundNo: uniqueId('RR') });
    const late = await approve(id, bob);
    const history = await clients[0].admin('GET', `/admin/anomalies/${id}/history`, alice);

    expect([requested, rejected, refunded, late, history].map((a) => a.status)).toEqual([200, 200, 202, 409, 200]);
    const { items } = history.json<{ items: Array<{ operatorId: string; action: string }> }>();
    expect(items.map((d) => `${d.operatorId} ${d.action}`)).toEqual([
      'alice ANOMALY_RESOLUTION_REQUESTED',
      'carol ANOMALY_RESOLUTION_REJECTED',
      'alice EMERGENCY_REFUND',
      'bob ANOMALY_RESOLUTION_APPROVE_REFUSED',
    ]);
  });
});
