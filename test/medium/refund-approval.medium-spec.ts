import { Pool, RowDataPacket } from 'mysql2/promise';
import { AdminQueries } from '../../src/admin/admin.queries';
import { Channel } from '../../src/domain/notification';
import { RefundStatus } from '../../src/refund/refund.entity';
import { RefundRetryWorker } from '../../src/refund/refund-retry.worker';
import { Refunds } from '../../src/refund/refunds';
import { FakePlatform } from '../../tools/simulator/fake-platform';
import { eventually } from '../support/eventually';
import { Factories } from '../support/factories';
import { auditedAs, domainFailure, Medium, MediumContext, startMedium } from '../support/medium';
import { OrderEffects } from '../support/order-effects';
import { RefundEffects } from '../support/refund-effects';
import { count, uniqueId } from '../support/test-app';
import { roundsFrom } from '../support/worker-rounds';

/**
 * Four eyes on large refunds, as services on two replicas of one database: at or above
 * REFUND_APPROVAL_THRESHOLD a refund is recorded and its amount reserved, but the channel is called
 * only once a second admin approved it. What only HTTP
 * shows (the viewer's 403, a missing reason's 400, the audit of refused calls) is in
 * test/refunds.e2e-spec.ts.
 */
const THRESHOLD = 5000;
const POLL_INTERVAL_MS = 50;

let setup: Medium;
let fake: FakePlatform;
let replicas: MediumContext[];
let make: Factories;
let pool: Pool;
let orders: OrderEffects;
let refunds: RefundEffects;

beforeAll(async () => {
  // The refund worker takes every due refund of its database: other suites' would come first.
  setup = await startMedium(
    { REFUND_APPROVAL_THRESHOLD: String(THRESHOLD), REFUND_POLL_INTERVAL_MS: String(POLL_INTERVAL_MS) },
    { ownDatabase: true, replicas: 2 },
  );
  ({ fake, replicas, pool } = setup);
  make = setup.makes[0];
  orders = new OrderEffects(pool);
  refunds = new RefundEffects(pool);
});

afterAll(() => setup?.close());

const paidOrder = (channel: Channel, amount: number, duplicate = false) => make.paidOrder(channel, amount, duplicate);
const use = (replica = 0) => replicas[replica].get(Refunds);

/** Alice asks for it: `amount` of the transaction, under a number of her own. */
async function requestRefund(orderNo: string, transactionId: string, amount: number): Promise<string> {
  const refundNo = uniqueId('AR');
  const { created } = await use().request(
    { orderNo, transactionId, amount, refundNo, reason: 'large refund' },
    'alice',
  );
  expect(created).toBe(true);
  return refundNo;
}

/** Approves as the admin route does: the change and its audit row in one transaction. */
const approve = (refundNo: string, operatorId: string, replica = 0) =>
  use(replica).approve(
    refundNo,
    operatorId,
    auditedAs(replicas[replica], operatorId, 'REFUND_APPROVED', `refund:${refundNo}`),
  );
const reject = (refundNo: string, operatorId: string, replica = 0) =>
  use(replica).reject(
    refundNo,
    operatorId,
    'not justified',
    auditedAs(replicas[replica], operatorId, 'REFUND_REJECTED', `refund:${refundNo}`),
  );

const refundRow = async (refundNo: string) => (await refunds.row(refundNo))!;
const orderStatus = (orderNo: string) => orders.status(orderNo);
const reserved = (transactionId: string) => refunds.reserved(transactionId);
/** The audited changes of a refund. */
const changes = async (refundNo: string) =>
  (
    await pool.query<RowDataPacket[]>('SELECT operator_id, action FROM admin_audit WHERE target = ? ORDER BY id', [
      `refund:${refundNo}`,
    ])
  )[0].map((a) => `${a.operator_id} ${a.action}`);
const refundStatusIs = (refundNo: string, status: string) =>
  eventually(`refund ${refundNo} to be ${status}`, async () => (await refundRow(refundNo)).status === status, 15_000);
