import { Pool, RowDataPacket } from 'mysql2/promise';
import { NotifyTransactionInterceptor } from '../src/intake/notify-transaction.interceptor';
import { generateRsaKeyPair } from '../tools/simulator/platform-signers';
import {
  count,
  createTestPlatforms,
  notificationsOnly,
  RunningApp,
  startApp,
  TestClient,
  TestPlatforms,
  testDatabasePool,
  uniqueId,
} from './support/test-app';

/** Counts the transactions the notify route's transactional interceptor opens, in one running app. */
function countTransactions(app: RunningApp): () => number {
  const interceptor = app.app.get(NotifyTransactionInterceptor);
  const intercept = interceptor.intercept.bind(interceptor);
  let opened = 0;
  interceptor.intercept = (handler) => {
    opened++;
    return intercept(handler);
  };
  return () => opened;
}

/**
 * A repeat of a payment this replica saw commit is acked without a transaction
 * (CommittedRepeatFastPath); a first delivery and a repeat this replica has not seen go through
 * the notify route's transactional interceptor; a forgery is refused, in the channel's format,
 * before either.
 */
describe('known repeats without a transaction', () => {
  let platforms: TestPlatforms;
  let running: RunningApp;
  let replica: RunningApp;
  let client: TestClient;
  let replicaClient: TestClient;
  let pool: Pool;
  const transactionsOf = new Map<RunningApp, () => number>();

  beforeAll(async () => {
    platforms = await createTestPlatforms();
    running = await startApp(notificationsOnly(platforms.env));
    replica = await startApp(notificationsOnly(platforms.env));
    transactionsOf.set(running, countTransactions(running));
    transactionsOf.set(replica, countTransactions(replica));
    client = new TestClient(running.url, platforms);
    replicaClient = new TestClient(replica.url, platforms);
    pool = testDatabasePool();
  });
  afterAll(async () => {
    await running?.close();
    await replica?.close();
    await pool?.end();
  });

  const transactions = (app: RunningApp) => transactionsOf.get(app)!();

  async function outcomes(transactionId: string): Promise<string[]> {
    const [rows] = await pool.query<RowDataPacket[]>(
      'SELECT outcome FROM callback_delivery WHERE transaction_id = ? ORDER BY id',
      [transactionId],
    );
    return rows.map((r) => String(r.outcome));
  }

  async function paidOrder(): Promise<{ orderNo: string; transactionId: string }> {
    const orderNo = uniqueId('KR');
    const transactionId = uniqueId('T');
    expect((await client.registerOrder({ orderNo, amount: 1500 })).status).toBe(201);
    const before = transactions(running);
    expect((await client.postWechatpay(payment(client, orderNo, transactionId))).status).toBe(204);
    expect(transactions(running)).toBe(before + 1);
    return { orderNo, transactionId };
  }

  const payment = (via: TestClient, orderNo: string, transactionId: string) =>
    via.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 1500 });

  it('should ack the repeats of a payment it saw commit without a transaction, recording each one', async () => {
    const { orderNo, transactionId } = await paidOrder();
    const before = transactions(running);

    for (let i = 0; i < 3; i++) {
      expect((await client.postWechatpay(payment(client, orderNo, transactionId))).status).toBe(204);
    }

    expect(transactions(running)).toBe(before);
    expect(await outcomes(transactionId)).toEqual(['PAID', 'DUPLICATE', 'DUPLICATE', 'DUPLICATE']);
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE transaction_id = ?', [transactionId])).toBe(
      1,
    );
    expect(await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no = ?', [orderNo])).toBe(1);
  });

  it("should send another replica's first sight of the repeat through a transaction, which the database calls a duplicate", async () => {
    const { orderNo, transactionId } = await paidOrder();
    const before = transactions(replica);

    expect((await replicaClient.postWechatpay(payment(replicaClient, orderNo, transactionId))).status).toBe(204);
    expect((await replicaClient.postWechatpay(payment(replicaClient, orderNo, transactionId))).status).toBe(204);

    // The first went through a transaction; it taught the replica, whose next repeat did not.
    expect(transactions(replica)).toBe(before + 1);
    expect(await outcomes(transactionId)).toEqual(['PAID', 'DUPLICATE', 'DUPLICATE']);
  });

  it("should refuse a forged repeat of a known payment before any transaction, in the channel's format, writing nothing", async () => {
    const { orderNo, transactionId } = await paidOrder();
    const forger = { ...platforms.wechatpay.publicKeySigner, privateKey: generateRsaKeyPair().privateKey };
    const before = transactions(running);

    const answer = await client.postWechatpay(
      client.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 1500 }, { signer: forger }),
    );

    expect(answer.status).toBe(401);
    expect(answer.json()).toEqual({ code: 'FAIL', message: expect.stringContaining('does not verify') });
    expect(transactions(running)).toBe(before);
    expect(await outcomes(transactionId)).toEqual(['PAID']);
  });
});
