import { Pool } from 'mysql2/promise';
import { register } from 'prom-client';
import { AdminQueries } from '../../src/admin/admin.queries';
import { DomainError } from '../../src/domain/domain-error';
import { Channel } from '../../src/domain/notification';
import { REFUND_CALLS_TOTAL } from '../../src/platform/metrics/metrics.module';
import { RefundRetryWorker } from '../../src/refund/refund-retry.worker';
import { FakePlatform } from '../../tools/simulator/fake-platform';
import { waitFor } from '../support/eventually';
import { Factories } from '../support/factories';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { metricValue, OrderEffects } from '../support/order-effects';
import { count as countRows, uniqueId } from '../support/test-app';
import { RefundEffects } from '../support/refund-effects';
import { roundsFrom } from '../support/worker-rounds';

/**
 * Refunds as services: the emergency-refund service, the executor and its retry worker, and
 * refund settlement, with their real repositories on the real database, calling a local fake of
 * each channel's refund API (which checks the merchant's request signatures and signs its answers).
 * What only HTTP shows (status codes, auth, the audit row the admin route writes) is in
 * test/refunds.e2e-spec.ts.
 */
let setup: Medium;
let fake: FakePlatform;
let ctx: MediumContext;
let make: Factories;
let pool: Pool;
let orders: OrderEffects;
let refunds: RefundEffects;

const REFUND_TIMEOUT_MS = 500;
const PROCESSING_MAX_AGE_S = 3;

beforeAll(async () => {
  setup = await startMedium(
    {
      REFUND_REQUEST_TIMEOUT_MS: String(REFUND_TIMEOUT_MS),
      REFUND_RETRY_BASE_DELAY_MS: '1000',
      REFUND_RETRY_MAX_DELAY_MS: '2000',
      REFUND_POLL_INTERVAL_MS: '100',
      REFUND_PROCESSING_MAX_AGE_SECONDS: String(PROCESSING_MAX_AGE_S),
    },
    { fake: { hangMs: 2000 } },
  );
  ({ fake, ctx, make, pool } = setup);
  orders = new OrderEffects(pool);
  refunds = new RefundEffects(pool);
});

afterAll(() => setup?.close());

/** The DomainError a service call fails with: its code, what it answers over HTTP, and its message. */
async function failure(work: Promise<unknown>): Promise<{ code: string; status: number; message: string }> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  const { code, status, message } = error as DomainError;
  return { code, status, message };
}

const count = (sql: string, params: unknown[]) => countRows(pool, sql, params);

/** Refund calls the service has had an answer to (or a timeout for), as its counter says. */
const refundCallsAnswered = async () =>
  metricValue(await register.metrics(), REFUND_CALLS_TOTAL, { channel: Channel.Alipay, request: 'refund' });

describe('emergency refund of a duplicate payment', () => {
  it('should answer the same refund again later, without calling the channel again', async () => {
    const { orderNo, duplicateBy } = await make.paidOrder(Channel.Alipay, 990, true);
    const first = await make.refund({ orderNo, transactionId: duplicateBy });
    const { refundNo } = first.refund;
    await refunds.statusIs(refundNo, 'SUCCEEDED');

    const again = await make.refund({ orderNo, transactionId: duplicateBy }, 'bob');

    expect({ ...again.refund, created: again.created }).toMatchObject({
      refundNo,
      status: 'SUCCEEDED',
      created: false,
    });
    expect(fake.callsFor(refundNo)).toBe(1);
    expect(fake.calls.find((c) => c.refundNo === refundNo)).toMatchObject({ channel: 'ALIPAY', amount: 990 });
  });
});