/**
 * Waits until the refund worker of every replica (and of `others`) has finished a whole round begun
 * now: each has read every refund committed so far, and made the channel calls it would make of
 * them, before a test says that a refund was not called.
 */
const workersHadTheirRound = (...others: MediumContext[]) =>
  roundsFrom(...[...replicas, ...others].map((ctx) => ctx.get(RefundRetryWorker)))('the refunds were committed');

describe('an emergency refund at or above REFUND_APPROVAL_THRESHOLD', () => {
  it('should go straight to the channel below the threshold', async () => {
    const { orderNo, paidBy } = await paidOrder(Channel.Wechatpay, 8000);

    const refundNo = await requestRefund(orderNo, paidBy, THRESHOLD - 1);

    await refundStatusIs(refundNo, 'SUCCEEDED');
    expect(fake.callsFor(refundNo)).toBe(1);
    expect(await orderStatus(orderNo)).toBe('PARTIALLY_REFUNDED');
  });

  it('should be recorded AWAITING_APPROVAL with its amount reserved, and call no channel', async () => {
    const { orderNo, paidBy } = await paidOrder(Channel.Alipay, 8000);

    const refundNo = await requestRefund(orderNo, paidBy, THRESHOLD);
    await workersHadTheirRound();

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
    const over = await domainFailure(
      use().request(
        { orderNo, transactionId: paidBy, amount: 8000 - THRESHOLD + 1, refundNo: uniqueId('AR'), reason: 'too much' },
        'bob',
      ),
    );
    expect(over).toMatchObject({ code: 'OverRefund', status: 422 });
  });

  it('should start once another admin approves it, audited, with one channel call', async () => {
    const { orderNo, paidBy } = await paidOrder(Channel.Wechatpay, 6000);
    const refundNo = await requestRefund(orderNo, paidBy, 6000);

    const approved = await approve(refundNo, 'bob');

    expect(approved).toMatchObject({ refundNo, requestedBy: 'alice', reviewedBy: 'bob' });
    await refundStatusIs(refundNo, 'SUCCEEDED');
    expect(fake.callsFor(refundNo)).toBe(1);
    expect(await orderStatus(orderNo)).toBe('REFUNDED');
    expect(await changes(refundNo)).toEqual(['bob REFUND_APPROVED']);
  });

  it('should refuse the requester approving their own refund (403), and change nothing', async () => {
    const { orderNo, paidBy } = await paidOrder(Channel.Wechatpay, 7000);
    const refundNo = await requestRefund(orderNo, paidBy, 7000);

    const own = await domainFailure(approve(refundNo, 'alice'));
    await workersHadTheirRound();

    expect(own).toMatchObject({ code: 'Forbidden', status: 403 });
    expect(own.message).toContain('alice requested refund');
    expect(await refundRow(refundNo)).toMatchObject({ status: 'AWAITING_APPROVAL', reviewed_by: null });
    expect(fake.callsFor(refundNo)).toBe(0);
    expect(await changes(refundNo)).toEqual([]);
  });

  it('should make one channel call when two admins on two replicas approve it 20 times at once', async () => {
    const { orderNo, paidBy } = await paidOrder(Channel.Alipay, 9000);
    const refundNo = await requestRefund(orderNo, paidBy, 9000);

    const answers = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => approve(refundNo, i % 2 ? 'carol' : 'bob', i % 2)),
    );

    expect(answers.filter((a) => a.status === 'fulfilled')).toHaveLength(1);
    const refusals = answers.flatMap((a) =>
      a.status === 'rejected' ? [a.reason as { code: string; status: number }] : [],
    );
    expect(refusals).toHaveLength(19);
    expect(refusals.every((e) => e.code === 'RefundConflict' && e.status === 409)).toBe(true);
    expect((refusals[0] as unknown as Error).message).toContain(
      'only a refund that is AWAITING_APPROVAL can be approved',
    );
    await refundStatusIs(refundNo, 'SUCCEEDED');
    await workersHadTheirRound();
    expect(fake.callsFor(refundNo)).toBe(1);
    expect(await orderStatus(orderNo)).toBe('REFUNDED');
    expect(await changes(refundNo)).toHaveLength(1);
  });
});

