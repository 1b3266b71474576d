import { Pool, RowDataPacket } from 'mysql2/promise';
import { Channel } from '../../src/domain/notification';
import { DeliveryOutcome } from '../../src/settlement/settlement.service';
import { FakePlatform, RefundBehaviour } from '../../tools/simulator/fake-platform';
import { eventually, sleep } from '../support/eventually';
import { Factories } from '../support/factories';
import { Medium, startMedium } from '../support/medium';
import { uniqueId } from '../support/test-app';

/**
 * Partial refunds of one payment settling at the same time, on two replicas (two medium modules on
 * one database): each refund is settled by the channel's API answer, its query, or its
 * notification(s), in whatever order they happen to arrive. However they interleave, once every
 * refund is final the order (or the anomaly) must say exactly what the refunds add up to, and the
 * money bookkeeping must match to the fen. The
 * refunds go through the refund use case and the notifications through the channels' verifiers and
 * settlement, as the admin and notify routes hand them over.
 */
let setup: Medium;
let fake: FakePlatform;
let pool: Pool;

beforeAll(async () => {
  // The refund worker takes every due refund of its database: other suites' would come first.
  setup = await startMedium(
    { REFUND_RETRY_BASE_DELAY_MS: '150', REFUND_RETRY_MAX_DELAY_MS: '1000', REFUND_POLL_INTERVAL_MS: '50' },
    { ownDatabase: true, replicas: 2 },
  );
  ({ fake, pool } = setup);
});

afterAll(() => setup?.close());

type TestChannel = typeof Channel.Wechatpay | typeof Channel.Alipay;

/** How the channel tells the outcome of one refund, and what the outcome is. */
type Story =
  | 'answered-success' // the API answer says SUCCESS
  | 'answered-refused' // the API answer is a business refusal: CLOSED
  | 'answered-and-notified-success' // both the API answer and the notification say SUCCESS, racing
  | 'notified-success' // accepted (PROCESSING), then REFUND.SUCCESS (or a query finding it)
  | 'notified-closed' // accepted, then REFUND.CLOSED
  | 'abnormal-then-success' // accepted, REFUND.ABNORMAL, then REFUND.SUCCESS once a person acted
  | 'abnormal-then-closed'; // accepted, REFUND.ABNORMAL, then REFUND.CLOSED

const STORIES: Record<TestChannel, Story[]> = {
  WECHATPAY: [
    'answered-success',
    'answered-refused',
    'answered-and-notified-success',
    'notified-success',
    'notified-closed',
    'abnormal-then-success',
    'abnormal-then-closed',
  ],
  // Alipay has no PROCESSING answer, and its refund notification only ever says the money moved.
  ALIPAY: ['answered-success', 'answered-refused', 'answered-and-notified-success'],
};

const SUCCEEDS: Record<Story, boolean> = {
  'answered-success': true,
  'answered-refused': false,
  'answered-and-notified-success': true,
  'notified-success': true,
  'notified-closed': false,
  'abnormal-then-success': true,
  'abnormal-then-closed': false,
};

function behaviourOf(story: Story, channel: Channel): RefundBehaviour {
  if (story === 'answered-refused') {
    return { reject: channel === Channel.Wechatpay ? 'INVALID_REQUEST' : 'ACQ.TRADE_NOT_ALLOW_REFUND' };
  }
  return story.startsWith('answered') ? 'success' : 'processing';
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)];
/** Either replica, at random. */
const replica = (): Factories => pick(setup.makes);

interface PlannedRefund {
  refundNo: string;
  amount: number;
  story: Story;
}

interface Case {
  channel: TestChannel;
  orderNo: string;
  /** The transaction being refunded: the one that paid the order, or the duplicate payment. */
  transactionId: string;
  total: number;
}

async function pay(channel: Channel, orderNo: string, transactionId: string, amount: number): Promise<DeliveryOutcome> {
  return replica().payment(channel, { orderNo, transactionId, amount });
}