describe('refunding the transaction that paid the order', () => {
  it('should move the order PAID → REFUNDING → REFUNDED on a full refund (Alipay)', async () => {
    const { orderNo, paidBy, amount } = await make.paidOrder(Channel.Alipay, 8888);

    const { refund, created } = await make.refund({ orderNo, transactionId: paidBy, reason: 'customer complaint' });

    expect({ ...refund, created }).toMatchObject({
      purpose: 'ORDER_REFUND',
      amount,
      requestedBy: 'alice',
      created: true,
    });
    await refunds.statusIs(refund.refundNo, 'SUCCEEDED');
    expect(await orders.status(orderNo)).toBe('REFUNDED');
    expect(await orders.history(orderNo)).toEqual([
      '->WAIT_PAY',
      'WAIT_PAY>PAID',
      'PAID>REFUNDING',
      'REFUNDING>REFUNDED',
    ]);
  });

  it('should refuse to refund more than the transaction paid minus what was refunded, and write nothing', async () => {
    const { orderNo, paidBy } = await make.paidOrder(Channel.Wechatpay, 1000);
    const partial = await make.refund({ orderNo, transactionId: paidBy, amount: 300, refundNo: uniqueId('P') });
    await refunds.statusIs(partial.refund.refundNo, 'SUCCEEDED');
    expect(await orders.status(orderNo)).toBe('PARTIALLY_REFUNDED');
    const before = await count('SELECT COUNT(*) FROM refund WHERE order_no = ?', [orderNo]);

    const tooMuch = await failure(
      make.refund({ orderNo, transactionId: paidBy, amount: 701, refundNo: uniqueId('P') }),
    );

    expect(tooMuch).toMatchObject({ code: 'OverRefund', status: 422 });
    expect(tooMuch.message).toContain('at most 700 can still be refunded');
    expect(await count('SELECT COUNT(*) FROM refund WHERE order_no = ?', [orderNo])).toBe(before);
    expect(await orders.status(orderNo)).toBe('PARTIALLY_REFUNDED');
    expect(await refunds.reserved(paidBy)).toBe(300);

    const rest = await make.refund({ orderNo, transactionId: paidBy, amount: 700, refundNo: uniqueId('P') });
    await refunds.statusIs(rest.refund.refundNo, 'SUCCEEDED');
    expect(await orders.status(orderNo)).toBe('REFUNDED');
  });

  it('should make two partial refunds in a row without a refundNo, and the same request again the same refund', async () => {
    const { orderNo, paidBy } = await make.paidOrder(Channel.Wechatpay, 1200);
    const first = await make.refund({ orderNo, transactionId: paidBy, amount: 200 });
    const second = await make.refund({ orderNo, transactionId: paidBy, amount: 300 });
    await refunds.statusIs(first.refund.refundNo, 'SUCCEEDED');
    await refunds.statusIs(second.refund.refundNo, 'SUCCEEDED');

    const firstAgain = await make.refund({ orderNo, transactionId: paidBy, amount: 200 }, 'bob');

    expect([first.created, second.created, firstAgain.created]).toEqual([true, true, false]);
    expect(second.refund.refundNo).not.toBe(first.refund.refundNo);
    expect(firstAgain.refund).toMatchObject({ refundNo: first.refund.refundNo, status: 'SUCCEEDED' });
    expect(await count('SELECT COUNT(*) FROM refund WHERE order_no = ?', [orderNo])).toBe(2);
    expect(await refunds.reserved(paidBy)).toBe(500);
    expect(fake.callsFor(first.refund.refundNo)).toBe(1);
    expect(await orders.status(orderNo)).toBe('PARTIALLY_REFUNDED');
  });

  it('should refund what is left when no amount is given, and find that refund again', async () => {
    const { orderNo, paidBy } = await make.paidOrder(Channel.Alipay, 10000);
    await make.refund({ orderNo, transactionId: paidBy, amount: 3000 });

    const rest = await make.refund({ orderNo, transactionId: paidBy });
    await refunds.statusIs(rest.refund.refundNo, 'SUCCEEDED');
    const restAgain = await make.refund({ orderNo, transactionId: paidBy });
    const nothingLeft = await failure(make.refund({ orderNo, transactionId: paidBy, refundNo: uniqueId('P') }));

    expect(rest).toMatchObject({ created: true, refund: { amount: 7000 } });
    expect(restAgain).toMatchObject({ created: false, refund: { refundNo: rest.refund.refundNo, amount: 7000 } });
    expect(nothingLeft).toMatchObject({ code: 'OverRefund', status: 422 });
    expect(nothingLeft.message).toContain('at most 0 can still be refunded');
    expect(await refunds.reserved(paidBy)).toBe(10000);
    expect(await count('SELECT COUNT(*) FROM refund WHERE order_no = ?', [orderNo])).toBe(2);
    await waitFor('the order to be REFUNDED', async () => (await orders.status(orderNo)) === 'REFUNDED');
  });
});

