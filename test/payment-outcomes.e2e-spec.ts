import { Pool } from 'mysql2/promise';
import { Channel } from '../src/domain/notification';
import {
  alipayDelivery,
  alipayTradeParams,
  generateRsaKeyPair,
  randomAlphanumeric,
  signWechatpayBody,
  wechatpayDelivery,
  wechatpayTransaction,
} from '../tools/simulator/platform-signers';
import {
  count,
  createTestPlatforms,
  HttpAnswer,
  RunningApp,
  notificationsOnly,
  startApp,
  TestClient,
  testDatabasePool,
  TestPlatforms,
  uniqueId,
} from './support/test-app';
import { NOTHING, PaymentEffects } from './support/payment-effects';
import {
  alipayForm,
  Delivery,
  notifyChannels,
  NotifyChannel,
  PaymentSpec,
  recentSecond,
} from './support/notify-channels';

interface NotPayingVariant {
  name: string;
  build(p: PaymentSpec): Delivery;
}

/** What differs between the two platforms; everything the outcomes share is written once against this. */
interface PaymentChannel extends NotifyChannel {
  notPaying: NotPayingVariant[];
  /** A delivery of the same payment with one byte of the signed content changed. */
  tamper(d: Delivery): Delivery;
  expectFailure(a: HttpAnswer, status?: number): void;
}

let platforms: TestPlatforms;
let running: RunningApp;
let client: TestClient;
let pool: Pool;
let db: PaymentEffects;

const notify = notifyChannels(() => client);

