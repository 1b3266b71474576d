import { Pool, RowDataPacket } from 'mysql2/promise';
import {
  alipayDelivery,
  alipayTradeParams,
  generateRsaKeyPair,
  randomAlphanumeric,
  signWechatpayBody,
  wechatpayDelivery,
  wechatpayTransaction,
  yuan,
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

type ChannelName = 'WECHATPAY' | 'ALIPAY';

/** Exactly what goes over the wire, so that a delivery can be re-posted byte for byte. */
interface Delivery {
  headers: Record<string, string>;
  body: string;
}

interface PaymentSpec {
  orderNo: string;
  transactionId: string;
  /** Minor units (fen). */
  amount: number;
  paidAt?: Date;
}

interface NotPayingVariant {
  name: string;
  build(p: PaymentSpec): Delivery;
}

/** What differs between the two platforms; everything the outcomes share is written once against this. */
interface PaymentChannel {
  name: ChannelName;
  /** A freshly signed paying notification (WeChat TRANSACTION.SUCCESS, Alipay TRADE_SUCCESS). */
  payment(p: PaymentSpec): Delivery;
  notPaying: NotPayingVariant[];
  /** A delivery of the same payment with one byte of the signed content changed. */
  tamper(d: Delivery): Delivery;
  post(d: Delivery): Promise<HttpAnswer>;
  expectAck(a: HttpAnswer): void;
  expectFailure(a: HttpAnswer, status?: number): void;
  /** The header names a reconciliation needs, kept with every accepted delivery. */
  keptHeaders: string[];
  /**
   * Whether the same signed bytes received again are a replay, counted on the first row instead
   * of stored again: for WeChat (which signs every sending afresh) and for Alipay (whose replay key
   * is its signed content and signature, so that padded replays are not stored again: issue 21).
   */
  identicalResendIsReplay: boolean;
}

let platforms: TestPlatforms;
let running: RunningApp;
let client: TestClient;
let pool: Pool;

/** A whole second in the recent past: both platforms write their payment times with second precision. */
function recentSecond(): Date {
  return new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
}

const wechatpay: PaymentChannel = {
  name: 'WECHATPAY',
  payment: (p) =>
    client.wechatpayPayment({
      outTradeNo: p.orderNo,
      transactionId: p.transactionId,
      total: p.amount,
      successTime: p.paidAt,
    }),
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
  post: (d) => client.postWechatpay(d),
  expectAck: (a) => {
    expect(a.status).toBe(204);
    expect(a.body).toBe('');
  },
  expectFailure: (a, status) => {
    if (status) expect(a.status).toBe(status);
    expect(a.status).toBeGreaterThanOrEqual(400);
    expect(a.json()).toEqual({ code: 'FAIL', message: expect.stringMatching(/\S/) });
  },
  keptHeaders: ['wechatpay-serial', 'wechatpay-signature', 'wechatpay-timestamp', 'wechatpay-nonce'],
  identicalResendIsReplay: true,
};

const ALIPAY_CONTENT_TYPE = 'application/x-www-form-urlencoded; charset=utf-8';

function alipayForm(p: PaymentSpec, tradeStatus = 'TRADE_SUCCESS'): Delivery {
  const body = client.alipayPayment({
    outTradeNo: p.orderNo,
    tradeNo: p.transactionId,
    totalAmount: yuan(p.amount),
    tradeStatus,
    paidAt: p.paidAt,
  });
  return { headers: { 'content-type': ALIPAY_CONTENT_TYPE }, body };
}

const alipay: PaymentChannel = {
  name: 'ALIPAY',
  payment: (p) => alipayForm(p),
  notPaying: [
    { name: 'WAIT_BUYER_PAY', build: (p) => alipayForm(p, 'WAIT_BUYER_PAY') },
    { name: 'TRADE_CLOSED', build: (p) => alipayForm(p, 'TRADE_CLOSED') },
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
  post: (d) => client.postAlipay(d.body, d.headers['content-type']),
  expectAck: (a) => {
    expect(a.status).toBe(200);
    expect(a.body).toBe('success');
  },
  expectFailure: (a, status) => {
    if (status) expect(a.status).toBe(status);
    expect(a.status).toBeGreaterThanOrEqual(400);
    expect(a.body).toBe('fail');
  },
  keptHeaders: ['content-type'],
  identicalResendIsReplay: true,
};

const CHANNELS = { WECHATPAY: wechatpay, ALIPAY: alipay };

// ------------------------------------------------------------------------------------ database assertions

interface OrderRow {
  status: string;
  amount: number;
  channel: string | null;
  transaction_id: string | null;
  /** UTC, ISO 8601 with milliseconds (the app writes UTC; formatted by the server so the test's zone never matters). */
  paid_at: string | null;
}

async function orderRow(orderNo: string): Promise<OrderRow | undefined> {
  const [rows] = await pool.query<RowDataPacket[]>(
    `SELECT status, amount, channel, transaction_id, DATE_FORMAT(paid_at, '%Y-%m-%dT%H:%i:%s.%fZ') AS paid_at
     FROM payment_order WHERE order_no = ?`,
    [orderNo],
  );
  if (!rows[0]) return undefined;
  const row = rows[0];
  return {
    ...row,
    amount: Number(row.amount),
    paid_at: row.paid_at ? row.paid_at.replace(/(\.\d{3})\d{3}Z$/, '$1Z') : null,
  } as OrderRow;
}

/** Everything a delivery of (channel, transaction) can leave behind, and the order's outbox events. */
async function effects(channel: ChannelName, transactionId: string, orderNo: string) {
  const [callbacks, deliveries, anomalies, outbox] = await Promise.all([
    count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE channel = ? AND transaction_id = ?', [
      channel,
      transactionId,
    ]),
    // Deliveries received: a row, and the replays counted on it.
    count(
      pool,
      'SELECT COALESCE(SUM(1 + replays), 0) FROM callback_delivery WHERE channel = ? AND transaction_id = ?',
      [channel, transactionId],
    ),
    count(pool, 'SELECT COUNT(*) FROM payment_anomaly WHERE channel = ? AND transaction_id = ?', [
      channel,
      transactionId,
    ]),
    count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no = ?', [orderNo]),
  ]);
  return { callbacks, deliveries, anomalies, outbox };
}