describe('channel failures', () => {
  it('should keep a timed-out refund PENDING, then succeed on the background retry with the same refund number', async () => {
    const { orderNo, paidBy } = await make.paidOrder(Channel.Wechatpay, 4200);
    const refundNo = uniqueId('TO');
    fake.script(refundNo, 'timeout');

    await make.refund({ orderNo, transactionId: paidBy, refundNo });

    const pending = await waitFor('the first attempt to time out', async () => {
      const refund = await refunds.row(refundNo);
      return refund?.last_error !== null && refund;
    });
    expect(pending).toMatchObject({ status: 'PENDING', attempts: 1 });
    expect(String(pending.last_error)).toContain('timed out');
    expect(await orders.status(orderNo)).toBe('REFUNDING');

    const done = await refunds.statusIs(refundNo, 'SUCCEEDED');
    expect(done.attempts).toBe(2);
    expect(fake.calls.filter((c) => c.refundNo === refundNo).map((c) => c.behaviour)).toEqual(['timeout', 'success']);
    expect(await orders.status(orderNo)).toBe('REFUNDED');
  });

  it('should retry after a 5xx (Alipay 20000) and succeed', async () => {
    const { orderNo, paidBy } = await make.paidOrder(Channel.Alipay, 4300);
    const refundNo = uniqueId('SE');
    fake.script(refundNo, 'server-error');

    await make.refund({ orderNo, transactionId: paidBy, refundNo });

    await refunds.statusIs(refundNo, 'SUCCEEDED');
    expect(fake.calls.filter((c) => c.refundNo === refundNo).map((c) => c.behaviour)).toEqual([
      'server-error',
      'success',
    ]);
    expect(await orders.status(orderNo)).toBe('REFUNDED');
  });

  it('should close a refund the channel refuses, give the amount back, and return the order to PAID', async () => {
    const { orderNo, paidBy } = await make.paidOrder(Channel.Wechatpay, 4400);
    const refundNo = uniqueId('RJ');
    fake.script(refundNo, { reject: 'INVALID_REQUEST', message: '订单已全额退款' });

    await make.refund({ orderNo, transactionId: paidBy, refundNo });

    const closed = await refunds.statusIs(refundNo, 'CLOSED');
    expect(String(closed.last_error)).toContain('INVALID_REQUEST');
    expect(await orders.status(orderNo)).toBe('PAID');
    expect(await refunds.reserved(paidBy)).toBe(0);
    expect(fake.callsFor(refundNo)).toBe(1);
  });
});

