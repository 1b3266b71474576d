import { Pool, RowDataPacket } from 'mysql2/promise';
import { Channel } from '../src/domain/notification';
import { FourEyesReplicas, startFourEyesReplicas } from './support/four-eyes-replicas';
import { paidOrder as paidOrderBy } from './support/paid-orders';
import { count, HttpAnswer, TestClient, TestPlatforms, uniqueId } from './support/test-app';

/**
 * Closing an anomaly without a refund (issue 39, item 1): admin only, audited, idempotent, four eyes
 * at or above REFUND_APPROVAL_THRESHOLD, and never together with a refund.
 */
const THRESHOLD = 5000;

let setup: FourEyesReplicas | undefined;
let platforms: TestPlatforms;
let carol: string;
let clients: TestClient[];
let pool: Pool;

beforeAll(async () => {
  setup = await startFourEyesReplicas(THRESHOLD, { REFUND_POLL_INTERVAL_MS: '50' });
  ({ platforms, carol, clients, pool } = setup);
});

afterAll(async () => {
  await setup?.close();
});

/** An order paid twice: the second transaction's DUPLICATE_PAYMENT anomaly, of `amount`. */
async function duplicateAnomaly(amount: number, channel: Channel = 'WECHATPAY') {
  const { orderNo, duplicateBy } = await paidOrderBy(clients[0], channel, amount, { duplicate: true, prefix: 'AR' });
  const [[row]] = await pool.query<RowDataPacket[]>('SELECT id FROM payment_anomaly WHERE transaction_id = ?', [
    duplicateBy,
  ]);
  return { orderNo, transactionId: duplicateBy, id: String(row.id) };
}

const accepted = { reason: 'ACCEPTED_AS_PAID', note: 'the merchant keeps it' };
const resolve = (id: string, token: string | undefined, body: unknown = accepted, client = clients[0]) =>
  client.admin('POST', `/admin/anomalies/${id}/resolve`, token, body);
const approve = (id: string, token: string, client = clients[0]): Promise<HttpAnswer> =>
  client.admin('POST', `/admin/anomalies/${id}/resolution/approve`, token);
const reject = (id: string, token: string, body: unknown = { reason: 'refund it instead' }) =>
  clients[0].admin('POST', `/admin/anomalies/${id}/resolution/reject`, token, body);
const refund = (orderNo: string, transactionId: string, client = clients[0]) =>
  client.admin('POST', '/admin/refunds/emergency', platforms.admins.admin, {
    orderNo,
    transactionId,
    refundNo: uniqueId('RR'),
    reason: 'paid twice',
  });

interface Decision {
  operatorId: string;
  action: string;
  requestBody: unknown;
}
const decisions = async (id: string, token: string): Promise<Decision[]> => {
  const answer = await clients[0].admin('GET', `/admin/anomalies/${id}/history`, token);
  expect(answer.status).toBe(200);
  return answer.json<{ items: Decision[] }>().items;
};
const names = (items: Decision[]) => items.map((d) => `${d.operatorId} ${d.action}`);

const anomalyRow = async (id: string) =>
  (
    await pool.query<Array<RowDataPacket & { resolution_status: string | null }>>(
      'SELECT * FROM payment_anomaly WHERE id = ?',
      [id],
    )
  )[0][0];
const audits = async (id: string) =>
  (
    await pool.query<RowDataPacket[]>('SELECT operator_id, action FROM admin_audit WHERE target = ? ORDER BY id', [
      `anomaly:${id}`,
    ])
  )[0].map((a) => `${a.operator_id} ${a.action}`);
const changes = async (id: string) => (await audits(id)).filter((a) => !a.endsWith('_REFUSED'));
const refundsOf = (transactionId: string) =>
  count(pool, 'SELECT COUNT(*) FROM refund WHERE transaction_id = ?', [transactionId]);
const reserved = (transactionId: string) =>
  count(pool, 'SELECT refund_reserved_amount FROM payment_callback WHERE transaction_id = ?', [transactionId]);

