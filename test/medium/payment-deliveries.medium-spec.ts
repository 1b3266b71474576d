import { Pool } from 'mysql2/promise';
import { Channel } from '../../src/domain/notification';
import { NotifyModule } from '../../src/intake/notify.module';
import { OrderModule } from '../../src/order/order.module';
import { TradeModule } from '../../src/trade/trade.module';
import {
  alipayDelivery,
  alipayTradeParams,
  generateRsaKeyPair,
  randomAlphanumeric,
  signWechatpayBody,
  wechatpayDelivery,
  wechatpayTransaction,
} from '../../tools/simulator/platform-signers';
import { Factories } from '../support/factories';
import { Medium, MediumContext, startMedium } from '../support/medium';
import {
  alipayPaymentForm,
  Delivery,
  Intake,
  IntakeChannel,
  intakeChannels,
  IntakePayment,
} from '../support/medium-notify';
import { recentSecond } from '../support/notify-channels';
import { NOTHING, PaymentEffects } from '../support/payment-effects';
import { notificationsOnly, TestPlatforms, uniqueId } from '../support/test-app';

/**
 * Payment notifications through the notify route's use case (NotificationIntake.receive) on the
 * real database, without HTTP: the bytes a platform signed, the reply it is given (ack, or its
 * failure format with the status), and what the delivery left in the database. The replies
 * as they go over the wire, and the order API, are in test/payment-outcomes.e2e-spec.ts.
 */
let setup: Medium;
let platforms: TestPlatforms;
let ctx: MediumContext;
let make: Factories;
let intake: Intake;
let pool: Pool;
let db: PaymentEffects;

beforeAll(async () => {
  setup = await startMedium((p) => notificationsOnly(p.env), {
    imports: [OrderModule, TradeModule, NotifyModule],
    fake: false,
  });
  ({ platforms, ctx, make, pool } = setup);
  intake = new Intake(ctx);
  db = new PaymentEffects(pool);
});

afterAll(() => setup?.close());

const channels = intakeChannels(
  () => make.deliveries,
  () => intake,
);

interface ChannelCase extends IntakeChannel {
  notPaying: Array<(p: IntakePayment) => Delivery>;
  /** A delivery of the same payment with one byte of the signed content changed. */
  tamper(d: Delivery): Delivery;
}

