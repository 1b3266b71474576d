import { Channel } from '../src/domain/notification';
import { paidOrder as paidOrderBy } from './support/paid-orders';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { eventually, sleep } from './support/eventually';
import { FakePlatform } from '../tools/simulator/fake-platform';
import { FourEyesReplicas, startFourEyesReplicas } from './support/four-eyes-replicas';
import { count, HttpAnswer, TestClient, TestPlatforms, uniqueId } from './support/test-app';

/**
 * Four eyes on large emergency refunds: at or above REFUND_APPROVAL_THRESHOLD a refund is recorded
 * and its amount reserved, but the channel is called only once a second admin approved it.
 */
const THRESHOLD = 5000;
const POLL_INTERVAL_MS = 50;

let setup: FourEyesReplicas | undefined;
let platforms: TestPlatforms;
let carol: string;
let fake: FakePlatform;
let clients: TestClient[];
let pool: Pool;

beforeAll(async () => {
  setup = await startFourEyesReplicas(THRESHOLD, { REFUND_POLL_INTERVAL_MS: String(POLL_INTERVAL_MS) });
  ({ platforms, carol, fake, clients, pool } = setup);
});

afterAll(async () => {
  await setup?.close();
});

const paidOrder = (channel: Channel, amount: number, duplicate = false) =>
  paidOrderBy(clients[0], channel, amount, { duplicate, prefix: 'AP' });

/** Alice asks for it: `amount` of the transaction, under a number of her own. */
async function requestRefund(orderNo: string, transactionId: string, amount: number): Promise<string> {
  const refundNo = uniqueId('AR');
  const answer = await clients[0].admin('POST', '/admin/refunds/emergency', platforms.admins.admin, {
    orderNo,
    transactionId,
    amount,
    refundNo,
    reason: 'large refund',
  });
  expect(answer.status).toBe(202);
  return refundNo;
}

const approve = (refundNo: string, token: string, client = clients[0]): Promise<HttpAnswer> =>
  client.admin('POST', `/admin/refunds/${refundNo}/approve`, token);
const reject = (refundNo: string, token: string, client = clients[0], body: unknown = { reason: 'not justified' }) =>
  client.admin('POST', `/admin/refunds/${refundNo}/reject`, token, body);

async function row(sql: string, params: unknown[]): Promise<Record<string, unknown>> {
  return (await pool.query<RowDataPacket[]>(sql, params))[0][0];
}
const refundRow = (refundNo: string) => row('SELECT * FROM refund WHERE refund_no = ?', [refundNo]);
const orderStatus = async (orderNo: string) =>
  (await row('SELECT status FROM payment_order WHERE order_no = ?', [orderNo])).status as string;
const reserved = async (transactionId: string) =>
  Number(
    (await row('SELECT refund_reserved_amount FROM payment_callback WHERE transaction_id = ?', [transactionId]))
      .refund_reserved_amount,
  );
const audits = async (refundNo: string) =>
  (
    await pool.query<RowDataPacket[]>('SELECT operator_id, action FROM admin_audit WHERE target = ? ORDER BY id', [
      `refund:${refundNo}`,
    ])
  )[0].map((a) => `${a.operator_id} ${a.action}`);
/** The audited changes, without the refusals each refused write now leaves too (issue 35, item 7). */
const changes = async (refundNo: string) => (await audits(refundNo)).filter((a) => !a.endsWith('_REFUSED'));
const refusals = async (refundNo: string) => (await audits(refundNo)).filter((a) => a.endsWith('_REFUSED'));
const refundStatusIs = (refundNo: string, status: string) =>
  eventually(`refund ${refundNo} to be ${status}`, async () => (await refundRow(refundNo)).status === status, 15_000);
/** Long enough for the executor and several rounds of the retry worker to have called the channel, if anything would. */
const noChannelCallWindow = () => sleep(20 * POLL_INTERVAL_MS);

