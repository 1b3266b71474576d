import { Pool, RowDataPacket } from 'mysql2/promise';
import {
  count,
  createTestPlatforms,
  HttpAnswer,
  notificationsOnly,
  RunningApp,
  startApp,
  TestClient,
  TestPlatforms,
  testDatabasePool,
  uniqueId,
} from './support/test-app';

const COPIES = 12;

interface DeliveryRow extends RowDataPacket {
  outcome: string;
  replays: number;
  bytes: number;
}

const acked = (answer: HttpAnswer) => answer.status === 204;

/** The same signed WeChat sending received again, on two replicas: a replay, not a new delivery. */
describe('identical signed WeChat deliveries', () => {
  let instances: RunningApp[];
  let clients: TestClient[];
  let pool: Pool;
  let platforms: TestPlatforms;

  beforeAll(async () => {
    platforms = await createTestPlatforms();
    instances = [await startApp(notificationsOnly(platforms.env)), await startApp(notificationsOnly(platforms.env))];
    clients = instances.map((i) => new TestClient(i.url, platforms));
    pool = testDatabasePool();
  });
  afterAll(async () => {
    await Promise.all(instances?.map((i) => i.close()) ?? []);
    await pool?.end();
  });

  async function registeredPayment() {
    const orderNo = uniqueId('RP');
    expect((await clients[0].registerOrder({ orderNo, amount: 1234 })).status).toBe(201);
    return { orderNo, transactionId: uniqueId('T') };
  }

  async function deliveryRows(orderNo: string): Promise<DeliveryRow[]> {
    const [rows] = await pool.query<DeliveryRow[]>(
      'SELECT outcome, replays, LENGTH(raw_body) AS bytes FROM callback_delivery WHERE order_no = ? ORDER BY id',
      [orderNo],
    );
    return rows;
  }

  it(`should ack ${COPIES} copies arriving at once on two replicas, pay once, and keep the bytes once`, async () => {
    const { orderNo, transactionId } = await registeredPayment();
    const sending = clients[0].wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 1234 });

    const answers = await Promise.all(
      Array.from({ length: COPIES }, (_, i) => clients[i % clients.length].postWechatpay(sending)),
    );

    expect(answers.filter((a) => !acked(a))).toEqual([]);
    const rows = await deliveryRows(orderNo);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ outcome: 'PAID', replays: COPIES - 1, bytes: Buffer.byteLength(sending.body) });
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE transaction_id = ?', [transactionId])).toBe(
      1,
    );
    expect(
      await count(pool, "SELECT COUNT(*) FROM payment_order WHERE order_no = ? AND status = 'PAID'", [orderNo]),
    ).toBe(1);
    expect(
      await count(pool, "SELECT COUNT(*) FROM order_status_change WHERE order_no = ? AND to_status = 'PAID'", [
        orderNo,
      ]),
    ).toBe(1);
  });

  it('should count a replay arriving after the payment committed without storing it again', async () => {
    const { orderNo, transactionId } = await registeredPayment();
    const sending = clients[0].wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 1234 });
    expect(acked(await clients[0].postWechatpay(sending))).toBe(true);

    expect(acked(await clients[1].postWechatpay(sending))).toBe(true);
    expect(acked(await clients[0].postWechatpay(sending))).toBe(true);

    expect(await deliveryRows(orderNo)).toEqual([
      expect.objectContaining({ outcome: 'PAID', replays: 2, bytes: Buffer.byteLength(sending.body) }),
    ]);
  });

  it('should store a retry WeChat signed afresh (new timestamp and nonce) as a delivery of its own', async () => {
    const { orderNo, transactionId } = await registeredPayment();
    const first = clients[0].wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 1234 });
    const retry = clients[1].wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 1234 });
    expect(retry.headers['wechatpay-nonce']).not.toBe(first.headers['wechatpay-nonce']);

    expect(acked(await clients[0].postWechatpay(first))).toBe(true);
    expect(acked(await clients[1].postWechatpay(retry))).toBe(true);

    expect(await deliveryRows(orderNo)).toEqual([
      expect.objectContaining({ outcome: 'PAID', replays: 0 }),
      expect.objectContaining({ outcome: 'DUPLICATE', replays: 0 }),
    ]);
  });

  it('should count replays as deliveries in the admin view of the order', async () => {
    const { orderNo, transactionId } = await registeredPayment();
    const sending = clients[0].wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 1234 });
    for (let i = 0; i < 3; i++) expect(acked(await clients[i % 2].postWechatpay(sending))).toBe(true);

    const detail = await clients[0].admin('GET', `/admin/orders/${orderNo}`, platforms.admins.viewer);
    expect(detail.status).toBe(200);
    expect((JSON.parse(detail.body) as { deliveries: unknown }).deliveries).toMatchObject({
      count: 3,
      items: [{ outcome: 'PAID' }],
    });
  });
});
