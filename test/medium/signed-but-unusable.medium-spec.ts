import { Pool, RowDataPacket } from 'mysql2/promise';
import { NotifyModule } from '../../src/intake/notify.module';
import { OrderModule } from '../../src/order/order.module';
import { alipayDelivery, alipayTradeParams, yuan } from '../../tools/simulator/platform-signers';
import { Factories } from '../support/factories';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { Intake, replyOf } from '../support/medium-notify';
import { count, TestPlatforms, uniqueId } from '../support/test-app';

/**
 * Deliveries whose signature holds but which must not be applied as they stand: a data error the
 * platform would repeat on every retry, and a captured Alipay notification padded with unsigned
 * empty parameters. Through the notify route's use case (NotificationIntake), on the real
 * database.
 */
let setup: Medium;
let platforms: TestPlatforms;
let ctx: MediumContext;
let make: Factories;
let intake: Intake;
let pool: Pool;

beforeAll(async () => {
  setup = await startMedium({}, { imports: [OrderModule, NotifyModule], fake: false });
  ({ platforms, ctx, make, pool } = setup);
  intake = new Intake(ctx);
});

afterAll(() => setup?.close());

const registeredOrder = async (amount: number) => (await make.order({ orderNo: uniqueId('SU'), amount })).orderNo;

async function effectsOn(orderNo: string) {
  const [[order]] = await pool.query<RowDataPacket[]>('SELECT status FROM payment_order WHERE order_no = ?', [orderNo]);
  const [anomalies] = await pool.query<RowDataPacket[]>(
    'SELECT type, channel, transaction_id, currency FROM payment_anomaly WHERE order_no = ?',
    [orderNo],
  );
  return {
    order: order.status as string,
    payments: await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE order_no = ?', [orderNo]),
    anomalies: anomalies.map((a) => ({ ...a })),
    malformedDeliveries: await count(
      pool,
      "SELECT SUM(1 + replays) FROM callback_delivery WHERE order_no = ? AND outcome = 'MALFORMED_NOTIFICATION'",
      [orderNo],
    ),
  };
}

describe('a signed payment notification with a data error', () => {
  it('should be acked, kept and recorded once as MALFORMED_NOTIFICATION when WeChat Pay sends a 200-character currency three times', async () => {
    const orderNo = await registeredOrder(700);
    const transactionId = uniqueId('T');
    const send = () =>
      intake.wechatpay(
        make.deliveries.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 700, currency: 'C'.repeat(200) }),
      );

    const answers = [await send(), await send(), await send()];

    expect(answers.map((a) => a.status)).toEqual([204, 204, 204]);
    expect(await effectsOn(orderNo)).toEqual({
      order: 'WAIT_PAY',
      payments: 0,
      anomalies: [
        { type: 'MALFORMED_NOTIFICATION', channel: 'WECHATPAY', transaction_id: transactionId, currency: 'XXX' },
      ],
      malformedDeliveries: 3,
    });
  });

  it('should record the money anomaly when a well-formed notification of the same transaction follows, instead of failing on the malformed note', async () => {
    const orderNo = await registeredOrder(700);
    const transactionId = uniqueId('T');
    const malformed = await intake.wechatpay(
      make.deliveries.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 700, currency: 'C'.repeat(200) }),
    );
    const underpaid = () =>
      intake.wechatpay(make.deliveries.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 600 }));

    const answers = [malformed, await underpaid(), await underpaid()];

    expect(answers.map((a) => a.status)).toEqual([204, 204, 204]);
    expect(await effectsOn(orderNo)).toEqual({
      order: 'WAIT_PAY',
      payments: 1,
      anomalies: [{ type: 'AMOUNT_MISMATCH', channel: 'WECHATPAY', transaction_id: transactionId, currency: 'CNY' }],
      malformedDeliveries: 1,
    });
  });

  it('should be acked and recorded once when Alipay sends a trade_no of 65 characters, kept to 64', async () => {
    const orderNo = await registeredOrder(800);
    const tradeNo = `T${'9'.repeat(64)}`;
    const send = () =>
      intake.alipay(make.deliveries.alipayPayment({ outTradeNo: orderNo, tradeNo, totalAmount: yuan(800) }));

    const answers = [await send(), await send()];

    expect(answers.map((a) => [a.status, a.body])).toEqual([
      [200, 'success'],
      [200, 'success'],
    ]);
    expect(await effectsOn(orderNo)).toEqual({
      order: 'WAIT_PAY',
      payments: 0,
      anomalies: [
        { type: 'MALFORMED_NOTIFICATION', channel: 'ALIPAY', transaction_id: tradeNo.slice(0, 64), currency: 'XXX' },
      ],
      malformedDeliveries: 2,
    });
  });

  it('should still be refused, and write nothing, when the signature does not hold', async () => {
    const orderNo = await registeredOrder(900);
    const delivery = make.deliveries.wechatpayPayment({
      outTradeNo: orderNo,
      transactionId: uniqueId('T'),
      total: 900,
      currency: 'C'.repeat(200),
    });
    const forged = {
      headers: { ...delivery.headers, 'wechatpay-signature': Buffer.alloc(256).toString('base64') },
      body: delivery.body,
    };

    expect((await intake.wechatpay(forged)).status).toBe(401);
    expect(await effectsOn(orderNo)).toEqual({ order: 'WAIT_PAY', payments: 0, anomalies: [], malformedDeliveries: 0 });
  });
});

describe('a captured Alipay notification replayed with unsigned empty parameters appended', () => {
  it('should be counted as a replay of the first delivery, its bytes stored once and without the padding', async () => {
    const orderNo = await registeredOrder(1200);
    const tradeNo = uniqueId('T');
    const genuine = alipayDelivery(
      platforms.alipay.privateKey,
      alipayTradeParams({
        appId: platforms.alipay.appId,
        sellerId: platforms.alipay.sellerId,
        outTradeNo: orderNo,
        tradeNo,
        totalAmount: yuan(1200),
      }),
    );
    const padding = (n: number) => Array.from({ length: 6000 }, (_, i) => `&p${n}x${i}=`).join('');
    // Within the notify route's body limit, so that the route would hand every one to the use case.
    expect(genuine.length + padding(9).length).toBeLessThan(64 * 1024);

    const answers = [await intake.alipay(genuine)];
    for (let n = 0; n < 5; n++) answers.push(await intake.alipay(genuine + padding(n)));

    expect(answers.map(replyOf)).toEqual(Array(6).fill({ status: 200, body: 'success' }));
    const [rows] = await pool.query<RowDataPacket[]>(
      'SELECT replays, LENGTH(raw_body) AS bytes, outcome FROM callback_delivery WHERE transaction_id = ? ORDER BY id',
      [tradeNo],
    );
    expect(rows.map((r) => ({ ...r }))).toEqual([{ replays: 5, bytes: Buffer.byteLength(genuine), outcome: 'PAID' }]);
    expect(
      await count(pool, "SELECT COUNT(*) FROM payment_order WHERE order_no = ? AND status = 'PAID'", [orderNo]),
    ).toBe(1);
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE transaction_id = ?', [tradeNo])).toBe(1);
  });
});
