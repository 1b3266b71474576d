import { Pool, RowDataPacket } from 'mysql2/promise';
import { AdminModule } from '../../src/admin/admin.module';
import { writeV2Xml } from '../../src/channels/wechatpay/v2/wechatpay-v2.xml';
import { NotifyModule } from '../../src/intake/notify.module';
import { OrderModule } from '../../src/order/order.module';
import { Refunds } from '../../src/refund/refunds';
import { FakePlatform } from '../../tools/simulator/fake-platform';
import { randomAlphanumeric } from '../../tools/simulator/platform-signers';
import {
  v2PaymentFields,
  v2PaymentNotification,
  V2Payment,
  v2RefundNotification,
} from '../../tools/simulator/wechatpay/v2/v2-notifications';
import { eventually } from '../support/eventually';
import { Factories } from '../support/factories';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { receive, Reply, XML } from '../support/medium-dialects';
import { inParallel, paymentEffects, StormPayment } from '../support/payment-storm';
import { count as countRows, TestPlatforms, uniqueId } from '../support/test-app';

/**
 * WeChat Pay APIv2 notifications (the /notify/wechatpay-v2 use case) as services on the real
 * database, without HTTP, for an account with both an APIv3 setup (its API calls go to the fake
 * platform's v3) and an APIv2 key. The reply on the wire and
 * what a viewer sees of a delivery are in test/channel-acks.e2e-spec.ts.
 */
const ACK = '<xml><return_code><![CDATA[SUCCESS]]></return_code><return_msg><![CDATA[OK]]></return_msg></xml>';
const API_V2_KEY = randomAlphanumeric(32);

let setup: Medium;
let platforms: TestPlatforms;
let fake: FakePlatform;
let ctx: MediumContext;
let make: Factories;
let pool: Pool;

beforeAll(async () => {
  // The refund worker takes every due refund of its database: other suites' would come first.
  setup = await startMedium(
    { WECHATPAY_APIV2_KEY: API_V2_KEY },
    { imports: [OrderModule, NotifyModule, AdminModule], ownDatabase: true },
  );
  ({ platforms, fake, ctx, make, pool } = setup);
});

afterAll(() => setup?.close());

const postV2 = (xml: string, contentType = 'text/xml') =>
  receive(ctx, 'wechatpay-v2', xml, { ...XML, 'content-type': contentType });

function payment(orderNo: string, transactionId: string, totalFee: number): V2Payment {
  const { wechatpay } = platforms;
  return {
    mchid: wechatpay.mchid,
    appid: wechatpay.appid,
    outTradeNo: orderNo,
    transactionId,
    totalFee,
    paidAt: new Date(),
  };
}

const registeredOrder = async (amount: number) => (await make.order({ orderNo: uniqueId('V2'), amount })).orderNo;

const count = (sql: string, params: unknown[]) => countRows(pool, sql, params);
const rows = async (sql: string, params: unknown[]) => (await pool.query<RowDataPacket[]>(sql, params))[0];
const orderStatus = async (orderNo: string) =>
  (await rows('SELECT status FROM payment_order WHERE order_no = ?', [orderNo]))[0]?.status as string;
const refundStatus = async (refundNo: string) =>
  (await rows('SELECT status FROM refund WHERE refund_no = ?', [refundNo]))[0]?.status as string;
const outcomes = async (orderNo: string) =>
  (await rows('SELECT outcome FROM callback_delivery WHERE order_no = ? ORDER BY outcome', [orderNo])).map(
    (r) => r.outcome as string,
  );

/** Nothing at all of this order's notifications was written: no delivery, no payment, no anomaly. */
async function nothingWritten(orderNo: string): Promise<void> {
  expect(await orderStatus(orderNo)).toBe('WAIT_PAY');
  expect(await count('SELECT COUNT(*) FROM callback_delivery WHERE order_no = ?', [orderNo])).toBe(0);
  expect(await count('SELECT COUNT(*) FROM payment_callback WHERE order_no = ?', [orderNo])).toBe(0);
  expect(await count('SELECT COUNT(*) FROM payment_anomaly WHERE order_no = ?', [orderNo])).toBe(0);
}