describe('POST /admin/anomalies/:id/resolve below the threshold', () => {
  it('should close the anomaly at once, audited, and answer a repeat without changing anything', async () => {
    const { id } = await duplicateAnomaly(THRESHOLD - 1);

    const first = await resolve(id, platforms.admins.admin);
    const again = await resolve(id, platforms.admins.admin, accepted, clients[1]);

    expect(first.status).toBe(200);
    expect(first.json()).toMatchObject({
      id,
      status: 'RESOLVED',
      created: true,
      resolution: {
        status: 'APPLIED',
        reason: 'ACCEPTED_AS_PAID',
        reference: null,
        note: 'the merchant keeps it',
        requestedBy: 'alice',
        reviewedBy: null,
      },
    });
    expect(again.status).toBe(200);
    expect(again.json()).toMatchObject({ status: 'RESOLVED', created: false });
    expect(await anomalyRow(id)).toMatchObject({
      status: 'RESOLVED',
      resolution_status: 'APPLIED',
      resolution_reason: 'ACCEPTED_AS_PAID',
      resolution_requested_by: 'alice',
    });
    expect(await changes(id)).toEqual(['alice ANOMALY_RESOLVED', 'alice ANOMALY_RESOLVED']);
    const view = await clients[0].admin('GET', `/admin/anomalies/${id}`, platforms.admins.viewer);
    expect(view.json()).toMatchObject({ status: 'RESOLVED', resolution: { status: 'APPLIED' } });
  });

  it('should refuse another resolution, and any refund of it afterwards, writing nothing', async () => {
    const { id, orderNo, transactionId } = await duplicateAnomaly(THRESHOLD - 1, 'ALIPAY');
    expect(
      (await resolve(id, platforms.admins.admin, { reason: 'REFUNDED_OUTSIDE', note: 'bank transfer' })).status,
    ).toBe(200);

    const other = await resolve(id, platforms.admins.admin2);
    const refunded = await refund(orderNo, transactionId);

    expect(other.status).toBe(409);
    expect(other.json().message).toContain('already has a resolution APPLIED (REFUNDED_OUTSIDE, by alice)');
    expect(refunded.status).toBe(409);
    expect(refunded.json().message).toContain('resolved without a refund');
    expect(await refundsOf(transactionId)).toBe(0);
    expect(await reserved(transactionId)).toBe(0);
    expect(await anomalyRow(id)).toMatchObject({ status: 'RESOLVED', resolution_reason: 'REFUNDED_OUTSIDE' });
    expect(await audits(id)).toEqual(['alice ANOMALY_RESOLVED', 'bob ANOMALY_RESOLVE_REFUSED']);
  });
});

describe('bad requests to resolve', () => {
  it('should answer 401, 403, 400 and 404 and change nothing', async () => {
    const { id } = await duplicateAnomaly(1000);
    const before = await anomalyRow(id);

    const answers = await Promise.all([
      resolve(id, undefined),
      resolve(id, 'not-a-token'),
      resolve(id, platforms.admins.viewer),
      resolve(id, platforms.admins.admin, {}),
      resolve(id, platforms.admins.admin, { reason: 'FORGIVEN', note: 'x' }),
      resolve(id, platforms.admins.admin, { reason: 'ACCEPTED_AS_PAID' }),
      resolve(id, platforms.admins.admin, { reason: 'ACCEPTED_AS_PAID', note: '   ' }),
      resolve(id, platforms.admins.admin, { reason: 'ACCEPTED_AS_PAID', note: 'x'.repeat(257) }),
      resolve(id, platforms.admins.admin, { reason: 'DUPLICATE_OF', note: 'same as another' }),
      resolve(id, platforms.admins.admin, { reason: 'DUPLICATE_OF', note: 'x', reference: 'has space' }),
      resolve(id, platforms.admins.admin, { ...accepted, amount: 1 }),
      resolve(id, platforms.admins.admin, 'not json'),
      resolve('abc', platforms.admins.admin),
      resolve('99999999999', platforms.admins.admin),
      approve(id, platforms.admins.admin2),
      reject(id, platforms.admins.admin2, {}),
    ]);

    expect(answers.map((a) => a.status)).toEqual([
      401, 401, 403, 400, 400, 400, 400, 400, 400, 400, 400, 400, 404, 404, 409, 400,
    ]);
    expect(answers[8].json().message).toContain('reference is required for DUPLICATE_OF');
    expect(await anomalyRow(id)).toEqual(before);
    expect(await changes(id)).toEqual([]);
    expect(await count(pool, "SELECT COUNT(*) FROM admin_audit WHERE target = 'anomaly:99999999999'")).toBe(1);
  });
});

