import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { randomAlphanumeric } from '../tools/simulator/platform-signers';
import { v2PaymentNotification } from '../tools/simulator/wechatpay/v2/v2-notifications';
import { eventually } from './support/eventually';
import { databaseProxy, databaseUrlVia, inParallel, paymentEffects, StormPayment } from './support/payment-storm';
import { TcpProxy } from './support/tcp-proxy';
import {
  createTestPlatforms,
  notificationsOnly,
  RunningApp,
  startApp,
  TestClient,
  testDatabasePool,
  TestPlatforms,
  uniqueId,
} from './support/test-app';

/** WeChat Pay v2 notifications while the database is away: acked in v2's XML from the spool, applied once after. */
const ACK = '<xml><return_code><![CDATA[SUCCESS]]></return_code><return_msg><![CDATA[OK]]></return_msg></xml>';
const API_V2_KEY = randomAlphanumeric(32);

let platforms: TestPlatforms;
let pool: Pool;
let proxy: TcpProxy;
let app: RunningApp | undefined;

beforeAll(async () => {
  platforms = await createTestPlatforms();
  pool = testDatabasePool();
  proxy = await databaseProxy();
});
afterEach(async () => {
  await proxy.stop();
  await proxy.start();
  await app?.close();
  app = undefined;
});
afterAll(async () => {
  await proxy?.stop();
  await pool?.end();
});

function startWith(extra: Record<string, string>): Promise<RunningApp> {
  return startApp({
    ...notificationsOnly(platforms.env),
    WECHATPAY_APIV2_KEY: API_V2_KEY,
    DATABASE_URL: databaseUrlVia(proxy),
    ...extra,
  });
}

async function postV2(url: string, p: StormPayment): Promise<{ status: number; body: string }> {
  const { wechatpay } = platforms;
  const xml = v2PaymentNotification(
    {
      mchid: wechatpay.mchid,
      appid: wechatpay.appid,
      outTradeNo: p.orderNo,
      transactionId: p.transactionId,
      totalFee: p.amount,
      paidAt: new Date(),
    },
    API_V2_KEY,
  );
  const response = await fetch(`${url}/notify/wechatpay-v2`, {
    method: 'POST',
    headers: { 'content-type': 'text/xml' },
    body: xml,
  });
  return { status: response.status, body: await response.text() };
}

function v2Payments(n: number): StormPayment[] {
  return Array.from({ length: n }, (_, i) => ({
    orderNo: uniqueId('V2P'),
    channel: 'WECHATPAY',
    transactionId: uniqueId('T'),
    amount: 300 + i,
  }));
}

async function register(client: TestClient, payments: StormPayment[]): Promise<void> {
  await inParallel(payments, 8, async (p) => {
    expect((await client.registerOrder({ orderNo: p.orderNo, amount: p.amount })).status).toBe(201);
  });
}

describe('WeChat Pay v2 notifications and the spool', () => {
  it('should ack them from the spool while the database is cut, and apply each payment exactly once after', async () => {
    app = await startWith({ SPOOL_DIR: mkdtempSync(join(tmpdir(), 'pcs-spool-v2-')) });
    const payments = v2Payments(20);
    await register(new TestClient(app.url, platforms), payments);

    await proxy.stop();
    const answers = await Promise.all(payments.flatMap((p) => [postV2(app!.url, p), postV2(app!.url, p)]));
    expect(answers.filter((a) => a.status !== 200 || a.body !== ACK)).toEqual([]);
    expect((await paymentEffects(pool, payments)).paidOrders).toBe(0);

    await proxy.start();
    await eventually(
      'every spooled v2 payment to be applied',
      async () => (await paymentEffects(pool, payments)).deliveries === 40,
      120_000,
    );
    expect(await paymentEffects(pool, payments)).toMatchObject({
      paidOrders: 20,
      ordersNotExactlyOnce: [],
      callbacks: 20,
      deliveries: 40,
      paidDeliveries: 20,
      anomalies: 0,
    });
    const [kept] = await pool.query<RowDataPacket[]>('SELECT raw_body FROM callback_delivery WHERE order_no = ?', [
      payments[0].orderNo,
    ]);
    expect(
      kept.every((r) =>
        Buffer.from(r.raw_body as Buffer)
          .toString('utf8')
          .startsWith('<xml>'),
      ),
    ).toBe(true);
  });

  it('should answer a v2 FAIL with 503 without SPOOL_DIR, writing nothing', async () => {
    app = await startWith({});
    const [p] = v2Payments(1);
    await register(new TestClient(app.url, platforms), [p]);
    await proxy.stop();
    const answer = await postV2(app.url, p);
    expect(answer.status).toBe(503);
    expect(answer.body).toMatch(/^<xml><return_code><!\[CDATA\[FAIL\]\]><\/return_code><return_msg><!\[CDATA\[.+/);
    await proxy.start();
    expect(await paymentEffects(pool, [p])).toMatchObject({ paidOrders: 0, callbacks: 0, deliveries: 0 });
  });
});