const NOTHING = { callbacks: 0, deliveries: 0, anomalies: 0, outbox: 0 };

/** Paying deliveries recorded for a payment; undefined while the payment has no dedup record. */
async function deliveryCount(channel: ChannelName, transactionId: string): Promise<number | undefined> {
  const [rows] = await pool.query<RowDataPacket[]>(
    `SELECT (SELECT SUM(1 + replays) FROM callback_delivery d
             WHERE d.channel = c.channel AND d.transaction_id = c.transaction_id AND d.outcome <> 'NOT_PAYING') AS deliveries
     FROM payment_callback c WHERE c.channel = ? AND c.transaction_id = ?`,
    [channel, transactionId],
  );
  return rows.length === 1 ? Number(rows[0].deliveries) : undefined;
}

interface DeliveryRow {
  outcome: string;
  replays: number;
  event_type: string;
  order_no: string | null;
  raw_body: Buffer;
  headers: Record<string, string>;
}

async function deliveryRows(channel: ChannelName, transactionId: string): Promise<DeliveryRow[]> {
  const [rows] = await pool.query<RowDataPacket[]>(
    'SELECT outcome, replays, event_type, order_no, raw_body, headers FROM callback_delivery WHERE channel = ? AND transaction_id = ? ORDER BY id',
    [channel, transactionId],
  );
  return rows.map(
    (r) => ({ ...r, headers: typeof r.headers === 'string' ? JSON.parse(r.headers) : r.headers }) as DeliveryRow,
  );
}

/** One outcome per delivery received: a row's replays repeat its outcome. */
async function outcomes(channel: ChannelName, transactionId: string): Promise<string[]> {
  return (await deliveryRows(channel, transactionId)).flatMap((r) => Array(1 + r.replays).fill(r.outcome));
}

async function outboxPayloads(orderNo: string): Promise<Array<{ type: string; payload: Record<string, unknown> }>> {
  const [rows] = await pool.query<RowDataPacket[]>(
    'SELECT type, payload FROM outbox_event WHERE order_no = ? ORDER BY id',
    [orderNo],
  );
  return rows.map((r) => ({
    type: r.type,
    payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload,
  }));
}

