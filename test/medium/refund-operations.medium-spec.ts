import { Pool, RowDataPacket } from 'mysql2/promise';
import { register } from 'prom-client';
import { AdminModule } from '../../src/admin/admin.module';
import { AdminQueries } from '../../src/admin/admin.queries';
import { Channel } from '../../src/domain/notification';
import { NotificationIntake } from '../../src/intake/notification-intake';
import { OrderModule } from '../../src/order/order.module';
import { REFUNDS_UNSETTLED } from '../../src/platform/metrics/metrics.module';
import { Refunds } from '../../src/refund/refunds';
import { SettlementModule } from '../../src/settlement/settlement.module';
import { FakePlatform } from '../../tools/simulator/fake-platform';
import { sleep } from '../support/eventually';
import { Factories } from '../support/factories';
import { auditedAs, domainFailure, Medium, MediumContext, startMedium } from '../support/medium';
import { OrderEffects } from '../support/order-effects';
import { RefundEffects } from '../support/refund-effects';
import { count, uniqueId } from '../support/test-app';

/**
 * What operators do with refunds, as services on two replicas of one database: emergency refunds
 * fired at once by two admins, the offline resolution of an ABNORMAL refund, the refund list and
 * the refunds_unsettled gauge. The status codes, tokens, validation and the audit of refused calls
 * are in test/refunds.e2e-spec.ts.
 */
/** Long enough that a new refund is still young when the gauge is first read on a loaded machine (the test checks it was). */
const PROCESSING_MAX_AGE_S = 8;

let setup: Medium;
let fake: FakePlatform;
let replicas: MediumContext[];
let make: Factories;
let pool: Pool;
let orders: OrderEffects;
let refunds: RefundEffects;

beforeAll(async () => {
  // The gauge counts every refund of the database, and the refund worker takes every due one.
  setup = await startMedium(
    {
      REFUND_REQUEST_TIMEOUT_MS: '500',
      REFUND_RETRY_BASE_DELAY_MS: '1000',
      REFUND_RETRY_MAX_DELAY_MS: '2000',
      REFUND_POLL_INTERVAL_MS: '100',
      REFUND_PROCESSING_MAX_AGE_SECONDS: String(PROCESSING_MAX_AGE_S),
    },
    { fake: { hangMs: 2000 }, ownDatabase: true, replicas: 2 },
  );
  ({ fake, replicas, pool } = setup);
  make = setup.makes[0];
  orders = new OrderEffects(pool);
  refunds = new RefundEffects(pool);
});

afterAll(() => setup?.close());

async function row(sql: string, params: unknown[]): Promise<Record<string, unknown> | undefined> {
  const [rows] = await pool.query<RowDataPacket[]>(sql, params);
  return rows[0];
}

/** An emergency refund as the admin route asks for it: the refund and its audit row in one transaction. */
const emergencyRefund = (
  replica: number,
  operatorId: string,
  request: { orderNo: string; transactionId: string; amount?: number; refundNo?: string },
) =>
  replicas[replica]
    .get(Refunds)
    .request(
      { reason: 'money taken twice', ...request },
      operatorId,
      auditedAs(replicas[replica], operatorId, 'EMERGENCY_REFUND', `order:${request.orderNo}`, request),
    );

/** A WeChat refund accepted as PROCESSING, for the tests of what comes after. */
async function processingWechatpayRefund(amount: number) {
  const { orderNo, paidBy } = await make.paidOrder(Channel.Wechatpay, amount);
  const refundNo = uniqueId('AB');
  fake.script(refundNo, 'processing');
  await make.refund({ orderNo, transactionId: paidBy, refundNo });
  const processing = await refunds.statusIs(refundNo, 'PROCESSING');
  const notice = (status: 'SUCCESS' | 'CLOSED' | 'ABNORMAL') =>
    make.wechatpayRefundNotice({
      orderNo,
      transactionId: paidBy,
      refundNo,
      channelRefundId: String(processing.channel_refund_id),
      status,
      total: amount,
      refund: amount,
    });
  return { orderNo, paidBy, refundNo, notice };
}