describe('refund notifications', () => {
  it('should apply a WeChat REFUND.SUCCESS delivered 5 times at once exactly once', async () => {
    const { orderNo, paidBy } = await make.paidOrder(Channel.Wechatpay, 1000);
    const refundNo = uniqueId('PR');
    fake.script(refundNo, 'processing');
    await make.refund({ orderNo, transactionId: paidBy, amount: 400, refundNo });
    const processing = await refunds.statusIs(refundNo, 'PROCESSING');
    expect(await orders.status(orderNo)).toBe('REFUNDING');

    // WeChat signs each sending afresh: five deliveries, not one replayed.
    const notice = { orderNo, transactionId: paidBy, refundNo, channelRefundId: String(processing.channel_refund_id) };
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, () => make.wechatpayRefundNotice({ ...notice, total: 1000, refund: 400 })),
    );

    expect(outcomes.sort()).toEqual(['DUPLICATE', 'DUPLICATE', 'DUPLICATE', 'DUPLICATE', 'REFUND_SUCCEEDED']);
    expect(await refunds.row(refundNo)).toMatchObject({ status: 'SUCCEEDED' });
    expect(await orders.status(orderNo)).toBe('PARTIALLY_REFUNDED');
    expect(await orders.history(orderNo)).toEqual([
      '->WAIT_PAY',
      'WAIT_PAY>PAID',
      'PAID>REFUNDING',
      'REFUNDING>PARTIALLY_REFUNDED',
    ]);
    expect(await refunds.succeededEvents(orderNo)).toBe(1);
    expect((await refunds.deliveries(orderNo)).sort()).toEqual([
      'REFUND.SUCCESS DUPLICATE',
      'REFUND.SUCCESS DUPLICATE',
      'REFUND.SUCCESS DUPLICATE',
      'REFUND.SUCCESS DUPLICATE',
      'REFUND.SUCCESS REFUND_SUCCEEDED',
    ]);
    expect(fake.callsFor(refundNo)).toBe(1);
  });

  it('should settle an Alipay refund by its notification while the API call is still unanswered', async () => {
    const { orderNo, paidBy } = await make.paidOrder(Channel.Alipay, 600);
    const refundNo = uniqueId('AN');
    fake.script(refundNo, 'timeout');
    await make.refund({ orderNo, transactionId: paidBy, refundNo });
    await waitFor('the channel call', () => fake.callsFor(refundNo) === 1);
    const answeredBefore = await refundCallsAnswered();

    const notice = make.alipayRefundNotification({ orderNo, transactionId: paidBy, refundNo, total: 600, refund: 600 });
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => make.settle(notice)));

    expect(outcomes.sort()).toEqual(['DUPLICATE', 'DUPLICATE', 'DUPLICATE', 'DUPLICATE', 'REFUND_SUCCEEDED']);
    expect(await refunds.row(refundNo)).toMatchObject({ status: 'SUCCEEDED' });
    expect(await orders.status(orderNo)).toBe('REFUNDED');
    // The timed-out call is not sent again: the refund is final. Once the call's timeout has been
    // counted (its answer recorded, or not) and the refund's next attempt time, whatever it now is,
    // has passed, whole rounds of the retry worker would have sent it again.
    await waitFor('the timed-out call to be answered', async () => (await refundCallsAnswered()) > answeredBefore);
    const { next_attempt_at: nextAttemptAt } = (await refunds.row(refundNo))!;
    const dueAt = nextAttemptAt ? new Date(nextAttemptAt as string).getTime() : 0;
    await waitFor('the refund to be due again, were it still to be sent', () => Date.now() > dueAt, 30_000);
    await roundsFrom(ctx.get(RefundRetryWorker))('the refund was due again');
    expect(fake.callsFor(refundNo)).toBe(1);
    expect(await refunds.row(refundNo)).toMatchObject({ status: 'SUCCEEDED', attempts: 1 });
  });

  it('should ask WeChat Pay about a PROCESSING refund whose notification does not come, and settle it', async () => {
    const { orderNo, paidBy } = await make.paidOrder(Channel.Wechatpay, 1500);
    const refundNo = uniqueId('QY');
    fake.script(refundNo, 'processing');
    fake.scriptQuery(refundNo, 'server-error');
    await make.refund({ orderNo, transactionId: paidBy, refundNo });
    await refunds.statusIs(refundNo, 'PROCESSING');
    await waitFor('two queries (a 5xx, then PROCESSING)', () => fake.queriesFor(refundNo) >= 2);
    expect(await refunds.row(refundNo)).toMatchObject({ status: 'PROCESSING' });

    fake.settle(refundNo, 'SUCCESS');

    await refunds.statusIs(refundNo, 'SUCCEEDED');
    expect(fake.queries.filter((q) => q.refundNo === refundNo).map((q) => q.answered)).toEqual([
      'server-error',
      ...Array<string>(fake.queriesFor(refundNo) - 2).fill('PROCESSING'),
      'SUCCESS',
    ]);
    expect(fake.callsFor(refundNo)).toBe(1);
    expect(await orders.status(orderNo)).toBe('REFUNDED');
  });
});