describe('rejecting a refund that awaits approval', () => {
  it('should cancel it, give its amount back, and return the order to where the other refunds leave it', async () => {
    const { orderNo, paidBy } = await paidOrder(Channel.Wechatpay, 9000);
    const small = await requestRefund(orderNo, paidBy, 1000);
    await refundStatusIs(small, 'SUCCEEDED');
    const large = await requestRefund(orderNo, paidBy, 8000);
    expect(await orderStatus(orderNo)).toBe('REFUNDING');

    const rejected = await reject(large, 'carol');

    expect(rejected).toMatchObject({ refundNo: large, status: 'REJECTED', reviewedBy: 'carol' });
    expect(await refundRow(large)).toMatchObject({ status: 'REJECTED', reviewed_by: 'carol' });
    expect(await reserved(paidBy)).toBe(1000);
    expect(await orderStatus(orderNo)).toBe('PARTIALLY_REFUNDED');
    expect(await changes(large)).toEqual(['carol REFUND_REJECTED']);
    await workersHadTheirRound();
    expect(fake.callsFor(large)).toBe(0);
    // The amount is free again, and an approval comes too late.
    expect(await domainFailure(approve(large, 'bob'))).toMatchObject({ status: 409 });
    const again = await requestRefund(orderNo, paidBy, 8000);
    expect(await refundRow(again)).toMatchObject({ status: 'AWAITING_APPROVAL' });
  });

  it('should let the requester withdraw their own, and return a duplicate-payment anomaly to OPEN', async () => {
    const { orderNo, duplicateBy } = await paidOrder(Channel.Alipay, 5500, true);
    const refundNo = await requestRefund(orderNo, duplicateBy, 5500);
    expect(await refunds.anomalyStatus(duplicateBy)).toBe('REFUNDING');

    expect(await reject(refundNo, 'alice')).toMatchObject({ status: 'REJECTED' });

    expect(await refunds.anomalyStatus(duplicateBy)).toBe('OPEN');
    expect(await reserved(duplicateBy)).toBe(0);
    expect(await orderStatus(orderNo)).toBe('PAID');
  });

  it('should refuse an unknown refund (404) and one not awaiting approval (409), changing nothing', async () => {
    const { orderNo, paidBy } = await paidOrder(Channel.Wechatpay, 3000);
    const small = await requestRefund(orderNo, paidBy, 3000);
    await refundStatusIs(small, 'SUCCEEDED');

    const unknown = await domainFailure(reject(uniqueId('NOPE'), 'carol'));
    const notAwaiting = await domainFailure(reject(small, 'carol'));
    const approveUnknown = await domainFailure(approve(uniqueId('NOPE'), 'carol'));

    expect(unknown).toMatchObject({ code: 'RefundNotFound', status: 404 });
    expect(notAwaiting.status).toBe(409);
    expect(notAwaiting.message).toContain('is SUCCEEDED; only a refund that is AWAITING_APPROVAL can be rejected');
    expect(approveUnknown.status).toBe(404);
    expect(await refundRow(small)).toMatchObject({ status: 'SUCCEEDED' });
    expect(await changes(small)).toEqual([]);
  });
});