describe('an emergency refund at or above REFUND_APPROVAL_THRESHOLD', () => {
  it('should go straight to the channel below the threshold', async () => {
    const { orderNo, paidBy } = await paidOrder('WECHATPAY', 8000);

    const refundNo = await requestRefund(orderNo, paidBy, THRESHOLD - 1);

    await refundStatusIs(refundNo, 'SUCCEEDED');
    expect(fake.callsFor(refundNo)).toBe(1);
    expect(await orderStatus(orderNo)).toBe('PARTIALLY_REFUNDED');
  });

  it('should be recorded AWAITING_APPROVAL with its amount reserved, and call no channel', async () => {
    const { orderNo, paidBy } = await paidOrder('ALIPAY', 8000);

    const refundNo = await requestRefund(orderNo, paidBy, THRESHOLD);
    await noChannelCallWindow();

    expect(await refundRow(refundNo)).toMatchObject({
      status: 'AWAITING_APPROVAL',
      attempts: 0,
      next_attempt_at: null,
      requested_by: 'alice',
      reviewed_by: null,
    });
    expect(fake.callsFor(refundNo)).toBe(0);
    expect(await orderStatus(orderNo)).toBe('REFUNDING');
    expect(await reserved(paidBy)).toBe(THRESHOLD);
    const over = await clients[0].admin('POST', '/admin/refunds/emergency', platforms.admins.admin2, {
      orderNo,
      transactionId: paidBy,
      amount: 8000 - THRESHOLD + 1,
      refundNo: uniqueId('AR'),
      reason: 'too much',
    });
    expect(over.status).toBe(422);
  });

  it('should start once another admin approves it, audited, with one channel call', async () => {
    const { orderNo, paidBy } = await paidOrder('WECHATPAY', 6000);
    const refundNo = await requestRefund(orderNo, paidBy, 6000);

    const answer = await approve(refundNo, platforms.admins.admin2);

    expect(answer.status).toBe(200);
    expect(answer.json()).toMatchObject({ refundNo, requestedBy: 'alice', reviewedBy: 'bob' });
    await refundStatusIs(refundNo, 'SUCCEEDED');
    expect(fake.callsFor(refundNo)).toBe(1);
    expect(await orderStatus(orderNo)).toBe('REFUNDED');
    expect(await audits(refundNo)).toEqual(['bob REFUND_APPROVED']);
  });

  it('should answer 403 to the requester approving their own refund, and to a viewer, and change nothing', async () => {
    const { orderNo, paidBy } = await paidOrder('WECHATPAY', 7000);
    const refundNo = await requestRefund(orderNo, paidBy, 7000);

    const own = await approve(refundNo, platforms.admins.admin);
    const viewer = await approve(refundNo, platforms.admins.viewer);
    const viewerReject = await reject(refundNo, platforms.admins.viewer);
    await noChannelCallWindow();

    expect(own.status).toBe(403);
    expect(own.json().message).toContain('alice requested refund');
    expect(viewer.status).toBe(403);
    expect(viewerReject.status).toBe(403);
    expect(await refundRow(refundNo)).toMatchObject({ status: 'AWAITING_APPROVAL', reviewed_by: null });
    expect(fake.callsFor(refundNo)).toBe(0);
    expect(await changes(refundNo)).toEqual([]);
    expect(await refusals(refundNo)).toEqual([
      'alice REFUND_APPROVE_REFUSED',
      'victor REFUND_APPROVE_REFUSED',
      'victor REFUND_REJECT_REFUSED',
    ]);
  });

  it('should make one channel call when two admins on two replicas approve it 20 times at once', async () => {
    const { orderNo, paidBy } = await paidOrder('ALIPAY', 9000);
    const refundNo = await requestRefund(orderNo, paidBy, 9000);

    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => approve(refundNo, i % 2 ? carol : platforms.admins.admin2, clients[i % 2])),
    );

    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(19);
    expect(answers.find((a) => a.status === 409)!.json().message).toContain(
      'only a refund that is AWAITING_APPROVAL can be approved',
    );
    await refundStatusIs(refundNo, 'SUCCEEDED');
    await noChannelCallWindow();
    expect(fake.callsFor(refundNo)).toBe(1);
    expect(await orderStatus(orderNo)).toBe('REFUNDED');
    expect(await changes(refundNo)).toHaveLength(1);
    expect(await refusals(refundNo)).toHaveLength(19);
  });
});