/** A WeChat refund accepted as PROCESSING, for the tests of what comes after. */
async function processingWechatpayRefund(amount: number, refundAmount = amount) {
  const { orderNo, paidBy } = await make.paidOrder(Channel.Wechatpay, amount);
  const refundNo = uniqueId('AB');
  fake.script(refundNo, 'processing');
  await make.refund({ orderNo, transactionId: paidBy, amount: refundAmount, refundNo });
  const processing = await refunds.statusIs(refundNo, 'PROCESSING');
  const notice = (status: 'SUCCESS' | 'CLOSED' | 'ABNORMAL') =>
    make.wechatpayRefundNotice({
      orderNo,
      transactionId: paidBy,
      refundNo,
      channelRefundId: String(processing.channel_refund_id),
      status,
      total: amount,
      refund: refundAmount,
    });
  return { orderNo, paidBy, refundNo, notice };
}

describe('an ABNORMAL refund', () => {
  it('should keep the order REFUNDING with the amount reserved, then settle on the later REFUND.SUCCESS', async () => {
    const { orderNo, paidBy, refundNo, notice } = await processingWechatpayRefund(2000, 2000);

    expect(await notice('ABNORMAL')).toBe('REFUND_ABNORMAL');
    expect(await notice('ABNORMAL')).toBe('DUPLICATE');

    expect(await refunds.row(refundNo)).toMatchObject({ status: 'ABNORMAL', completed_at: null });
    expect(await orders.status(orderNo)).toBe('REFUNDING');
    expect(await refunds.reserved(paidBy)).toBe(2000);

    expect(await notice('SUCCESS')).toBe('REFUND_SUCCEEDED');

    expect(await refunds.row(refundNo)).toMatchObject({ status: 'SUCCEEDED' });
    expect(await orders.status(orderNo)).toBe('REFUNDED');
    expect(await refunds.reserved(paidBy)).toBe(2000);
    expect(await refunds.deliveries(orderNo)).toEqual([
      'REFUND.ABNORMAL REFUND_ABNORMAL',
      'REFUND.ABNORMAL DUPLICATE',
      'REFUND.SUCCESS REFUND_SUCCEEDED',
    ]);
    expect(await refunds.succeededEvents(orderNo)).toBe(1);
  });

  it('should give the amount back and return the order to PAID on a later REFUND.CLOSED', async () => {
    const { orderNo, paidBy, refundNo, notice } = await processingWechatpayRefund(1800, 600);
    expect(await notice('ABNORMAL')).toBe('REFUND_ABNORMAL');
    expect(await refunds.reserved(paidBy)).toBe(600);

    expect(await notice('CLOSED')).toBe('REFUND_CLOSED');

    expect(await refunds.row(refundNo)).toMatchObject({ status: 'CLOSED' });
    expect(await orders.status(orderNo)).toBe('PAID');
    expect(await refunds.reserved(paidBy)).toBe(0);
    expect(await refunds.deliveries(orderNo)).toEqual([
      'REFUND.ABNORMAL REFUND_ABNORMAL',
      'REFUND.CLOSED REFUND_CLOSED',
    ]);
  });

  it('should keep asking WeChat Pay about it, and settle it when the query finds it SUCCESS', async () => {
    const { orderNo, refundNo } = await processingWechatpayRefund(1700);
    fake.settle(refundNo, 'ABNORMAL');
    await refunds.statusIs(refundNo, 'ABNORMAL');
    const queriesWhenAbnormal = fake.queriesFor(refundNo);
    await waitFor('another query of the ABNORMAL refund', () => fake.queriesFor(refundNo) > queriesWhenAbnormal);
    expect(await refunds.row(refundNo)).toMatchObject({ status: 'ABNORMAL' });

    fake.settle(refundNo, 'SUCCESS');

    await refunds.statusIs(refundNo, 'SUCCEEDED');
    expect(await orders.status(orderNo)).toBe('REFUNDED');
    expect(fake.callsFor(refundNo)).toBe(1);
  });
});

