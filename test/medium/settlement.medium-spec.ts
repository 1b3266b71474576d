import { Pool } from 'mysql2/promise';
import { Channel, VerifiedNotification } from '../../src/domain/notification';
import { OrderModule } from '../../src/order/order.module';
import { SettlementModule } from '../../src/settlement/settlement.module';
import { TradeModule } from '../../src/trade/trade.module';
import { Factories } from '../support/factories';
import { Medium, startMedium } from '../support/medium';
import { NotifyTestChannel } from '../support/notify-channels';
import { PaymentEffects } from '../support/payment-effects';
import { count, notificationsOnly, TestPlatforms, uniqueId } from '../support/test-app';

/**
 * The settlement use case on the real database, without HTTP: notifications signed with the
 * platforms' real keys, verified by the channels' real verifiers, applied by Settlement as the
 * notify route applies them (one transaction, then the delivery log). The replies the
 * platforms get, the refusals of bad signatures and the order API are in
 * test/payment-outcomes.e2e-spec.ts.
 */
let setup: Medium;
let platforms: TestPlatforms;
let make: Factories;
let pool: Pool;
let db: PaymentEffects;

beforeAll(async () => {
  setup = await startMedium((p) => notificationsOnly(p.env), {
    imports: [OrderModule, SettlementModule, TradeModule],
    fake: false,
  });
  ({ platforms, make, pool } = setup);
  db = new PaymentEffects(pool);
});

afterAll(() => setup?.close());

/** Each channel's notifications that take no money, by their status (WeChat Pay's trade_state, Alipay's trade_status). */
const NOT_PAYING: Record<NotifyTestChannel, Array<[name: string, status: string]>> = {
  [Channel.Wechatpay]: [['a TRANSACTION.SUCCESS event whose trade_state is NOTPAY', 'NOTPAY']],
  [Channel.Alipay]: [
    ['WAIT_BUYER_PAY', 'WAIT_BUYER_PAY'],
    ['TRADE_CLOSED', 'TRADE_CLOSED'],
  ],
};

const registerOrder = async (amount: number) => (await make.order({ amount })).orderNo;
const body = (n: VerifiedNotification) => n.rawBody.toString('utf8');