describe('rejecting a refund that awaits approval', () => {
  it('should cancel it, give its amount back, and return the order to where the other refunds leave it', async () => {
    const { orderNo, paidBy } = await paidOrder('WECHATPAY', 9000);
    const small = await requestRefund(orderNo, paidBy, 1000);
    await refundStatusIs(small, 'SUCCEEDED');
    const large = await requestRefund(orderNo, paidBy, 8000);
    expect(await orderStatus(orderNo)).toBe('REFUNDING');

    const answer = await reject(large, carol);

    expect(answer.status).toBe(200);
    expect(answer.json()).toMatchObject({ refundNo: large, status: 'REJECTED', reviewedBy: 'carol' });
    expect(await refundRow(large)).toMatchObject({ status: 'REJECTED', reviewed_by: 'carol' });
    expect(await reserved(paidBy)).toBe(1000);
    expect(await orderStatus(orderNo)).toBe('PARTIALLY_REFUNDED');
    expect(await audits(large)).toEqual(['carol REFUND_REJECTED']);
    await noChannelCallWindow();
    expect(fake.callsFor(large)).toBe(0);
    // The amount is free again, and an approval comes too late.
    expect((await approve(large, platforms.admins.admin2)).status).toBe(409);
    const again = await requestRefund(orderNo, paidBy, 8000);
    expect(await refundRow(again)).toMatchObject({ status: 'AWAITING_APPROVAL' });
  });

  it('should let the requester withdraw their own, and return a duplicate-payment anomaly to OPEN', async () => {
    const { orderNo, duplicateBy } = await paidOrder('ALIPAY', 5500, true);
    const refundNo = await requestRefund(orderNo, duplicateBy, 5500);
    expect((await row('SELECT status FROM payment_anomaly WHERE transaction_id = ?', [duplicateBy])).status).toBe(
      'REFUNDING',
    );

    expect((await reject(refundNo, platforms.admins.admin)).status).toBe(200);

    expect((await row('SELECT status FROM payment_anomaly WHERE transaction_id = ?', [duplicateBy])).status).toBe(
      'OPEN',
    );
    expect(await reserved(duplicateBy)).toBe(0);
    expect(await orderStatus(orderNo)).toBe('PAID');
  });

  it('should answer 404 for an unknown refund, 409 for one not awaiting approval, 400 without a reason', async () => {
    const { orderNo, paidBy } = await paidOrder('WECHATPAY', 3000);
    const small = await requestRefund(orderNo, paidBy, 3000);
    await refundStatusIs(small, 'SUCCEEDED');

    const unknown = await reject(uniqueId('NOPE'), carol);
    const notAwaiting = await reject(small, carol);
    const noReason = await reject(small, carol, clients[0], {});
    const approveUnknown = await approve(uniqueId('NOPE'), carol);

    expect(unknown.status).toBe(404);
    expect(unknown.json()).toMatchObject({ error: 'RefundNotFound' });
    expect(notAwaiting.status).toBe(409);
    expect(notAwaiting.json().message).toContain(
      'is SUCCEEDED; only a refund that is AWAITING_APPROVAL can be rejected',
    );
    expect(noReason.status).toBe(400);
    expect(approveUnknown.status).toBe(404);
    expect(await refundRow(small)).toMatchObject({ status: 'SUCCEEDED' });
    expect(await changes(small)).toEqual([]);
    expect(await refusals(small)).toEqual(['carol REFUND_REJECT_REFUSED', 'carol REFUND_REJECT_REFUSED']);
  });
});