describe('a refund the channel accepted, then has no record of', () => {
  it.each([
    // Alipay: answered 10000 without fund_change=Y, its queries find no refund_status.
    { channel: Channel.Alipay, accepted: 'unconfirmed' as const, queried: 'NO_REFUND', amount: 3100 },
    // WeChat Pay: answered PROCESSING, its queries find 404 RESOURCE_NOT_EXISTS.
    { channel: Channel.Wechatpay, accepted: 'processing-lost' as const, queried: 'RESOURCE_NOT_EXISTS', amount: 2700 },
  ])(
    '$channel: should ask about it, and send it again under the same number once the queries still find no refund after the max age',
    async ({ channel, accepted: acceptedAs, queried, amount }) => {
      const { orderNo, paidBy } = await make.paidOrder(channel, amount);
      const refundNo = uniqueId('UC');
      fake.script(refundNo, acceptedAs);

      await make.refund({ orderNo, transactionId: paidBy, refundNo });
      const accepted = await refunds.statusIs(refundNo, 'PROCESSING');
      expect(accepted.accepted_at).not.toBeNull();

      const done = await refunds.statusIs(refundNo, 'SUCCEEDED');

      expect(fake.calls.filter((c) => c.refundNo === refundNo).map((c) => c.behaviour)).toEqual([
        acceptedAs,
        'success',
      ]);
      const queries = fake.queries.filter((q) => q.refundNo === refundNo).map((q) => q.answered);
      expect(queries.length).toBeGreaterThanOrEqual(1);
      expect(new Set(queries)).toEqual(new Set([queried]));
      const resentAfterMs = (done.completed_at as Date).getTime() - (accepted.accepted_at as Date).getTime();
      expect(resentAfterMs).toBeGreaterThanOrEqual(PROCESSING_MAX_AGE_S * 1000);
      expect(await orders.status(orderNo)).toBe('REFUNDED');
    },
  );
});

/** Waits until the refund is no longer in flight (PENDING or PROCESSING), and answers its row. */
function refundSettled(refundNo: string): Promise<Record<string, unknown>> {
  return waitFor(`refund ${refundNo} to settle`, async () => {
    const refund = await refunds.row(refundNo);
    return refund && !['PENDING', 'PROCESSING'].includes(String(refund.status)) && refund;
  });
}

describe('a refund the channel made, whose answer was lost', () => {
  it.each([
    { channel: Channel.Wechatpay, amount: 5100 },
    { channel: Channel.Alipay, amount: 5200 },
  ])(
    '$channel: should ask about it instead of sending it again, end SUCCEEDED, and refuse a second full refund',
    async ({ channel, amount }) => {
      const { orderNo, paidBy } = await make.paidOrder(channel, amount);
      const refundNo = uniqueId('LA');
      // Should the refund be sent again, the channel refuses the re-send: a refusal that says nothing of the first.
      fake.script(refundNo, 'answer-lost', { reject: 'INVALID_REQUEST', message: '订单已全额退款' });

      await make.refund({ orderNo, transactionId: paidBy, refundNo });

      expect(await refundSettled(refundNo)).toMatchObject({ status: 'SUCCEEDED' });
      const second = await failure(make.refund({ orderNo, transactionId: paidBy, refundNo: uniqueId('LB') }));
      expect(second).toMatchObject({ code: 'OverRefund', status: 422 });
      expect(fake.refundsAtChannel(channel, paidBy)).toBe(1);
      expect(fake.calls.filter((c) => c.transactionId === paidBy).map((c) => c.behaviour)).toEqual(['answer-lost']);
      expect(fake.queriesFor(refundNo)).toBeGreaterThanOrEqual(1);
      expect(await refunds.reserved(paidBy)).toBe(amount);
      expect(await orders.status(orderNo)).toBe('REFUNDED');
    },
  );
});

