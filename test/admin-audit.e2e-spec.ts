import { Pool, RowDataPacket } from 'mysql2/promise';
import { randomAlphanumeric } from '../tools/simulator/platform-signers';
import { FakePlatformSuite, startFakePlatformSuite } from './support/fake-platform-suite';
import { paidOrder } from './support/paid-orders';
import { TestClient, TestPlatforms, uniqueId } from './support/test-app';

/**
 * admin_audit records refused writes (the role check's 403, a self-approval, an
 * over-refund) and every unmasked read of a raw payload, with the operator, the target and the
 * reason; operator ids are one id whatever their case.
 */
const THRESHOLD = 5000;

let suite: FakePlatformSuite;
let platforms: TestPlatforms;
let dora: string;
let client: TestClient;
let pool: Pool;

beforeAll(async () => {
  suite = await startFakePlatformSuite();
  ({ platforms, pool } = suite);
  dora = randomAlphanumeric(40);
  const running = await suite.startApp({
    ...suite.env,
    ADMIN_TOKENS: `${platforms.env.ADMIN_TOKENS},Dora:${dora}:admin`,
    REFUND_APPROVAL_THRESHOLD: String(THRESHOLD),
  });
  client = suite.clientOf(running);
});

afterAll(() => suite?.close());

interface AuditRow {
  operator: string;
  action: string;
  status?: number;
  reason?: string;
}

async function auditsOf(target: string): Promise<AuditRow[]> {
  const [rows] = await pool.query<RowDataPacket[]>(
    'SELECT operator_id, action, result FROM admin_audit WHERE target = ? ORDER BY id',
    [target],
  );
  return rows.map((r) => {
    const result = (typeof r.result === 'string' ? JSON.parse(r.result) : r.result) as {
      refused?: { status: number; reason: string };
    };
    return {
      operator: r.operator_id as string,
      action: r.action as string,
      ...(result?.refused ? { status: result.refused.status, reason: result.refused.reason } : {}),
    };
  });
}

async function refundAwaitingApproval(token: string): Promise<string> {
  const { orderNo, paidBy } = await paidOrder(client, 'WECHATPAY', 8000, { prefix: 'AA' });
  const refundNo = uniqueId('AR');
  const answer = await client.admin('POST', '/admin/refunds/emergency', token, {
    orderNo,
    transactionId: paidBy,
    amount: 7000,
    refundNo,
    reason: 'large refund',
  });
  expect(answer.status).toBe(202);
  return refundNo;
}

describe('admin_audit records refused writes', () => {
  it('should record a self-approval refused with 403, naming the operator, the refund and why', async () => {
    const refundNo = await refundAwaitingApproval(platforms.admins.admin);

    expect((await client.admin('POST', `/admin/refunds/${refundNo}/approve`, platforms.admins.admin)).status).toBe(403);

    expect(await auditsOf(`refund:${refundNo}`)).toEqual([
      { operator: 'alice', action: 'REFUND_APPROVE_REFUSED', status: 403, reason: expect.stringMatching(/\S/) },
    ]);
  });

  it("should record a viewer's write refused with 403", async () => {
    const refundNo = await refundAwaitingApproval(platforms.admins.admin);

    const answer = await client.admin('POST', `/admin/refunds/${refundNo}/reject`, platforms.admins.viewer, {
      reason: 'viewer tries',
    });

    expect(answer.status).toBe(403);
    expect(await auditsOf(`refund:${refundNo}`)).toEqual([
      { operator: 'victor', action: 'REFUND_REJECT_REFUSED', status: 403, reason: expect.stringContaining('viewer') },
    ]);
  });

  it('should record an over-refund refused with 422, and no refund', async () => {
    const { orderNo, paidBy } = await paidOrder(client, 'WECHATPAY', 1000, { prefix: 'AO' });

    const answer = await client.admin('POST', '/admin/refunds/emergency', platforms.admins.admin, {
      orderNo,
      transactionId: paidBy,
      amount: 1001,
      reason: 'too much',
    });

    expect(answer.status).toBe(422);
    expect(await auditsOf(`order:${orderNo}`)).toEqual([
      {
        operator: 'alice',
        action: 'EMERGENCY_REFUND_REFUSED',
        status: 422,
        reason: expect.stringContaining('at most 1000'),
      },
    ]);
  });
});

