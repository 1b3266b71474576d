import { Channel } from '../src/domain/notification';
import { NotifyTestChannel } from './support/notify-channels';
import { pay as payBy } from './support/paid-orders';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { eventually, sleep } from './support/eventually';
import { FakePlatform, RefundBehaviour } from '../tools/simulator/fake-platform';
import { yuan } from '../tools/simulator/platform-signers';
import { FakePlatformSuite, startFakePlatformSuite } from './support/fake-platform-suite';
import { RunningApp, TestClient, TestPlatforms, uniqueId } from './support/test-app';

/**
 * Partial refunds of one payment settling at the same time, on two replicas: each refund is settled
 * by the channel's API answer, its query, or its notification(s), in whatever order they happen to
 * arrive. However they interleave, once every refund is final the order (or the anomaly) must say
 * exactly what the refunds add up to, and the money bookkeeping must match to the fen.
 */
let platforms: TestPlatforms;
let fake: FakePlatform;
let replicas: RunningApp[];
let clients: TestClient[];
let pool: Pool;

let suite: FakePlatformSuite;

beforeAll(async () => {
  suite = await startFakePlatformSuite();
  ({ platforms, fake, pool } = suite);
  const env = {
    ...suite.env,
    REFUND_RETRY_BASE_DELAY_MS: '150',
    REFUND_RETRY_MAX_DELAY_MS: '1000',
    REFUND_POLL_INTERVAL_MS: '50',
  };
  replicas = [await suite.startApp(env), await suite.startApp(env)];
  clients = replicas.map((r) => suite.clientOf(r));
});

afterAll(() => suite?.close());

/** How the channel tells the outcome of one refund, and what the outcome is. */
type Story =
  | 'answered-success' // the API answer says SUCCESS
  | 'answered-refused' // the API answer is a business refusal: CLOSED
  | 'answered-and-notified-success' // both the API answer and the notification say SUCCESS, racing
  | 'notified-success' // accepted (PROCESSING), then REFUND.SUCCESS (or a query finding it)
  | 'notified-closed' // accepted, then REFUND.CLOSED
  | 'abnormal-then-success' // accepted, REFUND.ABNORMAL, then REFUND.SUCCESS once a person acted
  | 'abnormal-then-closed'; // accepted, REFUND.ABNORMAL, then REFUND.CLOSED

const STORIES: Record<NotifyTestChannel, Story[]> = {
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
    return { reject: channel === 'WECHATPAY' ? 'INVALID_REQUEST' : 'ACQ.TRADE_NOT_ALLOW_REFUND' };
  }
  return story.startsWith('answered') ? 'success' : 'processing';
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)];
const client = () => pick(clients);

interface PlannedRefund {
  refundNo: string;
  amount: number;
  story: Story;
}

interface Case {
  channel: NotifyTestChannel;
  orderNo: string;
  /** The transaction being refunded: the one that paid the order, or the duplicate payment. */
  transactionId: string;
  total: number;
}

const pay = (channel: Channel, orderNo: string, transactionId: string, amount: number) =>
  payBy(client(), channel, orderNo, transactionId, amount);

async function paidCase(channel: NotifyTestChannel, total: number, anomaly: boolean): Promise<Case> {
  const orderNo = uniqueId('CC');
  const paidBy = uniqueId('T');
  expect((await client().registerOrder({ orderNo, amount: total })).status).toBe(201);
  await pay(channel, orderNo, paidBy, total);
  if (!anomaly) return { channel, orderNo, transactionId: paidBy, total };
  const duplicateBy = uniqueId('D');
  await pay(channel, orderNo, duplicateBy, total);
  return { channel, orderNo, transactionId: duplicateBy, total };
}

/** `n` refunds of random amounts (at least 1 fen each) adding up to the whole `total` or less. */
function plan(channel: NotifyTestChannel, total: number, n: number): PlannedRefund[] {
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

function wechatpayNotice(c: Case, refund: PlannedRefund, status: 'SUCCESS' | 'CLOSED' | 'ABNORMAL') {
  const notice = client().wechatpayRefundNotice(
    {
      outTradeNo: c.orderNo,
      transactionId: c.transactionId,
      outRefundNo: refund.refundNo,
      refundId: `5000${refund.refundNo.slice(-10)}`,
      refundStatus: status,
      total: c.total,
      refund: refund.amount,
    },
    `REFUND.${status}`,
  );
  return notice;
}

/** What the channel does after it received the refund request, as the story goes. */
async function tellTheRest(c: Case, refund: PlannedRefund): Promise<void> {
  await eventually(`the channel call of ${refund.refundNo}`, () => fake.callsFor(refund.refundNo) > 0, 20_000);
  await sleep(Math.random() * 15);
  const notify = async (status: 'SUCCESS' | 'CLOSED' | 'ABNORMAL') => {
    if (c.channel === 'WECHATPAY') {
      fake.settle(refund.refundNo, status); // what a query finds from now on
      expect((await client().postWechatpay(wechatpayNotice(c, refund, status))).status).toBe(204);
      return;
    }
    const notice = client().alipayRefundNotice({
      outTradeNo: c.orderNo,
      tradeNo: c.transactionId,
      totalAmount: yuan(c.total),
      outBizNo: refund.refundNo,
      refundFee: yuan(refund.amount),
    });
    expect((await client().postAlipay(notice)).body).toBe('success');
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
      const answer = await client().admin(
        'POST',
        '/admin/refunds/emergency',
        i % 2 ? platforms.admins.admin : platforms.admins.admin2,
        {
          orderNo: c.orderNo,
          transactionId: c.transactionId,
          amount: refund.amount,
          refundNo: refund.refundNo,
          reason: 'concurrent partial refunds',
        },
      );
      expect(answer.status).toBe(202);
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
      const channel: NotifyTestChannel = iteration % 2 === 0 ? 'WECHATPAY' : 'ALIPAY';
      const c = await paidCase(channel, 1000, anomaly);
      const refunds = plan(channel, c.total, n);

      await refundAllAtOnce(c, refunds);
      await eventually(`every refund of ${c.orderNo} to be final`, () => allFinal(refunds), 20_000);

      expect(await outcome(c, refunds)).toEqual(expectedOutcome(c, refunds, anomaly));
    }
  });
});