async function anomalyRows(orderNo: string): Promise<RowDataPacket[]> {
  const [rows] = await pool.query<RowDataPacket[]>(
    'SELECT type, order_no, channel, transaction_id, order_amount, paid_amount, currency, status FROM payment_anomaly WHERE order_no = ? ORDER BY id',
    [orderNo],
  );
  return rows.map(
    (r) => ({ ...r, order_amount: Number(r.order_amount), paid_amount: Number(r.paid_amount) }) as RowDataPacket,
  );
}

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
      expect(await orderRow(orderNo)).toEqual({
        status: 'PAID',
        amount: 8888,
        channel: name,
        transaction_id: transactionId,
        paid_at: paidAt.toISOString(),
      });

      const events = await outboxPayloads(orderNo);
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

      expect(await effects(name, transactionId, orderNo)).toEqual({
        callbacks: 1,
        deliveries: 1,
        anomalies: 0,
        outbox: 1,
      });
      expect(await deliveryCount(name, transactionId)).toBe(1);
      const [row] = await deliveryRows(name, transactionId);
      expect(row.outcome).toBe('PAID');
      expect(row.order_no).toBe(orderNo);
      expect(Buffer.compare(row.raw_body, Buffer.from(delivery.body, 'utf8'))).toBe(0);
      for (const header of channel.keptHeaders) expect(row.headers[header]).toBe(delivery.headers[header]);
    });

    it('should acknowledge later deliveries of the same payment without a second effect, and count them', async () => {
      const orderNo = await registerOrder(1999);
      const transactionId = uniqueId('T');
      const first = channel.payment({ orderNo, transactionId, amount: 1999 });
      channel.expectAck(await channel.post(first));

      // The platform's retry is a new delivery of the same transaction: new signature (WeChat: new nonce,
      // timestamp and envelope id; Alipay: new notify_id), and a lost ack may also make it re-send identical bytes.
      const resigned = channel.payment({ orderNo, transactionId, amount: 1999 });
      expect(resigned.body).not.toBe(first.body);
      channel.expectAck(await channel.post(resigned));
      channel.expectAck(await channel.post(first));

      expect(await effects(name, transactionId, orderNo)).toEqual({
        callbacks: 1,
        deliveries: 3,
        anomalies: 0,
        outbox: 1,
      });
      expect(await deliveryCount(name, transactionId)).toBe(3);
      const rows = await deliveryRows(name, transactionId);
      if (channel.identicalResendIsReplay) {
        expect(rows.map((r) => [r.outcome, r.replays])).toEqual([
          ['PAID', 1],
          ['DUPLICATE', 0],
        ]);
        expect(rows.map((r) => r.raw_body.toString('utf8'))).toEqual([first.body, resigned.body]);
      } else {
        expect(rows.map((r) => [r.outcome, r.replays])).toEqual([
          ['PAID', 0],
          ['DUPLICATE', 0],
          ['DUPLICATE', 0],
        ]);
        expect(rows.map((r) => r.raw_body.toString('utf8'))).toEqual([first.body, resigned.body, first.body]);
      }
      expect(await orderRow(orderNo)).toMatchObject({ status: 'PAID', transaction_id: transactionId });
    });

    it.each(channel.notPaying.map((v) => [v.name, v] as const))(
      'should record and acknowledge %s without paying, and still pay on the later paying notification of the same transaction',
      async (_variant, variant) => {
        const orderNo = await registerOrder(500);
        const transactionId = uniqueId('T');
        const notPaying = variant.build({ orderNo, transactionId, amount: 500 });

        channel.expectAck(await channel.post(notPaying));
        channel.expectAck(await channel.post(notPaying));

        expect(await effects(name, transactionId, orderNo)).toEqual({
          callbacks: 0,
          deliveries: 2,
          anomalies: 0,
          outbox: 0,
        });
        expect(await outcomes(name, transactionId)).toEqual(['NOT_PAYING', 'NOT_PAYING']);
        const rows = await deliveryRows(name, transactionId);
        expect(rows).toHaveLength(channel.identicalResendIsReplay ? 1 : 2);
        expect(rows[0].raw_body.toString('utf8')).toBe(notPaying.body);
        expect((await orderRow(orderNo))?.status).toBe('WAIT_PAY');

        channel.expectAck(await channel.post(channel.payment({ orderNo, transactionId, amount: 500 })));

        expect(await orderRow(orderNo)).toMatchObject({ status: 'PAID', channel: name, transaction_id: transactionId });
        expect(await effects(name, transactionId, orderNo)).toEqual({
          callbacks: 1,
          deliveries: 3,
          anomalies: 0,
          outbox: 1,
        });
        expect(await outcomes(name, transactionId)).toEqual(['NOT_PAYING', 'NOT_PAYING', 'PAID']);
        expect(await deliveryCount(name, transactionId)).toBe(1);
      },
    );

    it('should record every non-paying notification in order, then pay once', async () => {
      const orderNo = await registerOrder(700);
      const transactionId = uniqueId('T');
      for (const variant of channel.notPaying) {
        channel.expectAck(await channel.post(variant.build({ orderNo, transactionId, amount: 700 })));
      }
      channel.expectAck(await channel.post(channel.payment({ orderNo, transactionId, amount: 700 })));

      expect(await outcomes(name, transactionId)).toEqual([...channel.notPaying.map(() => 'NOT_PAYING'), 'PAID']);
      expect(await effects(name, transactionId, orderNo)).toMatchObject({ callbacks: 1, anomalies: 0, outbox: 1 });
    });

    it('should not pay an order whose amount differs, record one AMOUNT_MISMATCH anomaly, and acknowledge', async () => {
      const orderNo = await registerOrder(10000);
      const transactionId = uniqueId('T');
      const underpaid = channel.payment({ orderNo, transactionId, amount: 100 });

      channel.expectAck(await channel.post(underpaid));
      channel.expectAck(await channel.post(channel.payment({ orderNo, transactionId, amount: 100 })));

      expect(await orderRow(orderNo)).toMatchObject({
        status: 'WAIT_PAY',
        channel: null,
        transaction_id: null,
        paid_at: null,
      });
      expect(await anomalyRows(orderNo)).toEqual([
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
      expect(await effects(name, transactionId, orderNo)).toEqual({
        callbacks: 1,
        deliveries: 2,
        anomalies: 1,
        outbox: 0,
      });
      expect(await outcomes(name, transactionId)).toEqual(['AMOUNT_MISMATCH', 'DUPLICATE']);
      expect(await deliveryCount(name, transactionId)).toBe(2);
    });

    it('should record DUPLICATE_PAYMENT for a second, different transaction on a PAID order, keeping the first', async () => {
      const orderNo = await registerOrder(2500);
      const firstTransaction = uniqueId('T');
      const secondTransaction = uniqueId('T');
      channel.expectAck(
        await channel.post(channel.payment({ orderNo, transactionId: firstTransaction, amount: 2500 })),
      );

      channel.expectAck(
        await channel.post(channel.payment({ orderNo, transactionId: secondTransaction, amount: 2500 })),
      );
      channel.expectAck(
        await channel.post(channel.payment({ orderNo, transactionId: secondTransaction, amount: 2500 })),
      );

      expect(await orderRow(orderNo)).toMatchObject({
        status: 'PAID',
        channel: name,
        transaction_id: firstTransaction,
      });
      expect(await anomalyRows(orderNo)).toEqual([
        expect.objectContaining({
          type: 'DUPLICATE_PAYMENT',
          channel: name,
          transaction_id: secondTransaction,
          order_amount: 2500,
          paid_amount: 2500,
          status: 'OPEN',
        }),
      ]);
      expect(await effects(name, secondTransaction, orderNo)).toEqual({
        callbacks: 1,
        deliveries: 2,
        anomalies: 1,
        outbox: 1,
      });
      expect(await outcomes(name, secondTransaction)).toEqual(['DUPLICATE_PAYMENT', 'DUPLICATE']);
      expect(await outcomes(name, firstTransaction)).toEqual(['PAID']);
    });

    it('should record PAID_AFTER_CLOSE for a payment of a CLOSED order, which stays CLOSED', async () => {
      const orderNo = await registerOrder(3300);
      const closed = await client.api('POST', `/payment-orders/${orderNo}/close`);
      expect(closed.status).toBe(200);
      expect(closed.json()).toMatchObject({ orderNo, status: 'CLOSED' });
      const transactionId = uniqueId('T');

      channel.expectAck(await channel.post(channel.payment({ orderNo, transactionId, amount: 3300 })));

      expect(await orderRow(orderNo)).toMatchObject({ status: 'CLOSED', channel: null, transaction_id: null });
      expect(await anomalyRows(orderNo)).toEqual([
        expect.objectContaining({
          type: 'PAID_AFTER_CLOSE',
          channel: name,
          transaction_id: transactionId,
          order_amount: 3300,
          paid_amount: 3300,
        }),
      ]);
      expect(await effects(name, transactionId, orderNo)).toEqual({
        callbacks: 1,
        deliveries: 1,
        anomalies: 1,
        outbox: 0,
      });
      expect(await outcomes(name, transactionId)).toEqual(['PAID_AFTER_CLOSE']);
    });

    it('should fail a payment for an unknown order, write nothing, and pay when the retry comes after the order exists', async () => {
      const orderNo = uniqueId('PO');
      const transactionId = uniqueId('T');
      const delivery = channel.payment({ orderNo, transactionId, amount: 4200 });

      const refused = await channel.post(delivery);
      channel.expectFailure(refused);
      expect(refused.status).not.toBe(200);
      expect(refused.status).not.toBe(204);
      expect(await effects(name, transactionId, orderNo)).toEqual(NOTHING);
      expect(await orderRow(orderNo)).toBeUndefined();

      expect((await client.registerOrder({ orderNo, amount: 4200 })).status).toBe(201);
      // The identical bytes again: the refused attempt must not have kept the payment's dedup key.
      channel.expectAck(await channel.post(delivery));

      expect(await orderRow(orderNo)).toMatchObject({ status: 'PAID', channel: name, transaction_id: transactionId });
      expect(await effects(name, transactionId, orderNo)).toEqual({
        callbacks: 1,
        deliveries: 1,
        anomalies: 0,
        outbox: 1,
      });
      expect(await deliveryCount(name, transactionId)).toBe(1);
    });

    it('should refuse a delivery whose signed content was changed by one byte, and write nothing', async () => {
      const orderNo = await registerOrder(6600);
      const transactionId = uniqueId('T');
      const genuine = channel.payment({ orderNo, transactionId, amount: 6600 });

      channel.expectFailure(await channel.post(channel.tamper(genuine)), 401);

      expect(await effects(name, transactionId, orderNo)).toEqual(NOTHING);
      expect((await orderRow(orderNo))?.status).toBe('WAIT_PAY');
      // The genuine delivery still pays: the forged one consumed nothing.
      channel.expectAck(await channel.post(genuine));
      expect(await effects(name, transactionId, orderNo)).toEqual({
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

        expect(await effects('WECHATPAY', transactionId, orderNo)).toEqual(NOTHING);
        expect((await orderRow(orderNo))?.status).toBe('WAIT_PAY');
        wechatpay.expectAck(await wechatpay.post(wechatpay.payment({ orderNo, transactionId, amount: 7700 })));
        expect(await effects('WECHATPAY', transactionId, orderNo)).toEqual({
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

      expect(await effects('WECHATPAY', transactionId, orderNo)).toEqual(NOTHING);
    });

    it('should refuse a signature made over different bytes than those received (a re-serialised body)', async () => {
      const orderNo = await registerOrder(7900);
      const transactionId = uniqueId('T');
      const genuine = wechatpay.payment({ orderNo, transactionId, amount: 7900 });
      // Same JSON value, different bytes: a verifier that re-serialises the parsed body would accept this.
      const reformatted = JSON.stringify(JSON.parse(genuine.body), null, 1);

      wechatpay.expectFailure(await wechatpay.post({ headers: genuine.headers, body: reformatted }), 401);

      expect(await effects('WECHATPAY', transactionId, orderNo)).toEqual(NOTHING);
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

      expect(await orderRow(orderNo)).toMatchObject({
        status: 'PAID',
        channel: 'WECHATPAY',
        transaction_id: transactionId,
      });
      expect(await effects('WECHATPAY', transactionId, orderNo)).toEqual({
        callbacks: 1,
        deliveries: 1,
        anomalies: 0,
        outbox: 1,
      });
      const [row] = await deliveryRows('WECHATPAY', transactionId);
      expect(row.headers['wechatpay-serial']).toBe(platforms.wechatpay.certSigner.serial);
    });

    it('should keep the deliveries of both key modes of one transaction under one dedup key', async () => {
      const orderNo = await registerOrder(1300);
      const transactionId = uniqueId('T');
      const p = { outTradeNo: orderNo, transactionId, total: 1300 };

      wechatpay.expectAck(await wechatpay.post(client.wechatpayPayment(p, { signer: platforms.wechatpay.certSigner })));
      wechatpay.expectAck(await wechatpay.post(client.wechatpayPayment(p)));

      expect(await outcomes('WECHATPAY', transactionId)).toEqual(['PAID', 'DUPLICATE']);
      expect(await effects('WECHATPAY', transactionId, orderNo)).toEqual({
        callbacks: 1,
        deliveries: 2,
        anomalies: 0,
        outbox: 1,
      });
    });

    it('should verify the exact raw bytes even when the signed body has unusual but valid JSON whitespace', async () => {
      const orderNo = await registerOrder(1400);
      const transactionId = uniqueId('T');
      const genuine = wechatpay.payment({ orderNo, transactionId, amount: 1400 });
      const body = JSON.stringify(JSON.parse(genuine.body), null, 2);
      const headers = signWechatpayBody(platforms.wechatpay.publicKeySigner, body);

      wechatpay.expectAck(await wechatpay.post({ headers, body }));

      const [row] = await deliveryRows('WECHATPAY', transactionId);
      expect(row.outcome).toBe('PAID');
      expect(row.raw_body.toString('utf8')).toBe(body);
    });
  });

  describe('ALIPAY', () => {
    it('should treat TRADE_FINISHED after TRADE_SUCCESS, and a later TRADE_SUCCESS re-send, as the same payment', async () => {
      const orderNo = await registerOrder(8888);
      const tradeNo = uniqueId('A');
      const p = { orderNo, transactionId: tradeNo, amount: 8888 };

      alipay.expectAck(await alipay.post(alipayForm(p, 'TRADE_SUCCESS')));
      alipay.expectAck(await alipay.post(alipayForm(p, 'TRADE_FINISHED')));
      // A partial refund makes Alipay send TRADE_SUCCESS again for the same trade.
      alipay.expectAck(await alipay.post(alipayForm(p, 'TRADE_SUCCESS')));

      expect(await orderRow(orderNo)).toMatchObject({ status: 'PAID', channel: 'ALIPAY', transaction_id: tradeNo });
      expect(await effects('ALIPAY', tradeNo, orderNo)).toEqual({
        callbacks: 1,
        deliveries: 3,
        anomalies: 0,
        outbox: 1,
      });
      expect(await outcomes('ALIPAY', tradeNo)).toEqual(['PAID', 'DUPLICATE', 'DUPLICATE']);
      expect((await deliveryRows('ALIPAY', tradeNo)).map((r) => r.event_type)).toEqual([
        'TRADE_SUCCESS',
        'TRADE_FINISHED',
        'TRADE_SUCCESS',
      ]);
      expect(await deliveryCount('ALIPAY', tradeNo)).toBe(3);
    });

    it('should pay on a TRADE_FINISHED that arrives first', async () => {
      const orderNo = await registerOrder(100);
      const tradeNo = uniqueId('A');

      alipay.expectAck(
        await alipay.post(alipayForm({ orderNo, transactionId: tradeNo, amount: 100 }, 'TRADE_FINISHED')),
      );

      expect(await orderRow(orderNo)).toMatchObject({ status: 'PAID', transaction_id: tradeNo });
      expect(await effects('ALIPAY', tradeNo, orderNo)).toEqual({
        callbacks: 1,
        deliveries: 1,
        anomalies: 0,
        outbox: 1,
      });
    });

    it.each([
      ['another application’s app_id', { appId: '2021000199999999' }],
      ['another seller’s seller_id', { sellerId: '2088000000000000' }],
    ])('should refuse %s with 401 and write nothing', async (_name, override) => {
      const orderNo = await registerOrder(900);
      const tradeNo = uniqueId('A');
      const body = client.alipayPayment({ outTradeNo: orderNo, tradeNo, totalAmount: '9.00', ...override });

      alipay.expectFailure(await client.postAlipay(body), 401);

      expect(await effects('ALIPAY', tradeNo, orderNo)).toEqual(NOTHING);
      expect((await orderRow(orderNo))?.status).toBe('WAIT_PAY');
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

      expect(await effects('ALIPAY', tradeNo, orderNo)).toEqual(NOTHING);
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

      expect(await effects('ALIPAY', tradeNo, orderNo)).toEqual(NOTHING);
    });
  });

  describe('across channels', () => {
    it('should record DUPLICATE_PAYMENT when an order paid by WeChat Pay is paid again by Alipay', async () => {
      const orderNo = await registerOrder(5000);
      const wechatTransaction = uniqueId('T');
      const alipayTrade = uniqueId('A');

      wechatpay.expectAck(
        await wechatpay.post(wechatpay.payment({ orderNo, transactionId: wechatTransaction, amount: 5000 })),
      );
      alipay.expectAck(await alipay.post(alipay.payment({ orderNo, transactionId: alipayTrade, amount: 5000 })));

      expect(await orderRow(orderNo)).toMatchObject({
        status: 'PAID',
        channel: 'WECHATPAY',
        transaction_id: wechatTransaction,
      });
      expect(await anomalyRows(orderNo)).toEqual([
        expect.objectContaining({
          type: 'DUPLICATE_PAYMENT',
          channel: 'ALIPAY',
          transaction_id: alipayTrade,
          paid_amount: 5000,
        }),
      ]);
      expect(await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no = ?', [orderNo])).toBe(1);
      expect(await outcomes('ALIPAY', alipayTrade)).toEqual(['DUPLICATE_PAYMENT']);
    });

    it('should keep the two channels’ dedup keys apart when their transaction ids are equal', async () => {
      const orderNo = await registerOrder(5100);
      const sharedId = uniqueId('X');

      wechatpay.expectAck(await wechatpay.post(wechatpay.payment({ orderNo, transactionId: sharedId, amount: 5100 })));
      alipay.expectAck(await alipay.post(alipay.payment({ orderNo, transactionId: sharedId, amount: 5100 })));

      expect(await outcomes('WECHATPAY', sharedId)).toEqual(['PAID']);
      expect(await outcomes('ALIPAY', sharedId)).toEqual(['DUPLICATE_PAYMENT']);
      expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE transaction_id = ?', [sharedId])).toBe(2);
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
      expect(await orderRow(orderNo)).toMatchObject({ status: 'WAIT_PAY', amount: 1999 });
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
      expect(await orderRow(hkd)).toBeUndefined();
      expect(await count(pool, 'SELECT COUNT(*) FROM order_status_change WHERE order_no = ?', [hkd])).toBe(0);
    });

    it('should answer 404 for an unknown order', async () => {
      const orderNo = uniqueId('PO');
      const answer = await client.api('GET', `/payment-orders/${orderNo}`);
      expect(answer.status).toBe(404);
      expect(answer.json().message).toEqual(expect.stringContaining(orderNo));
      expect(await orderRow(orderNo)).toBeUndefined();
    });

    it('should refuse to close a PAID order with 409, leaving it PAID', async () => {
      const orderNo = await registerOrder(600);
      const transactionId = uniqueId('T');
      wechatpay.expectAck(await wechatpay.post(wechatpay.payment({ orderNo, transactionId, amount: 600 })));

      const answer = await client.api('POST', `/payment-orders/${orderNo}/close`);
      expect(answer.status).toBe(409);
      expect(answer.json().message).toEqual(expect.stringMatching(/PAID/));
      expect(await orderRow(orderNo)).toMatchObject({ status: 'PAID', transaction_id: transactionId });
      expect(await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no = ?', [orderNo])).toBe(1);
    });

    it('should answer 404 when closing an unknown order, creating nothing', async () => {
      const orderNo = uniqueId('PO');
      expect((await client.api('POST', `/payment-orders/${orderNo}/close`)).status).toBe(404);
      expect(await orderRow(orderNo)).toBeUndefined();
    });

    it('should close a WAIT_PAY order, and answer 200 CLOSED again on a second close', async () => {
      const orderNo = await registerOrder(700);

      const first = await client.api('POST', `/payment-orders/${orderNo}/close`);
      const second = await client.api('POST', `/payment-orders/${orderNo}/close`);

      expect(first.status).toBe(200);
      expect(second.status).toBe(200);
      expect(first.json()).toMatchObject({ orderNo, status: 'CLOSED' });
      expect(second.json()).toEqual(first.json());
      expect((await orderRow(orderNo))?.status).toBe('CLOSED');
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
      expect(await orderRow(newOrderNo)).toBeUndefined();
      expect((await orderRow(orderNo))?.status).toBe('WAIT_PAY');
    });
  });
});