const wechatpay: PaymentChannel = {
  ...notify.WECHATPAY,
  notPaying: [
    {
      name: 'a TRANSACTION.SUCCESS event whose trade_state is NOTPAY',
      build: (p) =>
        client.wechatpayPayment({
          outTradeNo: p.orderNo,
          transactionId: p.transactionId,
          total: p.amount,
          tradeState: 'NOTPAY',
        }),
    },
  ],
  // The envelope id is signed like every other byte of the body; only the signature can notice the change.
  tamper: (d) => ({
    headers: d.headers,
    body: d.body.replace(/"id":"(.)/, (_m, c: string) => `"id":"${c === 'a' ? 'b' : 'a'}`),
  }),
  expectFailure: (a, status) => {
    if (status) expect(a.status).toBe(status);
    expect(a.status).toBeGreaterThanOrEqual(400);
    expect(a.json()).toEqual({ code: 'FAIL', message: expect.stringMatching(/\S/) });
  },
};

const alipay: PaymentChannel = {
  ...notify.ALIPAY,
  notPaying: [
    { name: 'WAIT_BUYER_PAY', build: (p) => alipayForm(client, p, 'WAIT_BUYER_PAY') },
    { name: 'TRADE_CLOSED', build: (p) => alipayForm(client, p, 'TRADE_CLOSED') },
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
  expectFailure: (a, status) => {
    if (status) expect(a.status).toBe(status);
    expect(a.status).toBeGreaterThanOrEqual(400);
    expect(a.body).toBe('fail');
  },
};

const CHANNELS = { WECHATPAY: wechatpay, ALIPAY: alipay };

async function registerOrder(amount: number): Promise<string> {
  const orderNo = uniqueId('PO');
  expect((await client.registerOrder({ orderNo, amount })).status).toBe(201);
  return orderNo;
}

// ----------------------------------------------------------------------------------------------- the suite

describe('payment outcomes', () => {
  beforeAll(async () => {
    platforms = await createTestPlatforms();
    // USD too, so that the order API's conflict on a different currency is reachable.
    running = await startApp({ ...notificationsOnly(platforms.env), CURRENCIES: 'CNY,USD' });
    client = new TestClient(running.url, platforms);
    pool = testDatabasePool();
    db = new PaymentEffects(pool);
  });
  afterAll(async () => {
    await running?.close();
    await pool?.end();
  });

  describe.each(Object.values(CHANNELS).map((c) => [c.name, c] as const))('%s', (name, channel) => {
    it('should pay a WAIT_PAY order on the first delivery of a payment of the same amount', async () => {
      const orderNo = await registerOrder(8888);
      const transactionId = uniqueId('T');
      const paidAt = recentSecond();
      const delivery = channel.payment({ orderNo, transactionId, amount: 8888, paidAt });

      channel.expectAck(await channel.post(delivery));

      const view = await client.api('GET', `/payment-orders/${orderNo}`);
      expect(view.status).toBe(200);
      expect(view.json()).toMatchObject({
        orderNo,
        status: 'PAID',
        amount: 8888,
        currency: 'CNY',
        channel: name,
        transactionId,
        paidAt: paidAt.toISOString(),
      });
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

    // The cases about what each outcome writes moved to test/medium/settlement.medium-spec.ts; the platform's reply to each stays here.
    it('should acknowledge a repeat, a non-paying notification, an anomaly and a payment after close with the channel’s reply', async () => {
      const orderNo = await registerOrder(2500);
      const transactionId = uniqueId('T');
      for (const variant of channel.notPaying) {
        channel.expectAck(await channel.post(variant.build({ orderNo, transactionId, amount: 2500 })));
      }
      const paying = channel.payment({ orderNo, transactionId, amount: 2500 });
      channel.expectAck(await channel.post(paying));
      channel.expectAck(await channel.post(channel.payment({ orderNo, transactionId, amount: 2500 })));
      channel.expectAck(await channel.post(paying));
      const duplicateBy = uniqueId('T');
      channel.expectAck(await channel.post(channel.payment({ orderNo, transactionId: duplicateBy, amount: 2500 })));
      const mismatchOrder = await registerOrder(10000);
      const mismatchBy = uniqueId('T');
      channel.expectAck(
        await channel.post(channel.payment({ orderNo: mismatchOrder, transactionId: mismatchBy, amount: 100 })),
      );
      const closedOrder = await registerOrder(3300);
      const closed = await client.api('POST', `/payment-orders/${closedOrder}/close`);
      expect(closed.status).toBe(200);
      expect(closed.json()).toMatchObject({ orderNo: closedOrder, status: 'CLOSED' });
      const afterCloseBy = uniqueId('T');
      channel.expectAck(
        await channel.post(channel.payment({ orderNo: closedOrder, transactionId: afterCloseBy, amount: 3300 })),
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

      const refused = await channel.post(delivery);
      channel.expectFailure(refused);
      expect(refused.status).not.toBe(200);
      expect(refused.status).not.toBe(204);
      expect(await db.effects(name, transactionId, orderNo)).toEqual(NOTHING);
      expect(await db.orderRow(orderNo)).toBeUndefined();

      expect((await client.registerOrder({ orderNo, amount: 4200 })).status).toBe(201);
      // The identical bytes again: the refused attempt must not have kept the payment's dedup key.
      channel.expectAck(await channel.post(delivery));

      expect(await db.orderRow(orderNo)).toMatchObject({
        status: 'PAID',
        channel: name,
        transaction_id: transactionId,
      });
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

      channel.expectFailure(await channel.post(channel.tamper(genuine)), 401);

      expect(await db.effects(name, transactionId, orderNo)).toEqual(NOTHING);
      expect((await db.orderRow(orderNo))?.status).toBe('WAIT_PAY');
      // The genuine delivery still pays: the forged one consumed nothing.
      channel.expectAck(await channel.post(genuine));
      expect(await db.effects(name, transactionId, orderNo)).toEqual({
        callbacks: 1,
        deliveries: 1,
        anomalies: 0,
        outbox: 1,
      });
    });
  });

  describe('WECHATPAY verification failures', () => {
    const refusals: Array<[string, number, (p: PaymentSpec) => Delivery]> = [
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

    function transactionResource(p: PaymentSpec, override: { mchid?: string; appid?: string } = {}): object {
      return wechatpayTransaction({
        mchid: override.mchid ?? platforms.wechatpay.mchid,
        appid: override.appid ?? platforms.wechatpay.appid,
        outTradeNo: p.orderNo,
        transactionId: p.transactionId,
        total: p.amount,
      });
    }

    it.each(refusals)(
      'should refuse %s with %i, write nothing, and still pay on the genuine delivery',
      async (_name, status, build) => {
        const orderNo = await registerOrder(7700);
        const transactionId = uniqueId('T');

        wechatpay.expectFailure(await wechatpay.post(build({ orderNo, transactionId, amount: 7700 })), status);

        expect(await db.effects(Channel.Wechatpay, transactionId, orderNo)).toEqual(NOTHING);
        expect((await db.orderRow(orderNo))?.status).toBe('WAIT_PAY');
        wechatpay.expectAck(await wechatpay.post(wechatpay.payment({ orderNo, transactionId, amount: 7700 })));
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

      wechatpay.expectFailure(await wechatpay.post(delivery), 401);

      expect(await db.effects(Channel.Wechatpay, transactionId, orderNo)).toEqual(NOTHING);
    });

    it('should refuse a signature made over different bytes than those received (a re-serialised body)', async () => {
      const orderNo = await registerOrder(7900);
      const transactionId = uniqueId('T');
      const genuine = wechatpay.payment({ orderNo, transactionId, amount: 7900 });
      // Same JSON value, different bytes: a verifier that re-serialises the parsed body would accept this.
      const reformatted = JSON.stringify(JSON.parse(genuine.body), null, 1);

      wechatpay.expectFailure(await wechatpay.post({ headers: genuine.headers, body: reformatted }), 401);

      expect(await db.effects(Channel.Wechatpay, transactionId, orderNo)).toEqual(NOTHING);
    });

    it('should pay a delivery signed in certificate mode (Wechatpay-Serial = platform certificate serial)', async () => {
      const orderNo = await registerOrder(1234);
      const transactionId = uniqueId('T');
      const delivery = client.wechatpayPayment(
        { outTradeNo: orderNo, transactionId, total: 1234 },
        { signer: platforms.wechatpay.certSigner },
      );
      expect(delivery.headers['wechatpay-serial']).toBe(platforms.wechatpay.certSigner.serial);

      wechatpay.expectAck(await wechatpay.post(delivery));

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

      wechatpay.expectAck(await wechatpay.post({ headers, body }));

      const [row] = await db.deliveryRows(Channel.Wechatpay, transactionId);
      expect(row.outcome).toBe('PAID');
      expect(row.raw_body.toString('utf8')).toBe(body);
    });
  });

  describe('ALIPAY', () => {
    it.each([
      ['another application’s app_id', { appId: '2021000199999999' }],
      ['another seller’s seller_id', { sellerId: '2088000000000000' }],
    ])('should refuse %s with 401 and write nothing', async (_name, override) => {
      const orderNo = await registerOrder(900);
      const tradeNo = uniqueId('A');
      const body = client.alipayPayment({ outTradeNo: orderNo, tradeNo, totalAmount: '9.00', ...override });

      alipay.expectFailure(await client.postAlipay(body), 401);

      expect(await db.effects(Channel.Alipay, tradeNo, orderNo)).toEqual(NOTHING);
      expect((await db.orderRow(orderNo))?.status).toBe('WAIT_PAY');
    });

    it('should refuse a form signed with another key, and write nothing', async () => {
      const orderNo = await registerOrder(900);
      const tradeNo = uniqueId('A');
      const body = alipayDelivery(
        generateRsaKeyPair().privateKey,
        alipayTradeParams({
          appId: platforms.alipay.appId,
          sellerId: platforms.alipay.sellerId,
          outTradeNo: orderNo,
          tradeNo,
          totalAmount: '9.00',
        }),
      );

      alipay.expectFailure(await client.postAlipay(body), 401);

      expect(await db.effects(Channel.Alipay, tradeNo, orderNo)).toEqual(NOTHING);
    });

    it('should refuse legacy RSA (SHA1) signatures, and write nothing', async () => {
      const orderNo = await registerOrder(900);
      const tradeNo = uniqueId('A');
      const body = alipayDelivery(
        platforms.alipay.privateKey,
        alipayTradeParams({
          appId: platforms.alipay.appId,
          sellerId: platforms.alipay.sellerId,
          outTradeNo: orderNo,
          tradeNo,
          totalAmount: '9.00',
        }),
        { signType: 'RSA' },
      );

      alipay.expectFailure(await client.postAlipay(body), 401);

      expect(await db.effects(Channel.Alipay, tradeNo, orderNo)).toEqual(NOTHING);
    });
  });

  describe('order API', () => {
    it('should register an order (201), answer the same body again with 200 and the same order, and refuse a different body with 409', async () => {
      const orderNo = uniqueId('PO');
      const body = { orderNo, userId: 'u-42', amount: 1999, currency: 'CNY' };

      const created = await client.api('POST', '/payment-orders', body);
      expect(created.status).toBe(201);
      expect(created.json()).toEqual({
        orderNo,
        userId: 'u-42',
        status: 'WAIT_PAY',
        amount: 1999,
        currency: 'CNY',
        channel: null,
        merchantId: null,
        subMerchantId: null,
        channelOrderTime: null,
        transactionId: null,
        paidAt: null,
      });

      const again = await client.api('POST', '/payment-orders', body);
      expect(again.status).toBe(200);
      expect(again.json()).toEqual(created.json());

      for (const different of [{ amount: 2000 }, { userId: 'u-43' }, { currency: 'USD' }]) {
        const conflict = await client.api('POST', '/payment-orders', { ...body, ...different });
        expect(conflict.status).toBe(409);
        expect(conflict.json().message).toEqual(expect.stringContaining(orderNo));
      }

      expect(await count(pool, 'SELECT COUNT(*) FROM payment_order WHERE order_no = ?', [orderNo])).toBe(1);
      expect(await db.orderRow(orderNo)).toMatchObject({ status: 'WAIT_PAY', amount: 1999 });
    });

    it('should register orders in each configured currency and refuse any other with a 400 that writes nothing', async () => {
      const usd = uniqueId('PO');
      const created = await client.api('POST', '/payment-orders', {
        orderNo: usd,
        userId: 'u-1',
        amount: 500,
        currency: 'USD',
      });
      expect(created.status).toBe(201);
      expect(
        await count(
          pool,
          "SELECT COUNT(*) FROM payment_order WHERE order_no = ? AND currency = 'USD' AND amount = 500",
          [usd],
        ),
      ).toBe(1);

      const hkd = uniqueId('PO');
      const refused = await client.api('POST', '/payment-orders', {
        orderNo: hkd,
        userId: 'u-1',
        amount: 500,
        currency: 'HKD',
      });
      expect(refused.status).toBe(400);
      expect(refused.json()).toEqual({
        statusCode: 400,
        error: expect.any(String),
        message: 'currency HKD is not accepted (accepted: CNY, USD)',
      });
      expect(await db.orderRow(hkd)).toBeUndefined();
      expect(await count(pool, 'SELECT COUNT(*) FROM order_status_change WHERE order_no = ?', [hkd])).toBe(0);
    });

    it('should answer 404 for an unknown order', async () => {
      const orderNo = uniqueId('PO');
      const answer = await client.api('GET', `/payment-orders/${orderNo}`);
      expect(answer.status).toBe(404);
      expect(answer.json().message).toEqual(expect.stringContaining(orderNo));
      expect(await db.orderRow(orderNo)).toBeUndefined();
    });

    it('should refuse to close a PAID order with 409, leaving it PAID', async () => {
      const orderNo = await registerOrder(600);
      const transactionId = uniqueId('T');
      wechatpay.expectAck(await wechatpay.post(wechatpay.payment({ orderNo, transactionId, amount: 600 })));

      const answer = await client.api('POST', `/payment-orders/${orderNo}/close`);
      expect(answer.status).toBe(409);
      expect(answer.json().message).toEqual(expect.stringMatching(/PAID/));
      expect(await db.orderRow(orderNo)).toMatchObject({ status: 'PAID', transaction_id: transactionId });
      expect(await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no = ?', [orderNo])).toBe(1);
    });

    it('should answer 404 when closing an unknown order, creating nothing', async () => {
      const orderNo = uniqueId('PO');
      expect((await client.api('POST', `/payment-orders/${orderNo}/close`)).status).toBe(404);
      expect(await db.orderRow(orderNo)).toBeUndefined();
    });

    it('should close a WAIT_PAY order, and answer 200 CLOSED again on a second close', async () => {
      const orderNo = await registerOrder(700);

      const first = await client.api('POST', `/payment-orders/${orderNo}/close`);
      const second = await client.api('POST', `/payment-orders/${orderNo}/close`);

      expect(first.status).toBe(200);
      expect(second.status).toBe(200);
      expect(first.json()).toMatchObject({ orderNo, status: 'CLOSED' });
      expect(second.json()).toEqual(first.json());
      expect((await db.orderRow(orderNo))?.status).toBe('CLOSED');
      expect((await client.api('GET', `/payment-orders/${orderNo}`)).json()).toMatchObject({ status: 'CLOSED' });
    });

    it.each([
      ['no Authorization header', undefined],
      ['an empty bearer token', 'Bearer '],
      ['a wrong bearer token', 'Bearer not-the-token'],
      ['the right token without the Bearer scheme', 'TOKEN'],
      ['the right token with another scheme', 'Basic TOKEN'],
    ])('should answer 401 to %s, and change nothing', async (_name, authorization) => {
      const orderNo = await registerOrder(800);
      const newOrderNo = uniqueId('PO');
      const send = (method: string, path: string, body?: unknown) => {
        const headers: Record<string, string> = {};
        if (authorization !== undefined)
          headers.authorization = authorization.replace('TOKEN', platforms.internalApiToken);
        if (body !== undefined) headers['content-type'] = 'application/json';
        return fetch(running.url + path, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      };

      const answers = [
        await send('POST', '/payment-orders', { orderNo: newOrderNo, userId: 'u-1', amount: 100, currency: 'CNY' }),
        await send('GET', `/payment-orders/${orderNo}`),
        await send('POST', `/payment-orders/${orderNo}/close`),
      ];

      for (const answer of answers) {
        expect(answer.status).toBe(401);
        expect(((await answer.json()) as { message?: string }).message).toEqual(expect.stringMatching(/\S/));
      }
      expect(await db.orderRow(newOrderNo)).toBeUndefined();
      expect((await db.orderRow(orderNo))?.status).toBe('WAIT_PAY');
    });
  });
});