describe('emergency refund of a duplicate payment', () => {
  it('should make one refund and one channel call when two admins on two replicas fire it 20 times at once', async () => {
    const { orderNo, duplicateBy, amount } = await make.paidOrder(Channel.Wechatpay, 2500, true);
    expect(await refunds.anomalyStatus(duplicateBy)).toBe('OPEN');

    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        emergencyRefund(i % 2, i % 2 ? 'bob' : 'alice', { orderNo, transactionId: duplicateBy }),
      ),
    );

    const refundNos = new Set(answers.map((a) => a.refund.refundNo));
    expect(refundNos.size).toBe(1);
    expect(answers.filter((a) => a.created)).toHaveLength(1);
    const [refundNo] = refundNos;
    expect(answers[0].refund).toMatchObject({
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
    // Who and what the audit row says is the admin route's to write (refunds.e2e-spec.ts reads it);
    // here: each call's row committed with it, carrying the answer the use case gave that call.
    expect(audits).toHaveLength(20);
    const results = audits.map((a) =>
      typeof a.result === 'string' ? (JSON.parse(a.result) as { created: boolean; refundNo: string }) : a.result,
    );
    expect(results.filter((r) => r.created === true)).toHaveLength(1);
    expect(results.every((r) => r.refundNo === refundNo)).toBe(true);
  });
});

describe('a channel without refund credentials', () => {
  it('should refuse the refund as RefundChannelUnavailable (503) and write nothing', async () => {
    const { ALIPAY_APP_PRIVATE_KEY_PATH: _unset, ...env } = setup.platforms.env;
    const noAlipayRefunds = await setup.another(
      () => ({
        ...env,
        ALIPAY_GATEWAY_URL: fake.alipayGatewayUrl,
      }),
      [OrderModule, SettlementModule, AdminModule],
    );
    try {
      const { orderNo, paidBy } = await new Factories(noAlipayRefunds, setup.platforms).paidOrder(Channel.Alipay, 4500);

      const refused = await domainFailure(
        noAlipayRefunds.get(Refunds).request({ orderNo, transactionId: paidBy, reason: 'no keys' }, 'alice'),
      );

      expect(refused).toMatchObject({ code: 'RefundChannelUnavailable', status: 503 });
      expect(refused.message).toContain('ALIPAY_APP_PRIVATE_KEY_PATH');
      expect(await count(pool, 'SELECT COUNT(*) FROM refund WHERE order_no = ?', [orderNo])).toBe(0);
      expect(await orders.status(orderNo)).toBe('PAID');
    } finally {
      await noAlipayRefunds.close();
    }
  });
});