describe('an anomaly refund asked without a refundNo (as the console asks)', () => {
  /** Alice's request as the console sends it: no refund number, so the service derives one. */
  const askFor = (orderNo: string, transactionId: string, amount: number, replica = 0) =>
    use(replica).request({ orderNo, transactionId, amount, reason: 'paid twice' }, 'alice');

  it('should take a new request after a rejection, the rejected amount too, and find the same request again', async () => {
    const { orderNo, duplicateBy } = await paidOrder(Channel.Wechatpay, 2 * THRESHOLD, true);
    const large = await askFor(orderNo, duplicateBy, THRESHOLD + 500);
    expect(large).toMatchObject({ created: true, refund: { status: 'AWAITING_APPROVAL' } });
    await reject(large.refund.refundNo, 'bob');

    const smaller = await askFor(orderNo, duplicateBy, THRESHOLD, 1);
    const smallerAgain = await askFor(orderNo, duplicateBy, THRESHOLD);

    expect(smaller).toMatchObject({ created: true, refund: { status: 'AWAITING_APPROVAL', amount: THRESHOLD } });
    expect(smaller.refund.refundNo).not.toBe(large.refund.refundNo);
    expect(smallerAgain).toMatchObject({ created: false, refund: { refundNo: smaller.refund.refundNo } });
    expect(await refunds.anomalyStatus(duplicateBy)).toBe('REFUNDING');
    await reject(smaller.refund.refundNo, 'bob');
    // The very first request, asked again after its rejection: a refund of its own, not the rejected one.
    const largeAgain = await askFor(orderNo, duplicateBy, THRESHOLD + 500, 1);
    expect(largeAgain).toMatchObject({ created: true, refund: { status: 'AWAITING_APPROVAL' } });
    expect(new Set([large, smaller, largeAgain].map((a) => a.refund.refundNo)).size).toBe(3);
    await approve(largeAgain.refund.refundNo, 'bob');
    await refundStatusIs(largeAgain.refund.refundNo, 'SUCCEEDED');

    const [rows] = await pool.query<RowDataPacket[]>(
      'SELECT amount, status FROM refund WHERE transaction_id = ? ORDER BY id',
      [duplicateBy],
    );
    expect(rows.map((r) => `${r.amount} ${r.status}`)).toEqual([
      `${THRESHOLD + 500} REJECTED`,
      `${THRESHOLD} REJECTED`,
      `${THRESHOLD + 500} SUCCEEDED`,
    ]);
    expect(await reserved(duplicateBy)).toBe(THRESHOLD + 500);
    expect(fake.calls.filter((c) => c.transactionId === duplicateBy)).toHaveLength(1);
  });

  it('should make one refund of the same request sent 10 times at once on two replicas', async () => {
    const { orderNo, duplicateBy } = await paidOrder(Channel.Alipay, THRESHOLD, true);

    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => askFor(orderNo, duplicateBy, THRESHOLD - 1000, i % 2)),
    );

    expect(answers.filter((a) => a.created)).toHaveLength(1);
    expect(new Set(answers.map((a) => a.refund.refundNo)).size).toBe(1);
    await refundStatusIs(answers[0].refund.refundNo, 'SUCCEEDED');
    expect(await count(pool, 'SELECT COUNT(*) FROM refund WHERE transaction_id = ?', [duplicateBy])).toBe(1);
    expect(await reserved(duplicateBy)).toBe(THRESHOLD - 1000);
  });
});