describe('a re-send the channel refuses', () => {
  it('should close the refund only once the channel says it has no refund under its number', async () => {
    const { orderNo, paidBy } = await make.paidOrder(Channel.Wechatpay, 5300);
    const refundNo = uniqueId('RR');
    fake.script(refundNo, 'timeout', { reject: 'INVALID_REQUEST', message: 'refused' });

    await make.refund({ orderNo, transactionId: paidBy, refundNo });

    const closed = await refundSettled(refundNo);
    expect(closed).toMatchObject({ status: 'CLOSED', unconfirmed_send: null });
    expect(String(closed.last_error)).toContain('INVALID_REQUEST');
    expect(fake.calls.filter((c) => c.refundNo === refundNo).map((c) => c.behaviour)).toEqual([
      'timeout',
      'reject:INVALID_REQUEST',
    ]);
    // Asked before the re-send, and again after its refusal: both found no refund under the number.
    expect(fake.queries.filter((q) => q.refundNo === refundNo).map((q) => q.answered)).toEqual([
      'RESOURCE_NOT_EXISTS',
      'RESOURCE_NOT_EXISTS',
    ]);
    expect(String(closed.send_times).split(',')).toHaveLength(2);
    expect(await refunds.reserved(paidBy)).toBe(0);
    expect(await orders.status(orderNo)).toBe('PAID');
  });
});

describe("the channel's word that money left", () => {
  /** A full WeChat refund the channel refused at once: CLOSED, its amount free again. */
  async function closedWechatpayRefund(amount: number) {
    const { orderNo, paidBy } = await make.paidOrder(Channel.Wechatpay, amount);
    const refundNo = uniqueId('CL');
    fake.script(refundNo, { reject: 'INVALID_REQUEST', message: 'refused' });
    await make.refund({ orderNo, transactionId: paidBy, refundNo });
    await refunds.statusIs(refundNo, 'CLOSED');
    expect(await refunds.reserved(paidBy)).toBe(0);
    const success = () =>
      make.wechatpayRefundNotice({ orderNo, transactionId: paidBy, refundNo, total: amount, refund: amount });
    return { orderNo, paidBy, refundNo, success };
  }

  it('should settle a refund recorded CLOSED as SUCCEEDED on a SUCCESS notice, and reserve its amount again', async () => {
    const { orderNo, paidBy, refundNo, success } = await closedWechatpayRefund(4600);

    expect(await success()).toBe('REFUND_SUCCEEDED');

    expect(await refunds.row(refundNo)).toMatchObject({ status: 'SUCCEEDED' });
    expect(await refunds.reserved(paidBy)).toBe(4600);
    expect(await orders.status(orderNo)).toBe('REFUNDED');
    expect(await refunds.succeededEvents(orderNo)).toBe(1);
    expect(await refunds.lateSuccesses(refundNo)).toEqual([
      { refund_no: refundNo, was_status: 'CLOSED', amount: 4600, paid_amount: 4600, refunded_amount: 4600 },
    ]);
    const second = await failure(make.refund({ orderNo, transactionId: paidBy, refundNo: uniqueId('LB') }));
    expect(second).toMatchObject({ code: 'OverRefund', status: 422 });
    expect(await success()).toBe('DUPLICATE');
  });

  it('should say that money left twice when the freed amount was refunded again meanwhile', async () => {
    const { orderNo, paidBy, refundNo, success } = await closedWechatpayRefund(4700);
    const again = await make.refund({ orderNo, transactionId: paidBy, refundNo: uniqueId('RA') });
    await refunds.statusIs(again.refund.refundNo, 'SUCCEEDED');

    expect(await success()).toBe('REFUND_SUCCEEDED');

    expect(await refunds.row(refundNo)).toMatchObject({ status: 'SUCCEEDED' });
    expect(await refunds.reserved(paidBy)).toBe(9400);
    expect(await orders.status(orderNo)).toBe('REFUNDED');
    expect(await refunds.lateSuccesses(refundNo)).toEqual([
      { refund_no: refundNo, was_status: 'CLOSED', amount: 4700, paid_amount: 4700, refunded_amount: 9400 },
    ]);
    const seen = await ctx.get(AdminQueries).order(orderNo);
    expect(seen.refundAnomalies).toEqual([
      expect.objectContaining({
        refundNo,
        wasStatus: 'CLOSED',
        amount: 4700,
        paidAmount: 4700,
        refundedAmount: 9400,
        moneyLeftTwice: true,
      }),
    ]);
  });
});