describe.each((Object.keys(NOT_PAYING) as NotifyTestChannel[]).map((c) => [c] as const))('%s', (name) => {
  const payment = (orderNo: string, transactionId: string, amount: number) =>
    make.paymentNotification(name, { orderNo, transactionId, amount });

  it('should acknowledge later deliveries of the same payment without a second effect, and count them', async () => {
    const orderNo = await registerOrder(1999);
    const transactionId = uniqueId('T');
    const first = payment(orderNo, transactionId, 1999);
    expect(await make.settle(first)).toBe('PAID');

    // The platform's retry is a new delivery of the same transaction: new signature (WeChat: new nonce,
    // timestamp and envelope id; Alipay: new notify_id), and a lost ack may also make it re-send identical bytes.
    const resigned = payment(orderNo, transactionId, 1999);
    expect(body(resigned)).not.toBe(body(first));
    expect(await make.settle(resigned)).toBe('DUPLICATE');
    expect(await make.settle(first)).toBe('DUPLICATE');

    expect(await db.effects(name, transactionId, orderNo)).toEqual({
      callbacks: 1,
      deliveries: 3,
      anomalies: 0,
      outbox: 1,
    });
    expect(await db.deliveryCount(name, transactionId)).toBe(3);
    // Both channels' identical re-sends are replays, counted on the first row.
    const rows = await db.deliveryRows(name, transactionId);
    expect(rows.map((r) => [r.outcome, r.replays])).toEqual([
      ['PAID', 1],
      ['DUPLICATE', 0],
    ]);
    expect(rows.map((r) => r.raw_body.toString('utf8'))).toEqual([body(first), body(resigned)]);
    expect(await db.orderRow(orderNo)).toMatchObject({ status: 'PAID', transaction_id: transactionId });
  });

  it.each(NOT_PAYING[name])(
    'should record and acknowledge %s without paying, and still pay on the later paying notification of the same transaction',
    async (_variant, status) => {
      const orderNo = await registerOrder(500);
      const transactionId = uniqueId('T');
      const notPaying = make.paymentNotification(name, { orderNo, transactionId, amount: 500, status });

      expect(await make.settle(notPaying)).toBe('NOT_PAYING');
      expect(await make.settle(notPaying)).toBe('NOT_PAYING');

      expect(await db.effects(name, transactionId, orderNo)).toEqual({
        callbacks: 0,
        deliveries: 2,
        anomalies: 0,
        outbox: 0,
      });
      expect(await db.outcomes(name, transactionId)).toEqual(['NOT_PAYING', 'NOT_PAYING']);
      const rows = await db.deliveryRows(name, transactionId);
      expect(rows).toHaveLength(1);
      expect(rows[0].raw_body.toString('utf8')).toBe(body(notPaying));
      expect((await db.orderRow(orderNo))?.status).toBe('WAIT_PAY');

      expect(await make.settle(payment(orderNo, transactionId, 500))).toBe('PAID');

      expect(await db.orderRow(orderNo)).toMatchObject({
        status: 'PAID',
        channel: name,
        transaction_id: transactionId,
      });
      expect(await db.effects(name, transactionId, orderNo)).toEqual({
        callbacks: 1,
        deliveries: 3,
        anomalies: 0,
        outbox: 1,
      });
      expect(await db.outcomes(name, transactionId)).toEqual(['NOT_PAYING', 'NOT_PAYING', 'PAID']);
      expect(await db.deliveryCount(name, transactionId)).toBe(1);
    },
  );

  it('should record every non-paying notification in order, then pay once', async () => {
    const orderNo = await registerOrder(700);
    const transactionId = uniqueId('T');
    for (const [, status] of NOT_PAYING[name]) {
      expect(await make.payment(name, { orderNo, transactionId, amount: 700, status })).toBe('NOT_PAYING');
    }
    expect(await make.payment(name, { orderNo, transactionId, amount: 700 })).toBe('PAID');

    expect(await db.outcomes(name, transactionId)).toEqual([...NOT_PAYING[name].map(() => 'NOT_PAYING'), 'PAID']);
    expect(await db.effects(name, transactionId, orderNo)).toMatchObject({ callbacks: 1, anomalies: 0, outbox: 1 });
  });

  it('should not pay an order whose amount differs, record one AMOUNT_MISMATCH anomaly, and acknowledge', async () => {
    const orderNo = await registerOrder(10000);
    const transactionId = uniqueId('T');

    expect(await make.payment(name, { orderNo, transactionId, amount: 100 })).toBe('AMOUNT_MISMATCH');
    expect(await make.payment(name, { orderNo, transactionId, amount: 100 })).toBe('DUPLICATE');

    expect(await db.orderRow(orderNo)).toMatchObject({
      status: 'WAIT_PAY',
      channel: null,
      transaction_id: null,
      paid_at: null,
    });
    expect(await db.anomalyRows(orderNo)).toEqual([
      {
        type: 'AMOUNT_MISMATCH',
        order_no: orderNo,
        channel: name,
        transaction_id: transactionId,
        order_amount: 10000,
        paid_amount: 100,
        currency: 'CNY',
        status: 'OPEN',
      },
    ]);
    expect(await db.effects(name, transactionId, orderNo)).toEqual({
      callbacks: 1,
      deliveries: 2,
      anomalies: 1,
      outbox: 0,
    });
    expect(await db.outcomes(name, transactionId)).toEqual(['AMOUNT_MISMATCH', 'DUPLICATE']);
    expect(await db.deliveryCount(name, transactionId)).toBe(2);
  });

  it('should record DUPLICATE_PAYMENT for a second, different transaction on a PAID order, keeping the first', async () => {
    const orderNo = await registerOrder(2500);
    const firstTransaction = uniqueId('T');
    const secondTransaction = uniqueId('T');
    expect(await make.payment(name, { orderNo, transactionId: firstTransaction, amount: 2500 })).toBe('PAID');

    expect(await make.payment(name, { orderNo, transactionId: secondTransaction, amount: 2500 })).toBe(
      'DUPLICATE_PAYMENT',
    );
    expect(await make.payment(name, { orderNo, transactionId: secondTransaction, amount: 2500 })).toBe('DUPLICATE');

    expect(await db.orderRow(orderNo)).toMatchObject({
      status: 'PAID',
      channel: name,
      transaction_id: firstTransaction,
    });
    expect(await db.anomalyRows(orderNo)).toEqual([
      expect.objectContaining({
        type: 'DUPLICATE_PAYMENT',
        channel: name,
        transaction_id: secondTransaction,
        order_amount: 2500,
        paid_amount: 2500,
        status: 'OPEN',
      }),
    ]);
    expect(await db.effects(name, secondTransaction, orderNo)).toEqual({
      callbacks: 1,
      deliveries: 2,
      anomalies: 1,
      outbox: 1,
    });
    expect(await db.outcomes(name, secondTransaction)).toEqual(['DUPLICATE_PAYMENT', 'DUPLICATE']);
    expect(await db.outcomes(name, firstTransaction)).toEqual(['PAID']);
  });

  it('should record PAID_AFTER_CLOSE for a payment of a CLOSED order, which stays CLOSED', async () => {
    const orderNo = await registerOrder(3300);
    expect(await make.close(orderNo)).toMatchObject({ orderNo, status: 'CLOSED' });
    const transactionId = uniqueId('T');

    expect(await make.payment(name, { orderNo, transactionId, amount: 3300 })).toBe('PAID_AFTER_CLOSE');

    expect(await db.orderRow(orderNo)).toMatchObject({ status: 'CLOSED', channel: null, transaction_id: null });
    expect(await db.anomalyRows(orderNo)).toEqual([
      expect.objectContaining({
        type: 'PAID_AFTER_CLOSE',
        channel: name,
        transaction_id: transactionId,
        order_amount: 3300,
        paid_amount: 3300,
      }),
    ]);
    expect(await db.effects(name, transactionId, orderNo)).toEqual({
      callbacks: 1,
      deliveries: 1,
      anomalies: 1,
      outbox: 0,
    });
    expect(await db.outcomes(name, transactionId)).toEqual(['PAID_AFTER_CLOSE']);
  });
});