describe('approve versus reject, at once', () => {
  it('should let exactly one of them apply, 20 times out of 20, with a channel call only when approved', async () => {
    for (let iteration = 0; iteration < 20; iteration++) {
      const { orderNo, paidBy } = await paidOrder(iteration % 2 ? 'ALIPAY' : 'WECHATPAY', 7000);
      const refundNo = await requestRefund(orderNo, paidBy, 7000);

      const [approved, rejected] = await Promise.all([
        approve(refundNo, platforms.admins.admin2, clients[iteration % 2]),
        reject(refundNo, carol, clients[(iteration + 1) % 2]),
      ]);

      expect([approved.status, rejected.status].sort()).toEqual([200, 409]);
      const approvalWon = approved.status === 200;
      if (approvalWon) await refundStatusIs(refundNo, 'SUCCEEDED');
      else await noChannelCallWindow();
      expect({
        refund: (await refundRow(refundNo)).status,
        order: await orderStatus(orderNo),
        reserved: await reserved(paidBy),
        channelCalls: fake.callsFor(refundNo),
        audits: await changes(refundNo),
        refundEvents: await count(
          pool,
          "SELECT COUNT(*) FROM outbox_event WHERE type = 'refund.succeeded' AND order_no = ?",
          [orderNo],
        ),
      }).toEqual(
        approvalWon
          ? {
              refund: 'SUCCEEDED',
              order: 'REFUNDED',
              reserved: 7000,
              channelCalls: 1,
              audits: ['bob REFUND_APPROVED'],
              refundEvents: 1,
            }
          : {
              refund: 'REJECTED',
              order: 'PAID',
              reserved: 0,
              channelCalls: 0,
              audits: ['carol REFUND_REJECTED'],
              refundEvents: 0,
            },
      );
    }
  });
});

describe('a refund split into pieces below REFUND_APPROVAL_THRESHOLD', () => {
  it('should need approval once the pieces together reach it: of ten parallel pieces, one goes to the channel alone', async () => {
    const piece = THRESHOLD - 1;
    const { orderNo, paidBy } = await paidOrder('WECHATPAY', 10 * THRESHOLD);
    const refundNos = Array.from({ length: 10 }, (_, i) => `${uniqueId('SPLIT')}-${i}`);

    const answers = await Promise.all(
      refundNos.map((refundNo, i) =>
        clients[i % 2].admin('POST', '/admin/refunds/emergency', platforms.admins.admin, {
          orderNo,
          transactionId: paidBy,
          amount: piece,
          refundNo,
          reason: 'split',
        }),
      ),
    );
    await noChannelCallWindow();

    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(202));
    const unreviewedSent = await count(
      pool,
      `SELECT COUNT(*) FROM refund WHERE transaction_id = ? AND status <> 'AWAITING_APPROVAL' AND reviewed_by IS NULL`,
      [paidBy],
    );
    const awaiting = await count(
      pool,
      `SELECT COUNT(*) FROM refund WHERE transaction_id = ? AND status = 'AWAITING_APPROVAL'`,
      [paidBy],
    );
    expect({ unreviewedSent, awaiting }).toEqual({ unreviewedSent: 1, awaiting: 9 });
    expect(refundNos.reduce((calls, refundNo) => calls + fake.callsFor(refundNo), 0)).toBe(1);
    expect(await reserved(paidBy)).toBe(10 * piece);
  });

  it('should count what was refunded before: a small refund after a large approved one needs approval', async () => {
    const { orderNo, paidBy } = await paidOrder('ALIPAY', 3 * THRESHOLD);
    const large = await requestRefund(orderNo, paidBy, THRESHOLD);
    expect((await approve(large, platforms.admins.admin2)).status).toBe(200);
    await refundStatusIs(large, 'SUCCEEDED');

    const small = await requestRefund(orderNo, paidBy, 1);
    await noChannelCallWindow();

    expect(await refundRow(small)).toMatchObject({ status: 'AWAITING_APPROVAL', attempts: 0 });
    expect(fake.callsFor(small)).toBe(0);
  });

  it('should show in the approval queue what the refunds of the payment add up to, this one included', async () => {
    const { orderNo, paidBy } = await paidOrder('WECHATPAY', 3 * THRESHOLD);
    const first = await requestRefund(orderNo, paidBy, THRESHOLD - 1000);
    await refundStatusIs(first, 'SUCCEEDED');
    const second = await requestRefund(orderNo, paidBy, 2000);

    const queue = await clients[0].admin('GET', '/admin/refunds?status=AWAITING_APPROVAL', platforms.admins.viewer);

    expect(queue.status).toBe(200);
    const item = (queue.json().items as Array<Record<string, unknown>>).find((r) => r.refundNo === second);
    expect(item).toMatchObject({ amount: 2000, transactionRefundTotal: THRESHOLD + 1000 });
  });
});