const wechatpay: ChannelCase = {
  ...channels.WECHATPAY,
  notPaying: [
    (p) =>
      make.deliveries.wechatpayPayment({
        outTradeNo: p.orderNo,
        transactionId: p.transactionId,
        total: p.amount,
        tradeState: 'NOTPAY',
      }),
  ],
  // The envelope id is signed like every other byte of the body; only the signature can notice the change.
  tamper: (d) => ({
    headers: d.headers,
    body: d.body.replace(/"id":"(.)/, (_m, c: string) => `"id":"${c === 'a' ? 'b' : 'a'}`),
  }),
};

const alipay: ChannelCase = {
  ...channels.ALIPAY,
  notPaying: [
    (p) => alipayPaymentForm(make.deliveries, p, 'WAIT_BUYER_PAY'),
    (p) => alipayPaymentForm(make.deliveries, p, 'TRADE_CLOSED'),
  ],
  // An attacker's favourite byte: the last digit of the amount.
  tamper: (d) => {
    const body = d.body.replace(
      /total_amount=(\d+)\.(\d)(\d)/,
      (_m, y: string, d1: string, d2: string) => `total_amount=${y}.${d1}${d2 === '9' ? '8' : '9'}`,
    );
    expect(body).not.toBe(d.body);
    return { headers: d.headers, body };
  },
};

const registerOrder = async (amount: number, orderNo?: string) => (await make.order({ amount, orderNo })).orderNo;

describe.each([wechatpay, alipay].map((c) => [c.name, c] as const))('%s', (name, channel) => {
  it('should pay a WAIT_PAY order on the first delivery of a payment of the same amount', async () => {
    const orderNo = await registerOrder(8888);
    const transactionId = uniqueId('T');
    const paidAt = recentSecond();
    const delivery = channel.payment({ orderNo, transactionId, amount: 8888, paidAt });

    channel.expectAck(await channel.deliver(delivery));

    expect(await db.orderRow(orderNo)).toEqual({
      status: 'PAID',
      amount: 8888,
      channel: name,
      transaction_id: transactionId,
      paid_at: paidAt.toISOString(),
    });
    const events = await db.outboxPayloads(orderNo);
    expect(events).toHaveLength(1);
    expect(events[0].type).toBe('payment.succeeded');
    expect(events[0].payload).toEqual({
      eventId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      type: 'payment.succeeded',
      occurredAt: paidAt.toISOString(),
      orderNo,
      transactionId,
      channel: name,
      amount: 8888,
      currency: 'CNY',
    });
    expect(await db.effects(name, transactionId, orderNo)).toEqual({
      callbacks: 1,
      deliveries: 1,
      anomalies: 0,
      outbox: 1,
    });
    expect(await db.deliveryCount(name, transactionId)).toBe(1);
    const [row] = await db.deliveryRows(name, transactionId);
    expect(row.outcome).toBe('PAID');
    expect(row.order_no).toBe(orderNo);
    expect(Buffer.compare(row.raw_body, Buffer.from(delivery.body, 'utf8'))).toBe(0);
    for (const header of channel.keptHeaders) expect(row.headers[header]).toBe(delivery.headers[header]);
  });

  it('should acknowledge a repeat, a non-paying notification, an anomaly and a payment after close with the channel’s reply', async () => {
    const orderNo = await registerOrder(2500);
    const transactionId = uniqueId('T');
    for (const notPaying of channel.notPaying) {
      channel.expectAck(await channel.deliver(notPaying({ orderNo, transactionId, amount: 2500 })));
    }
    const paying = channel.payment({ orderNo, transactionId, amount: 2500 });
    channel.expectAck(await channel.deliver(paying));
    channel.expectAck(await channel.deliver(channel.payment({ orderNo, transactionId, amount: 2500 })));
    channel.expectAck(await channel.deliver(paying));
    const duplicateBy = uniqueId('T');
    channel.expectAck(await channel.deliver(channel.payment({ orderNo, transactionId: duplicateBy, amount: 2500 })));
    const mismatchOrder = await registerOrder(10000);
    const mismatchBy = uniqueId('T');
    channel.expectAck(
      await channel.deliver(channel.payment({ orderNo: mismatchOrder, transactionId: mismatchBy, amount: 100 })),
    );
    const closedOrder = await registerOrder(3300);
    expect(await make.close(closedOrder)).toMatchObject({ orderNo: closedOrder, status: 'CLOSED' });
    const afterCloseBy = uniqueId('T');
    channel.expectAck(
      await channel.deliver(channel.payment({ orderNo: closedOrder, transactionId: afterCloseBy, amount: 3300 })),
    );

    expect(await db.outcomes(name, transactionId)).toEqual([
      ...channel.notPaying.map(() => 'NOT_PAYING'),
      'PAID',
      // The identical bytes again are a replay, counted on the first row.
      'PAID',
      'DUPLICATE',
    ]);
    expect(await db.outcomes(name, duplicateBy)).toEqual(['DUPLICATE_PAYMENT']);
    expect(await db.outcomes(name, mismatchBy)).toEqual(['AMOUNT_MISMATCH']);
    expect(await db.outcomes(name, afterCloseBy)).toEqual(['PAID_AFTER_CLOSE']);
  });

  it('should fail a payment for an unknown order, write nothing, and pay when the retry comes after the order exists', async () => {
    const orderNo = uniqueId('PO');
    const transactionId = uniqueId('T');
    const delivery = channel.payment({ orderNo, transactionId, amount: 4200 });

    const refused = await channel.deliver(delivery);
    channel.expectFailure(refused);
    expect(refused.status).not.toBe(200);
    expect(refused.status).not.toBe(204);
    expect(await db.effects(name, transactionId, orderNo)).toEqual(NOTHING);
    expect(await db.orderRow(orderNo)).toBeUndefined();

    await registerOrder(4200, orderNo);
    // The identical bytes again: the refused attempt must not have kept the payment's dedup key.
    channel.expectAck(await channel.deliver(delivery));

    expect(await db.orderRow(orderNo)).toMatchObject({ status: 'PAID', channel: name, transaction_id: transactionId });
    expect(await db.effects(name, transactionId, orderNo)).toEqual({
      callbacks: 1,
      deliveries: 1,
      anomalies: 0,
      outbox: 1,
    });
    expect(await db.deliveryCount(name, transactionId)).toBe(1);
  });

  it('should refuse a delivery whose signed content was changed by one byte, and write nothing', async () => {
    const orderNo = await registerOrder(6600);
    const transactionId = uniqueId('T');
    const genuine = channel.payment({ orderNo, transactionId, amount: 6600 });

    channel.expectFailure(await channel.deliver(channel.tamper(genuine)), 401);

    expect(await db.effects(name, transactionId, orderNo)).toEqual(NOTHING);
    expect((await db.orderRow(orderNo))?.status).toBe('WAIT_PAY');
    // The genuine delivery still pays: the forged one consumed nothing.
    channel.expectAck(await channel.deliver(genuine));
    expect(await db.effects(name, transactionId, orderNo)).toEqual({
      callbacks: 1,
      deliveries: 1,
      anomalies: 0,
      outbox: 1,
    });
  });
});

describe('WECHATPAY verification failures', () => {
  function transactionResource(p: IntakePayment, override: { mchid?: string; appid?: string } = {}): object {
    return wechatpayTransaction({
      mchid: override.mchid ?? platforms.wechatpay.mchid,
      appid: override.appid ?? platforms.wechatpay.appid,
      outTradeNo: p.orderNo,
      transactionId: p.transactionId,
      total: p.amount,
    });
  }

  const refusals: Array<[string, number, (p: IntakePayment) => Delivery]> = [
    [
      'a timestamp 6 minutes old',
      401,
      (p) =>
        wechatpayDelivery(platforms.wechatpay.publicKeySigner, {
          timestamp: Math.floor(Date.now() / 1000) - 6 * 60,
          resource: transactionResource(p),
        }),
    ],
    [
      'a timestamp 6 minutes ahead',
      401,
      (p) =>
        wechatpayDelivery(platforms.wechatpay.publicKeySigner, {
          timestamp: Math.floor(Date.now() / 1000) + 6 * 60,
          resource: transactionResource(p),
        }),
    ],
    [
      'an unknown Wechatpay-Serial',
      401,
      (p) =>
        wechatpayDelivery(
          { ...platforms.wechatpay.publicKeySigner, serial: 'PUB_KEY_ID_0114232134912419999999999999' },
          { resource: transactionResource(p) },
        ),
    ],
    [
      'the public key id as serial but signed with the certificate key',
      401,
      (p) =>
        wechatpayDelivery(
          { ...platforms.wechatpay.certSigner, serial: platforms.wechatpay.publicKeySigner.serial },
          { resource: transactionResource(p) },
        ),
    ],
    [
      'a WECHATPAY/SIGNTEST/ probe signature',
      401,
      (p) => {
        const d = wechatpayDelivery(platforms.wechatpay.publicKeySigner, { resource: transactionResource(p) });
        return {
          body: d.body,
          headers: { ...d.headers, 'wechatpay-signature': `WECHATPAY/SIGNTEST/${d.headers['wechatpay-signature']}` },
        };
      },
    ],
    [
      'another merchant’s mchid',
      401,
      (p) =>
        wechatpayDelivery(platforms.wechatpay.publicKeySigner, {
          resource: transactionResource(p, { mchid: '1900000109' }),
        }),
    ],
    [
      'another application’s appid',
      401,
      (p) =>
        wechatpayDelivery(platforms.wechatpay.publicKeySigner, {
          resource: transactionResource(p, { appid: 'wx0000000000000000' }),
        }),
    ],
    [
      'a resource encrypted with another APIv3 key',
      400,
      (p) =>
        wechatpayDelivery(
          { ...platforms.wechatpay.publicKeySigner, apiV3Key: randomAlphanumeric(32) },
          { resource: transactionResource(p) },
        ),
    ],
  ];

  it.each(refusals)(
    'should refuse %s with %i, write nothing, and still pay on the genuine delivery',
    async (_name, status, build) => {
      const orderNo = await registerOrder(7700);
      const transactionId = uniqueId('T');

      wechatpay.expectFailure(await wechatpay.deliver(build({ orderNo, transactionId, amount: 7700 })), status);

      expect(await db.effects(Channel.Wechatpay, transactionId, orderNo)).toEqual(NOTHING);
      expect((await db.orderRow(orderNo))?.status).toBe('WAIT_PAY');
      wechatpay.expectAck(await wechatpay.deliver(wechatpay.payment({ orderNo, transactionId, amount: 7700 })));
      expect(await db.effects(Channel.Wechatpay, transactionId, orderNo)).toEqual({
        callbacks: 1,
        deliveries: 1,
        anomalies: 0,
        outbox: 1,
      });
    },
  );

  it('should refuse a non-payment event for another merchant’s mchid, and record nothing', async () => {
    const orderNo = await registerOrder(7800);
    const transactionId = uniqueId('T');
    const delivery = wechatpayDelivery(platforms.wechatpay.publicKeySigner, {
      eventType: 'REFUND.SUCCESS',
      resource: transactionResource({ orderNo, transactionId, amount: 7800 }, { mchid: '1900000109' }),
    });

    wechatpay.expectFailure(await wechatpay.deliver(delivery), 401);

    expect(await db.effects(Channel.Wechatpay, transactionId, orderNo)).toEqual(NOTHING);
  });

  it('should refuse a signature made over different bytes than those received (a re-serialised body)', async () => {
    const orderNo = await registerOrder(7900);
    const transactionId = uniqueId('T');
    const genuine = wechatpay.payment({ orderNo, transactionId, amount: 7900 });
    // Same JSON value, different bytes: a verifier that re-serialises the parsed body would accept this.
    const reformatted = JSON.stringify(JSON.parse(genuine.body), null, 1);

    wechatpay.expectFailure(await wechatpay.deliver({ headers: genuine.headers, body: reformatted }), 401);

    expect(await db.effects(Channel.Wechatpay, transactionId, orderNo)).toEqual(NOTHING);
  });

  it('should pay a delivery signed in certificate mode (Wechatpay-Serial = platform certificate serial)', async () => {
    const orderNo = await registerOrder(1234);
    const transactionId = uniqueId('T');
    const delivery = make.deliveries.wechatpayPayment(
      { outTradeNo: orderNo, transactionId, total: 1234 },
      { signer: platforms.wechatpay.certSigner },
    );
    expect(delivery.headers['wechatpay-serial']).toBe(platforms.wechatpay.certSigner.serial);

    wechatpay.expectAck(await wechatpay.deliver(delivery));

    expect(await db.orderRow(orderNo)).toMatchObject({
      status: 'PAID',
      channel: 'WECHATPAY',
      transaction_id: transactionId,
    });
    expect(await db.effects(Channel.Wechatpay, transactionId, orderNo)).toEqual({
      callbacks: 1,
      deliveries: 1,
      anomalies: 0,
      outbox: 1,
    });
    const [row] = await db.deliveryRows(Channel.Wechatpay, transactionId);
    expect(row.headers['wechatpay-serial']).toBe(platforms.wechatpay.certSigner.serial);
  });

  it('should verify the exact raw bytes even when the signed body has unusual but valid JSON whitespace', async () => {
    const orderNo = await registerOrder(1400);
    const transactionId = uniqueId('T');
    const genuine = wechatpay.payment({ orderNo, transactionId, amount: 1400 });
    const body = JSON.stringify(JSON.parse(genuine.body), null, 2);
    const headers = signWechatpayBody(platforms.wechatpay.publicKeySigner, body);

    wechatpay.expectAck(await wechatpay.deliver({ headers, body }));

    const [row] = await db.deliveryRows(Channel.Wechatpay, transactionId);
    expect(row.outcome).toBe('PAID');
    expect(row.raw_body.toString('utf8')).toBe(body);
  });
});

describe('ALIPAY verification failures', () => {
  it.each([
    ['another application’s app_id', { appId: '2021000199999999' }],
    ['another seller’s seller_id', { sellerId: '2088000000000000' }],
  ])('should refuse %s with 401 and write nothing', async (_name, override) => {
    const orderNo = await registerOrder(900);
    const tradeNo = uniqueId('A');
    const body = make.deliveries.alipayPayment({ outTradeNo: orderNo, tradeNo, totalAmount: '9.00', ...override });

    alipay.expectFailure(await intake.alipay(body), 401);

    expect(await db.effects(Channel.Alipay, tradeNo, orderNo)).toEqual(NOTHING);
    expect((await db.orderRow(orderNo))?.status).toBe('WAIT_PAY');
  });

  it.each([
    ['a form signed with another key', () => generateRsaKeyPair().privateKey, {}],
    ['legacy RSA (SHA1) signatures', () => platforms.alipay.privateKey, { signType: 'RSA' as const }],
  ])('should refuse %s, and write nothing', async (_name, key, options) => {
    const orderNo = await registerOrder(900);
    const tradeNo = uniqueId('A');
    const body = alipayDelivery(
      key(),
      alipayTradeParams({
        appId: platforms.alipay.appId,
        sellerId: platforms.alipay.sellerId,
        outTradeNo: orderNo,
        tradeNo,
        totalAmount: '9.00',
      }),
      options,
    );

    alipay.expectFailure(await intake.alipay(body), 401);

    expect(await db.effects(Channel.Alipay, tradeNo, orderNo)).toEqual(NOTHING);
  });
});