describe('approve versus reject, at once', () => {
  it('should let exactly one of them apply, 20 times out of 20, with a channel call only when approved', async () => {
    for (let iteration = 0; iteration < 20; iteration++) {
      const { orderNo, paidBy } = await paidOrder(iteration % 2 ? Channel.Alipay : Channel.Wechatpay, 7000);
      const refundNo = await requestRefund(orderNo, paidBy, 7000);

      const [approved, rejected] = await Promise.allSettled([
        approve(refundNo, 'bob', iteration % 2),
        reject(refundNo, 'carol', (iteration + 1) % 2),
      ]);

      const outcomes = [approved, rejected].map((a) =>
        a.status === 'fulfilled' ? 200 : (a.reason as { status: number }).status,
      );
      expect(outcomes.sort()).toEqual([200, 409]);
      const approvalWon = approved.status === 'fulfilled';
      if (approvalWon) await refundStatusIs(refundNo, 'SUCCEEDED');
      await workersHadTheirRound();
      expect({
        refund: (await refundRow(refundNo)).status,
        order: await orderStatus(orderNo),
        reserved: await reserved(paidBy),
        channelCalls: fake.callsFor(refundNo),
        audits: await changes(refundNo),
        refundEvents: await refunds.succeededEvents(orderNo),
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
    const { orderNo, paidBy } = await paidOrder(Channel.Wechatpay, 10 * THRESHOLD);
    const refundNos = Array.from({ length: 10 }, (_, i) => `${uniqueId('SPLIT')}-${i}`);

    const answers = await Promise.all(
      refundNos.map((refundNo, i) =>
        use(i % 2).request({ orderNo, transactionId: paidBy, amount: piece, refundNo, reason: 'split' }, 'alice'),
      ),
    );
    await workersHadTheirRound();

    expect(answers.map((a) => a.created)).toEqual(Array(10).fill(true));
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
    const { orderNo, paidBy } = await paidOrder(Channel.Alipay, 3 * THRESHOLD);
    const large = await requestRefund(orderNo, paidBy, THRESHOLD);
    await approve(large, 'bob');
    await refundStatusIs(large, 'SUCCEEDED');

    const small = await requestRefund(orderNo, paidBy, 1);
    await workersHadTheirRound();

    expect(await refundRow(small)).toMatchObject({ status: 'AWAITING_APPROVAL', attempts: 0 });
    expect(fake.callsFor(small)).toBe(0);
  });

  it('should show in the approval queue what the refunds of the payment add up to, this one included', async () => {
    const { orderNo, paidBy } = await paidOrder(Channel.Wechatpay, 3 * THRESHOLD);
    const first = await requestRefund(orderNo, paidBy, THRESHOLD - 1000);
    await refundStatusIs(first, 'SUCCEEDED');
    const second = await requestRefund(orderNo, paidBy, 2000);

    const queue = await replicas[0].get(AdminQueries).refunds({ status: RefundStatus.AwaitingApproval });

    const item = queue.items.find((r) => r.refundNo === second);
    expect(item).toMatchObject({ amount: 2000, transactionRefundTotal: THRESHOLD + 1000 });
  });
});

describe('a refund of the order service with SHOP_REFUNDS_NEED_APPROVAL=true', () => {
  it('should wait for a second admin above the threshold, call no channel, and announce a rejection with refund.closed', async () => {
    const strict = await setup.another({
      REFUND_APPROVAL_THRESHOLD: String(THRESHOLD),
      REFUND_POLL_INTERVAL_MS: String(POLL_INTERVAL_MS),
      SHOP_REFUNDS_NEED_APPROVAL: 'true',
    });
    const { orderNo } = await strict.make.paidOrder(Channel.Wechatpay, 3 * THRESHOLD);
    const refundNo = uniqueId('SR');

    const { refund, created } = await strict
      .get(Refunds)
      .requestFromShop(orderNo, { refundNo, amount: THRESHOLD, reason: 'returned by the buyer' });

    expect({ created, status: refund.status }).toEqual({ created: true, status: 'AWAITING_APPROVAL' });
    await workersHadTheirRound(strict);
    expect(fake.callsFor(refundNo)).toBe(0);
    await strict.get(Refunds).reject(refundNo, 'alice', 'not returned yet');
    expect((await refunds.row(refundNo))?.status).toBe('REJECTED');
    const [closed] = await pool.query<RowDataPacket[]>(
      "SELECT payload FROM outbox_event WHERE order_no = ? AND type = 'refund.closed'",
      [orderNo],
    );
    expect(closed.map((r): unknown => (typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload))).toEqual([
      expect.objectContaining({ refundNo, amount: THRESHOLD }),
    ]);
    expect(fake.callsFor(refundNo)).toBe(0);
  });
});