async function paidCase(channel: TestChannel, total: number, anomaly: boolean): Promise<Case> {
  const orderNo = uniqueId('CC');
  const paidBy = uniqueId('T');
  await replica().order({ orderNo, amount: total });
  expect(await pay(channel, orderNo, paidBy, total)).toBe(DeliveryOutcome.Paid);
  if (!anomaly) return { channel, orderNo, transactionId: paidBy, total };
  const duplicateBy = uniqueId('D');
  expect(await pay(channel, orderNo, duplicateBy, total)).toBe(DeliveryOutcome.DuplicatePayment);
  return { channel, orderNo, transactionId: duplicateBy, total };
}

/** `n` refunds of random amounts (at least 1 fen each) adding up to the whole `total` or less. */
function plan(channel: TestChannel, total: number, n: number): PlannedRefund[] {
  const refundAll = Math.random() < 0.5;
  const budget = refundAll ? total : n + Math.floor(Math.random() * (total - n));
  const cuts = Array.from({ length: n - 1 }, () => 1 + Math.floor(Math.random() * (budget - 1))).sort((a, b) => a - b);
  const bounds = [0, ...cuts, budget];
  const amounts = bounds.slice(1).map((end, i) => end - bounds[i]);
  // Equal cuts would make a zero amount: give it a fen from the largest one.
  for (let i = 0; i < n; i++) {
    if (amounts[i] > 0) continue;
    const largest = amounts.indexOf(Math.max(...amounts));
    amounts[largest]--;
    amounts[i]++;
  }
  return amounts.map((amount) => ({ refundNo: uniqueId('CR'), amount, story: pick(STORIES[channel]) }));
}

/** What the channel does after it received the refund request, as the story goes. */
async function tellTheRest(c: Case, refund: PlannedRefund): Promise<void> {
  await eventually(`the channel call of ${refund.refundNo}`, () => fake.callsFor(refund.refundNo) > 0, 20_000);
  await sleep(Math.random() * 15);
  const notice = { orderNo: c.orderNo, transactionId: c.transactionId, refundNo: refund.refundNo };
  const notify = async (status: 'SUCCESS' | 'CLOSED' | 'ABNORMAL') => {
    if (c.channel === Channel.Wechatpay) {
      fake.settle(refund.refundNo, status); // what a query finds from now on
      const channelRefundId = `5000${refund.refundNo.slice(-10)}`;
      await replica().wechatpayRefundNotice({
        ...notice,
        channelRefundId,
        status,
        total: c.total,
        refund: refund.amount,
      });
      return;
    }
    await replica().alipayRefundNotice({ ...notice, total: c.total, refund: refund.amount });
  };
  switch (refund.story) {
    case 'answered-success':
    case 'answered-refused':
      return;
    case 'answered-and-notified-success':
    case 'notified-success':
      return notify('SUCCESS');
    case 'notified-closed':
      return notify('CLOSED');
    case 'abnormal-then-success':
    case 'abnormal-then-closed':
      await notify('ABNORMAL');
      await sleep(Math.random() * 15);
      return notify(refund.story === 'abnormal-then-success' ? 'SUCCESS' : 'CLOSED');
  }
}

async function refundAllAtOnce(c: Case, refunds: PlannedRefund[]): Promise<void> {
  for (const refund of refunds) fake.script(refund.refundNo, behaviourOf(refund.story, c.channel));
  await Promise.all(
    refunds.map(async (refund, i) => {
      const { created } = await replica().refund(
        {
          orderNo: c.orderNo,
          transactionId: c.transactionId,
          amount: refund.amount,
          refundNo: refund.refundNo,
          reason: 'concurrent partial refunds',
        },
        i % 2 ? 'alice' : 'bob',
      );
      expect(created).toBe(true);
      await tellTheRest(c, refund);
    }),
  );
}

async function rows(sql: string, params: unknown[]): Promise<RowDataPacket[]> {
  return (await pool.query<RowDataPacket[]>(sql, params))[0];
}