describe('a resolution at or above REFUND_APPROVAL_THRESHOLD', () => {
  it("should wait for another admin's approval, closed to refunds meanwhile, and never be approved by its requester", async () => {
    const { id, orderNo, transactionId } = await duplicateAnomaly(THRESHOLD);

    const requested = await resolve(id, platforms.admins.admin, {
      reason: 'DUPLICATE_OF',
      reference: 'ticket-42',
      note: 'counted twice',
    });
    const refundMeanwhile = await refund(orderNo, transactionId);
    const own = await approve(id, platforms.admins.admin);
    const viewer = await approve(id, platforms.admins.viewer);

    expect(requested.status).toBe(200);
    expect(requested.json()).toMatchObject({
      status: 'OPEN',
      created: true,
      resolution: { status: 'AWAITING_APPROVAL', reason: 'DUPLICATE_OF', reference: 'ticket-42' },
    });
    expect(refundMeanwhile.status).toBe(409);
    expect(own.status).toBe(403);
    expect(own.json().message).toContain('alice asked to resolve anomaly');
    expect(viewer.status).toBe(403);
    expect(await anomalyRow(id)).toMatchObject({ status: 'OPEN', resolution_status: 'AWAITING_APPROVAL' });
    expect(await refundsOf(transactionId)).toBe(0);

    const approved = await approve(id, platforms.admins.admin2, clients[1]);

    expect(approved.status).toBe(200);
    expect(approved.json()).toMatchObject({
      status: 'RESOLVED',
      resolution: { status: 'APPLIED', requestedBy: 'alice', reviewedBy: 'bob' },
    });
    expect(await changes(id)).toEqual(['alice ANOMALY_RESOLUTION_REQUESTED', 'bob ANOMALY_RESOLUTION_APPROVED']);
    const history = await decisions(id, platforms.admins.viewer);
    expect(names(history)).toEqual([
      'alice ANOMALY_RESOLUTION_REQUESTED',
      'alice EMERGENCY_REFUND_REFUSED',
      'alice ANOMALY_RESOLUTION_APPROVE_REFUSED',
      'victor ANOMALY_RESOLUTION_APPROVE_REFUSED',
      'bob ANOMALY_RESOLUTION_APPROVED',
    ]);
    expect(history[0].requestBody).toMatchObject({ reason: 'DUPLICATE_OF', note: 'counted twice' });
  });

  it('should open the anomaly to a refund again once rejected; the refund then shows in its history', async () => {
    const { id, orderNo, transactionId } = await duplicateAnomaly(THRESHOLD + 1000, 'ALIPAY');
    expect((await resolve(id, platforms.admins.admin)).status).toBe(200);

    const rejected = await reject(id, carol);
    const refunded = await refund(orderNo, transactionId);

    expect(rejected.status).toBe(200);
    expect(rejected.json()).toMatchObject({ status: 'OPEN', resolution: null });
    expect(refunded.status).toBe(202);
    expect((await anomalyRow(id)).resolution_status).toBeNull();
    expect(await refundsOf(transactionId)).toBe(1);
    expect((await approve(id, platforms.admins.admin2)).status).toBe(409);
    expect(names(await decisions(id, platforms.admins.admin))).toEqual([
      'alice ANOMALY_RESOLUTION_REQUESTED',
      'carol ANOMALY_RESOLUTION_REJECTED',
      'alice EMERGENCY_REFUND',
      'bob ANOMALY_RESOLUTION_APPROVE_REFUSED',
    ]);
  });

  it('should not be resolved while a refund of it is in flight', async () => {
    const { id, orderNo, transactionId } = await duplicateAnomaly(THRESHOLD);
    expect((await refund(orderNo, transactionId)).status).toBe(202); // AWAITING_APPROVAL: the anomaly is REFUNDING

    const answer = await resolve(id, platforms.admins.admin2);

    expect(answer.status).toBe(409);
    expect(answer.json().message).toContain('has a refund in flight');
    expect(await anomalyRow(id)).toMatchObject({ status: 'REFUNDING', resolution_status: null });
  });
});

describe('at once', () => {
  it('should let one of ten different resolutions on two replicas win, and apply a repeated one once', async () => {
    const { id } = await duplicateAnomaly(1000);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        resolve(id, i % 2 ? carol : platforms.admins.admin, { ...accepted, note: `note ${i}` }, clients[i % 2]),
      ),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(9);
    expect(await changes(id)).toHaveLength(1);

    const same = await duplicateAnomaly(1000, 'ALIPAY');
    const repeats = await Promise.all(
      Array.from({ length: 10 }, (_, i) => resolve(same.id, platforms.admins.admin, accepted, clients[i % 2])),
    );
    expect(repeats.map((a) => a.status)).toEqual(Array(10).fill(200));
    expect(repeats.filter((a) => a.json().created)).toHaveLength(1);
    expect(
      await count(pool, 'SELECT COUNT(*) FROM payment_anomaly WHERE id = ? AND status = ?', [same.id, 'RESOLVED']),
    ).toBe(1);
  });

  it('should let exactly one of a resolution and a refund apply, 10 times out of 10', async () => {
    for (let iteration = 0; iteration < 10; iteration++) {
      const { id, orderNo, transactionId } = await duplicateAnomaly(1000, iteration % 2 ? 'ALIPAY' : 'WECHATPAY');

      const [resolved, refunded] = await Promise.all([
        resolve(id, platforms.admins.admin2, accepted, clients[iteration % 2]),
        refund(orderNo, transactionId, clients[(iteration + 1) % 2]),
      ]);

      const resolutionWon = resolved.status === 200;
      expect({ resolved: resolved.status, refunded: refunded.status }).toEqual(
        resolutionWon ? { resolved: 200, refunded: 409 } : { resolved: 409, refunded: 202 },
      );
      const row = await anomalyRow(id);
      expect({
        resolution: row.resolution_status,
        refunds: await refundsOf(transactionId),
        reserved: await reserved(transactionId),
        resolutions: (await changes(id)).length,
      }).toEqual(
        resolutionWon
          ? { resolution: 'APPLIED', refunds: 0, reserved: 0, resolutions: 1 }
          : { resolution: null, refunds: 1, reserved: 1000, resolutions: 0 },
      );
    }
  });
});