describe('WeChat Pay APIv2 notifications', () => {
  it('should pay each order exactly once when its v2 notification arrives 6 times at once', async () => {
    const payments: StormPayment[] = Array.from({ length: 40 }, (_, i) => ({
      orderNo: uniqueId('V2S'),
      channel: 'WECHATPAY',
      transactionId: uniqueId('T'),
      amount: 100 + i,
    }));
    await inParallel(payments, 10, async (p) => {
      await make.order({ orderNo: p.orderNo, amount: p.amount });
    });
    const answers: Reply[] = [];
    await inParallel(payments, 10, async (p) => {
      const signType = p.amount % 2 === 0 ? 'MD5' : 'HMAC-SHA256';
      const sent = Array.from({ length: 6 }, () =>
        postV2(v2PaymentNotification(payment(p.orderNo, p.transactionId, p.amount), API_V2_KEY, signType)),
      );
      answers.push(...(await Promise.all(sent)));
    });

    expect(answers.filter((a) => a.status !== 200 || a.body !== ACK)).toEqual([]);
    expect(await paymentEffects(pool, payments)).toMatchObject({
      paidOrders: 40,
      ordersNotExactlyOnce: [],
      paidTransitions: 40,
      outboxEvents: 40,
      callbacks: 40,
      deliveries: 240,
      paidDeliveries: 40,
      anomalies: 0,
    });
  });

  it('should pay with an MD5 and with an HMAC-SHA256 notification, keeping the raw XML', async () => {
    for (const signType of ['MD5', 'HMAC-SHA256'] as const) {
      const orderNo = await registeredOrder(1999);
      const xml = v2PaymentNotification(payment(orderNo, uniqueId('T'), 1999), API_V2_KEY, signType);
      const answer = await postV2(xml);
      expect(answer).toEqual({ status: 200, body: ACK });
      expect(await orderStatus(orderNo)).toBe('PAID');
      const [delivery] = await rows('SELECT raw_body, event_type, outcome FROM callback_delivery WHERE order_no = ?', [
        orderNo,
      ]);
      expect({ ...delivery, raw_body: Buffer.from(delivery.raw_body as Buffer).toString('utf8') }).toEqual({
        raw_body: xml,
        event_type: 'V2.PAY.SUCCESS',
        outcome: 'PAID',
      });
    }
  });

  it('should refuse a wrong key and a tampered field with a v2 FAIL that says why, writing nothing', async () => {
    const orderNo = await registeredOrder(1999);
    const forged = v2PaymentNotification(payment(orderNo, uniqueId('T'), 1999), randomAlphanumeric(32));
    const wrongKey = await postV2(forged);
    expect(wrongKey.status).toBe(401);
    expect(wrongKey.body).toMatch(
      /^<xml><return_code><!\[CDATA\[FAIL\]\]><\/return_code><return_msg><!\[CDATA\[sign does not verify/,
    );

    const fields = v2PaymentFields(payment(orderNo, uniqueId('T'), 1999), API_V2_KEY);
    const tampered = await postV2(writeV2Xml({ ...fields, total_fee: '1' }));
    expect(tampered.status).toBe(401);
    expect(tampered.body).toContain('FAIL');
    expect(wrongKey.body).not.toContain(API_V2_KEY);
    await nothingWritten(orderNo);
  });

  it('should take a v2 and a v3 notification of the same payment as one payment and one duplicate', async () => {
    const orderNo = await registeredOrder(2500);
    const transactionId = uniqueId('T');
    const v3Delivery = make.deliveries.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 2500 });
    const [v2, v3] = await Promise.all([
      postV2(v2PaymentNotification(payment(orderNo, transactionId, 2500), API_V2_KEY)),
      receive(ctx, 'wechatpay', v3Delivery.body, { 'content-type': 'application/json', ...v3Delivery.headers }),
    ]);
    expect([v2.status, v2.body, v3.status]).toEqual([200, ACK, 204]);
    expect(await orderStatus(orderNo)).toBe('PAID');
    expect(await outcomes(orderNo)).toEqual(['DUPLICATE', 'PAID']);
    expect(await count('SELECT COUNT(*) FROM payment_callback WHERE transaction_id = ?', [transactionId])).toBe(1);
    expect(
      await count("SELECT COUNT(*) FROM outbox_event WHERE order_no = ? AND type = 'payment.succeeded'", [orderNo]),
    ).toBe(1);
  });

  it('should record a v2 payment of another amount as an anomaly, not a payment', async () => {
    const orderNo = await registeredOrder(3000);
    const answer = await postV2(v2PaymentNotification(payment(orderNo, uniqueId('T'), 2999), API_V2_KEY));
    expect(answer.body).toBe(ACK);
    expect(await orderStatus(orderNo)).toBe('WAIT_PAY');
    expect(await count('SELECT COUNT(*) FROM payment_anomaly WHERE order_no = ?', [orderNo])).toBe(1);
  });

  it('should refuse a DOCTYPE (XXE), malformed XML and an unknown merchant with 4xx v2 XML, writing nothing', async () => {
    const orderNo = await registeredOrder(1999);
    const signed = v2PaymentNotification(payment(orderNo, uniqueId('T'), 1999), API_V2_KEY);
    const xxe = `<?xml version="1.0"?><!DOCTYPE xml [<!ENTITY x SYSTEM "file:///etc/passwd">]>${signed.replace('<openid>', '<openid>&x;')}`;
    for (const [body, status] of [
      [xxe, 400],
      [signed.slice(0, -6), 400],
      [signed.replace('<mch_id><![CDATA[1900009191', '<mch_id><![CDATA[1900000001'), 401],
    ] as const) {
      const answer = await postV2(body, 'application/xml');
      expect(answer.status).toBe(status);
      expect(answer.body).toMatch(
        /^<xml><return_code><!\[CDATA\[FAIL\]\]><\/return_code><return_msg><!\[CDATA\[.+\]\]><\/return_msg><\/xml>$/,
      );
    }
    await nothingWritten(orderNo);
  });

  it('should settle a refund from its v2 refund notification, once, and ignore one naming another amount', async () => {
    const amount = 1800;
    const orderNo = await registeredOrder(amount);
    const transactionId = uniqueId('T');
    expect((await postV2(v2PaymentNotification(payment(orderNo, transactionId, amount), API_V2_KEY))).body).toBe(ACK);
    const refundNo = uniqueId('RV2');
    fake.script(refundNo, 'processing');
    await ctx
      .get(Refunds)
      .request({ orderNo, transactionId, amount, refundNo, reason: 'v2 refund notification test' }, 'alice');
    let refundId = '';
    await eventually(
      'the refund is PROCESSING at the channel (v3 API: the account has both)',
      async () => {
        const [refund] = await rows('SELECT status, channel_refund_id FROM refund WHERE refund_no = ?', [refundNo]);
        refundId = String(refund?.channel_refund_id ?? '');
        return refund?.status === 'PROCESSING';
      },
      15_000,
    );
    const notice = (refundFee: number) =>
      v2RefundNotification(
        {
          mchid: platforms.wechatpay.mchid,
          appid: platforms.wechatpay.appid,
          outRefundNo: refundNo,
          refundId,
          outTradeNo: orderNo,
          transactionId,
          refundFee,
          totalFee: amount,
        },
        API_V2_KEY,
      );

    expect((await postV2(notice(amount - 1))).body).toBe(ACK);
    expect(await refundStatus(refundNo)).toBe('PROCESSING');

    const answers = await Promise.all([0, 1, 2, 3].map(() => postV2(notice(amount))));
    expect(answers.map((a) => a.body)).toEqual([ACK, ACK, ACK, ACK]);
    expect(await refundStatus(refundNo)).toBe('SUCCEEDED');
    expect(await orderStatus(orderNo)).toBe('REFUNDED');
    const refundOutcomes = (
      await rows(
        "SELECT outcome FROM callback_delivery WHERE order_no = ? AND event_type = 'V2.REFUND.SUCCESS' ORDER BY id",
        [orderNo],
      )
    ).map((r) => r.outcome as string);
    expect(refundOutcomes.sort()).toEqual([
      'DUPLICATE',
      'DUPLICATE',
      'DUPLICATE',
      'REFUND_SUCCEEDED',
      'UNKNOWN_REFUND',
    ]);
  });
});