describe('WECHATPAY key modes', () => {
  it('should keep the deliveries of both key modes of one transaction under one dedup key', async () => {
    const orderNo = await registerOrder(1300);
    const transactionId = uniqueId('T');
    const p = { outTradeNo: orderNo, transactionId, total: 1300 };
    const signed = (options: Parameters<Factories['deliveries']['wechatpayPayment']>[1]) => {
      const delivery = make.deliveries.wechatpayPayment(p, options);
      return make.verify(Channel.Wechatpay, delivery.headers, delivery.body);
    };

    expect(await make.settle(signed({ signer: platforms.wechatpay.certSigner }))).toBe('PAID');
    expect(await make.settle(signed({}))).toBe('DUPLICATE');

    expect(await db.outcomes(Channel.Wechatpay, transactionId)).toEqual(['PAID', 'DUPLICATE']);
    expect(await db.effects(Channel.Wechatpay, transactionId, orderNo)).toEqual({
      callbacks: 1,
      deliveries: 2,
      anomalies: 0,
      outbox: 1,
    });
  });
});

describe('ALIPAY trade statuses', () => {
  it('should treat TRADE_FINISHED after TRADE_SUCCESS, and a later TRADE_SUCCESS re-send, as the same payment', async () => {
    const orderNo = await registerOrder(8888);
    const tradeNo = uniqueId('A');
    const p = { orderNo, transactionId: tradeNo, amount: 8888 };

    expect(await make.payment(Channel.Alipay, { ...p, status: 'TRADE_SUCCESS' })).toBe('PAID');
    expect(await make.payment(Channel.Alipay, { ...p, status: 'TRADE_FINISHED' })).toBe('DUPLICATE');
    // A partial refund makes Alipay send TRADE_SUCCESS again for the same trade.
    expect(await make.payment(Channel.Alipay, { ...p, status: 'TRADE_SUCCESS' })).toBe('DUPLICATE');

    expect(await db.orderRow(orderNo)).toMatchObject({ status: 'PAID', channel: 'ALIPAY', transaction_id: tradeNo });
    expect(await db.effects(Channel.Alipay, tradeNo, orderNo)).toEqual({
      callbacks: 1,
      deliveries: 3,
      anomalies: 0,
      outbox: 1,
    });
    expect(await db.outcomes(Channel.Alipay, tradeNo)).toEqual(['PAID', 'DUPLICATE', 'DUPLICATE']);
    expect((await db.deliveryRows(Channel.Alipay, tradeNo)).map((r) => r.event_type)).toEqual([
      'TRADE_SUCCESS',
      'TRADE_FINISHED',
      'TRADE_SUCCESS',
    ]);
    expect(await db.deliveryCount(Channel.Alipay, tradeNo)).toBe(3);
  });

  it('should pay on a TRADE_FINISHED that arrives first', async () => {
    const orderNo = await registerOrder(100);
    const tradeNo = uniqueId('A');

    expect(
      await make.payment(Channel.Alipay, { orderNo, transactionId: tradeNo, amount: 100, status: 'TRADE_FINISHED' }),
    ).toBe('PAID');

    expect(await db.orderRow(orderNo)).toMatchObject({ status: 'PAID', transaction_id: tradeNo });
    expect(await db.effects(Channel.Alipay, tradeNo, orderNo)).toEqual({
      callbacks: 1,
      deliveries: 1,
      anomalies: 0,
      outbox: 1,
    });
  });
});