describe('a refund notification for a refund this service never made', () => {
  /** Delivers the bytes as the notify route hands them over, and answers the platform's reply. */
  const receive = (notifyPath: string, headers: Record<string, string>, body: string) =>
    replicas[1].inContext(() =>
      replicas[1]
        .get(NotificationIntake)
        .receive({ notifyPath, headers, body: Buffer.from(body), requestId: uniqueId('R') }),
    );

  it("should be acknowledged with WeChat Pay's 204, changing nothing, logged UNKNOWN_REFUND", async () => {
    const { orderNo, paidBy } = await make.paidOrder(Channel.Wechatpay, 700);
    const notice = make.deliveries.wechatpayRefundNotice({
      outTradeNo: orderNo,
      transactionId: paidBy,
      outRefundNo: uniqueId('CONSOLE'),
      refundId: '50000000382019052709732678859',
      total: 700,
      refund: 700,
    });

    const reply = await receive('wechatpay', notice.headers, notice.body);

    expect(reply.status).toBe(204);
    expect(await orders.status(orderNo)).toBe('PAID');
    expect(await refunds.deliveries(orderNo)).toEqual(['REFUND.SUCCESS UNKNOWN_REFUND']);
  });

  it('should be answered success for Alipay, changing nothing, logged UNKNOWN_REFUND', async () => {
    const { orderNo, paidBy } = await make.paidOrder(Channel.Alipay, 800);
    const form = make.deliveries.alipayRefundNotice({
      outTradeNo: orderNo,
      tradeNo: paidBy,
      totalAmount: '8.00',
      outBizNo: uniqueId('CONSOLE'),
      refundFee: '8.00',
    });

    const reply = await receive('alipay', { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' }, form);

    expect({ status: reply.status, body: reply.body }).toEqual({ status: 200, body: 'success' });
    expect(await orders.status(orderNo)).toBe('PAID');
    expect((await refunds.deliveries(orderNo)).map((d) => d.split(' ')[1])).toEqual(['UNKNOWN_REFUND']);
  });
});

describe('resolving an ABNORMAL refund offline', () => {
  it('should settle it as refunded, audited in the same transaction; a late SUCCESS changes nothing more', async () => {
    const { orderNo, paidBy, refundNo, notice } = await processingWechatpayRefund(1600);
    expect(await notice('ABNORMAL')).toBe('REFUND_ABNORMAL');
    const reason = 'paid by bank transfer';

    const resolved = await replicas[1]
      .get(Refunds)
      .resolveOffline(
        refundNo,
        reason,
        auditedAs(replicas[1], 'bob', 'REFUND_RESOLVED_OFFLINE', `refund:${refundNo}`, { reason }),
      );

    expect(resolved).toMatchObject({ refundNo, status: 'RESOLVED_OFFLINE', amount: 1600 });
    expect(await refunds.row(refundNo)).toMatchObject({ status: 'RESOLVED_OFFLINE' });
    expect(await orders.status(orderNo)).toBe('REFUNDED');
    expect(await refunds.reserved(paidBy)).toBe(1600);
    expect(await refunds.succeededEvents(orderNo)).toBe(1);
    // The row written alongside committed with the change, carrying the use case's answer (who and
    // what it says is the admin route's to write: refunds.e2e-spec.ts reads it).
    const audit = await row('SELECT result FROM admin_audit WHERE target = ?', [`refund:${refundNo}`]);
    const result = audit!.result;
    expect(typeof result === 'string' ? JSON.parse(result) : result).toEqual({
      refundNo,
      status: 'RESOLVED_OFFLINE',
      amount: 1600,
    });

    // The channel's late SUCCESS changes nothing more.
    expect(await notice('SUCCESS')).toBe('DUPLICATE');
    expect(await refunds.row(refundNo)).toMatchObject({ status: 'RESOLVED_OFFLINE' });
    expect((await refunds.deliveries(orderNo)).at(-1)).toBe('REFUND.SUCCESS DUPLICATE');
  });
});

describe('the refund list', () => {
  it('should list refunds newest first, filtered by status, channel and time, page by page', async () => {
    const queries = replicas[0].get(AdminQueries);
    const from = new Date().toISOString();
    const wechat = await processingWechatpayRefund(1100);
    const alipay = await make.paidOrder(Channel.Alipay, 1200);
    const alipayRefundNo = uniqueId('LS');
    await make.refund({ orderNo: alipay.orderNo, transactionId: alipay.paidBy, refundNo: alipayRefundNo });
    await refunds.statusIs(alipayRefundNo, 'SUCCEEDED');
    const later = await processingWechatpayRefund(1300);
    const to = new Date(Date.now() + 1).toISOString();
    const window = { from, to };

    const all = await queries.refunds(window);
    const processing = await queries.refunds({ ...window, status: 'PROCESSING', channel: Channel.Wechatpay });
    const alipays = await queries.refunds({ ...window, channel: Channel.Alipay });
    const first = await queries.refunds({ ...window, limit: 2 });
    const second = await queries.refunds({ ...window, limit: 2, cursor: first.nextCursor! });

    expect(all.items.map((r) => r.refundNo)).toEqual([later.refundNo, alipayRefundNo, wechat.refundNo]);
    expect(all.nextCursor).toBeNull();
    expect(processing.items.map((r) => r.refundNo)).toEqual([later.refundNo, wechat.refundNo]);
    expect(alipays.items).toEqual([
      expect.objectContaining({ refundNo: alipayRefundNo, channel: 'ALIPAY', status: 'SUCCEEDED' }),
    ]);
    expect(first.items.map((r) => r.refundNo)).toEqual([later.refundNo, alipayRefundNo]);
    expect(second).toEqual({ items: [expect.objectContaining({ refundNo: wechat.refundNo })], nextCursor: null });
  });
});

describe('the refunds_unsettled gauge', () => {
  /** The gauge as a scrape reads it: from the database, at that moment. */
  const unsettled = async (channel: string, status: string) => {
    const gauge = await register.getSingleMetric(REFUNDS_UNSETTLED)!.get();
    return gauge.values.find((v) => v.labels.channel === channel && v.labels.status === status)?.value ?? 0;
  };

  it('should count ABNORMAL refunds until they settle', async () => {
    const before = await unsettled('WECHATPAY', 'ABNORMAL');
    const { refundNo, notice } = await processingWechatpayRefund(1000);
    expect(await notice('ABNORMAL')).toBe('REFUND_ABNORMAL');

    expect(await unsettled('WECHATPAY', 'ABNORMAL')).toBe(before + 1);

    expect(await notice('SUCCESS')).toBe('REFUND_SUCCEEDED');
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
