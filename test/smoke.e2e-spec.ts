import { Pool } from 'mysql2/promise';
import { count, createTestPlatforms, RunningApp, startApp, TestClient, testDatabasePool, uniqueId } from './support/test-app';

describe('smoke', () => {
  let running: RunningApp;
  let client: TestClient;
  let pool: Pool;

  beforeAll(async () => {
    const platforms = await createTestPlatforms();
    running = await startApp(platforms.env);
    client = new TestClient(running.url, platforms);
    pool = testDatabasePool();
  });
  afterAll(async () => {
    await running?.close();
    await pool?.end();
  });

  it('should pay once', async () => {
    const orderNo = uniqueId('S');
    expect((await client.registerOrder({ orderNo, amount: 8888 })).status).toBe(201);
    const w = await client.postWechatpay(client.wechatpayPayment({ outTradeNo: orderNo, transactionId: uniqueId('T'), total: 8888 }));
    expect(w.status).toBe(204);
    const orderNo2 = uniqueId('S');
    await client.registerOrder({ orderNo: orderNo2, amount: 8888 });
    const a = await client.postAlipay(client.alipayPayment({ outTradeNo: orderNo2, tradeNo: uniqueId('A'), totalAmount: '88.88' }));
    expect(a.body).toBe('success');
    expect(await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no IN (?, ?)', [orderNo, orderNo2])).toBe(2);
  });
});