describe('across channels', () => {
  it('should record DUPLICATE_PAYMENT when an order paid by WeChat Pay is paid again by Alipay', async () => {
    const orderNo = await registerOrder(5000);
    const wechatTransaction = uniqueId('T');
    const alipayTrade = uniqueId('A');

    expect(await make.payment(Channel.Wechatpay, { orderNo, transactionId: wechatTransaction, amount: 5000 })).toBe(
      'PAID',
    );
    expect(await make.payment(Channel.Alipay, { orderNo, transactionId: alipayTrade, amount: 5000 })).toBe(
      'DUPLICATE_PAYMENT',
    );

    expect(await db.orderRow(orderNo)).toMatchObject({
      status: 'PAID',
      channel: 'WECHATPAY',
      transaction_id: wechatTransaction,
    });
    expect(await db.anomalyRows(orderNo)).toEqual([
      expect.objectContaining({
        type: 'DUPLICATE_PAYMENT',
        channel: 'ALIPAY',
        transaction_id: alipayTrade,
        paid_amount: 5000,
      }),
    ]);
    expect(await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no = ?', [orderNo])).toBe(1);
    expect(await db.outcomes(Channel.Alipay, alipayTrade)).toEqual(['DUPLICATE_PAYMENT']);
  });

  it('should keep the two channels’ dedup keys apart when their transaction ids are equal', async () => {
    const orderNo = await registerOrder(5100);
    const sharedId = uniqueId('X');

    expect(await make.payment(Channel.Wechatpay, { orderNo, transactionId: sharedId, amount: 5100 })).toBe('PAID');
    expect(await make.payment(Channel.Alipay, { orderNo, transactionId: sharedId, amount: 5100 })).toBe(
      'DUPLICATE_PAYMENT',
    );

    expect(await db.outcomes(Channel.Wechatpay, sharedId)).toEqual(['PAID']);
    expect(await db.outcomes(Channel.Alipay, sharedId)).toEqual(['DUPLICATE_PAYMENT']);
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE transaction_id = ?', [sharedId])).toBe(2);
  });
});