/** Every effect the refunds had, as the database holds it once all of them are final. */
async function outcome(c: Case, refunds: PlannedRefund[]) {
  const statuses = await rows('SELECT refund_no, status FROM refund WHERE order_no = ?', [c.orderNo]);
  const [order] = await rows('SELECT status FROM payment_order WHERE order_no = ?', [c.orderNo]);
  const [payment] = await rows('SELECT refund_reserved_amount FROM payment_callback WHERE transaction_id = ?', [
    c.transactionId,
  ]);
  const anomaly = await rows('SELECT status FROM payment_anomaly WHERE transaction_id = ?', [c.transactionId]);
  const events = await rows(
    "SELECT JSON_UNQUOTE(JSON_EXTRACT(payload, '$.refundNo')) AS refund_no FROM outbox_event WHERE type = 'refund.succeeded' AND order_no = ?",
    [c.orderNo],
  );
  const history = await rows('SELECT from_status, to_status FROM order_status_change WHERE order_no = ? ORDER BY id', [
    c.orderNo,
  ]);
  const statusOf = new Map(statuses.map((r) => [r.refund_no as string, r.status as string]));
  return {
    refunds: refunds.map((r) => `${r.refundNo} ${r.story} ${r.amount}: ${statusOf.get(r.refundNo)}`),
    orderStatus: order.status as string,
    anomalyStatus: anomaly[0]?.status as string | undefined,
    reserved: Number(payment.refund_reserved_amount),
    refundEvents: events.map((e) => e.refund_no as string).sort(),
    historyIsAChain: history.every((h, i) => i === 0 || h.from_status === history[i - 1].to_status),
    lastRecordedStatus: history[history.length - 1].to_status as string,
    channelCalls: refunds.map((r) => fake.callsFor(r.refundNo)),
  };
}

function expectedOutcome(c: Case, refunds: PlannedRefund[], anomaly: boolean) {
  const refunded = refunds.filter((r) => SUCCEEDS[r.story]).reduce((sum, r) => sum + r.amount, 0);
  const byTheSums = refunded === c.total ? 'REFUNDED' : refunded > 0 ? 'PARTIALLY_REFUNDED' : 'PAID';
  return {
    refunds: refunds.map((r) => `${r.refundNo} ${r.story} ${r.amount}: ${SUCCEEDS[r.story] ? 'SUCCEEDED' : 'CLOSED'}`),
    orderStatus: anomaly ? 'PAID' : byTheSums,
    anomalyStatus: anomaly ? (refunded === c.total ? 'RESOLVED' : 'OPEN') : undefined,
    reserved: refunded,
    refundEvents: refunds
      .filter((r) => SUCCEEDS[r.story])
      .map((r) => r.refundNo)
      .sort(),
    historyIsAChain: true,
    lastRecordedStatus: anomaly ? 'PAID' : byTheSums,
    channelCalls: refunds.map(() => 1),
  };
}

async function allFinal(refunds: PlannedRefund[]): Promise<boolean> {
  const settled = await rows(
    "SELECT COUNT(*) AS n FROM refund WHERE refund_no IN (?) AND status IN ('SUCCEEDED', 'CLOSED')",
    [refunds.map((r) => r.refundNo)],
  );
  return Number(settled[0].n) === refunds.length;
}

const ITERATIONS = 20;

describe.each([
  [2, 'an order', false],
  [10, 'an order', false],
  [2, 'a duplicate-payment anomaly', true],
  [10, 'a duplicate-payment anomaly', true],
] as const)('%i concurrent partial refunds of %s', (n, _what, anomaly) => {
  it(`should leave the ${anomaly ? 'anomaly' : 'order'} exactly as the refunds add up, ${ITERATIONS} times out of ${ITERATIONS}`, async () => {
    for (let iteration = 0; iteration < ITERATIONS; iteration++) {
      const channel: TestChannel = iteration % 2 === 0 ? Channel.Wechatpay : Channel.Alipay;
      const c = await paidCase(channel, 1000, anomaly);
      const refunds = plan(channel, c.total, n);

      await refundAllAtOnce(c, refunds);
      await eventually(`every refund of ${c.orderNo} to be final`, () => allFinal(refunds), 20_000);

      expect(await outcome(c, refunds)).toEqual(expectedOutcome(c, refunds, anomaly));
    }
  });
});