describe('admin_audit records unmasked reads of a raw payload', () => {
  it("should record an admin's read of a delivery, and not a viewer's masked one", async () => {
    const { orderNo } = await paidOrder(client, 'WECHATPAY', 300, { prefix: 'AU' });
    const [[delivery]] = await pool.query<RowDataPacket[]>('SELECT id FROM callback_delivery WHERE order_no = ?', [
      orderNo,
    ]);
    const path = `/admin/deliveries/${delivery.id}`;

    expect((await client.admin('GET', path, platforms.admins.viewer)).status).toBe(200);
    expect((await client.admin('GET', path, platforms.admins.admin2)).status).toBe(200);

    expect(await auditsOf(`delivery:${delivery.id}`)).toEqual([{ operator: 'bob', action: 'PAYLOAD_READ_UNMASKED' }]);
  });
});

describe('operator ids compare one way', () => {
  it('should record an operator configured as Dora as dora, and refuse dora approving her own refund', async () => {
    const refundNo = await refundAwaitingApproval(dora);

    const own = await client.admin('POST', `/admin/refunds/${refundNo}/approve`, dora);

    expect(own.status).toBe(403);
    const [[refund]] = await pool.query<RowDataPacket[]>('SELECT requested_by FROM refund WHERE refund_no = ?', [
      refundNo,
    ]);
    expect(refund.requested_by).toBe('dora');
  });
});

describe('admin_audit records refused dead-letter replays and reconciliation runs', () => {
  it("should record a viewer's replay (403) and an admin's replay of no dead letter (404), naming the event", async () => {
    const eventId = uniqueId('EV');

    const viewer = await client.admin('POST', `/admin/dead-letters/${eventId}/replay`, platforms.admins.viewer);
    const none = await client.admin('POST', `/admin/dead-letters/${eventId}/replay`, platforms.admins.admin);

    expect([viewer.status, none.status]).toEqual([403, 404]);
    expect(await auditsOf(`event:${eventId}`)).toEqual([
      {
        operator: 'victor',
        action: 'DEAD_LETTER_REPLAY_REFUSED',
        status: 403,
        reason: expect.stringContaining('viewer'),
      },
      {
        operator: 'alice',
        action: 'DEAD_LETTER_REPLAY_REFUSED',
        status: 404,
        reason: expect.stringContaining(eventId),
      },
    ]);
  });

  it("should record a viewer's run (403) and each run refused for its input (400, 404), one row each", async () => {
    const day = '2019-03-07';
    const run = (token: string, channel: string, date: string, body: object = {}) =>
      client.admin('POST', `/admin/reconciliations/${channel}/${date}/run`, token, body);

    const answers = [
      await run(platforms.admins.viewer, 'wechatpay', day),
      await run(platforms.admins.admin, 'wechatpay', day, { x: 1 }),
      await run(platforms.admins.admin, 'paypal', day),
      await run(platforms.admins.admin, 'alipay', '2026-02-30'),
    ];

    expect(answers.map((a) => a.status)).toEqual([403, 400, 404, 400]);
    expect(await auditsOf(`reconciliation:WECHATPAY:${day}`)).toEqual([
      { operator: 'victor', action: 'RECONCILE_REFUSED', status: 403, reason: expect.stringContaining('viewer') },
      { operator: 'alice', action: 'RECONCILE_REFUSED', status: 400, reason: expect.stringContaining('x') },
    ]);
    expect(await auditsOf(`reconciliation:PAYPAL:${day}`)).toEqual([
      { operator: 'alice', action: 'RECONCILE_REFUSED', status: 404, reason: expect.stringContaining('paypal') },
    ]);
    expect(await auditsOf('reconciliation:ALIPAY:2026-02-30')).toEqual([
      { operator: 'alice', action: 'RECONCILE_REFUSED', status: 400, reason: expect.stringContaining('date') },
    ]);
  });
});
