import { CallHandler, ExecutionContext, Injectable, Module, NestInterceptor } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { FastifyRequest } from 'fastify';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { Observable } from 'rxjs';
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

/** The notify requests that reached Nest's interceptor chain, per application. */
@Injectable()
class NestPipelineProbe implements NestInterceptor {
  readonly notifyRequests: string[] = [];

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const url = context.switchToHttp().getRequest<FastifyRequest>().url;
    if (url.startsWith('/notify/')) this.notifyRequests.push(url);
    return next.handle();
  }
}

@Module({ providers: [NestPipelineProbe, { provide: APP_INTERCEPTOR, useExisting: NestPipelineProbe }] })
class NestPipelineProbeModule {}

/**
 * A repeat of a payment this replica saw commit is acked before Nest's request pipeline
 * (NotificationIntake.answerKnownRepeat); a first delivery, a repeat this replica has not seen and
 * a forgery go through Nest, which answers a refusal in the channel's format.
 */
describe('known repeats before Nest', () => {
  let platforms: TestPlatforms;
  let running: RunningApp;
  let replica: RunningApp;
  let client: TestClient;
  let replicaClient: TestClient;
  let pool: Pool;

  beforeAll(async () => {
    platforms = await createTestPlatforms();
    running = await startApp(notificationsOnly(platforms.env), [NestPipelineProbeModule]);
    replica = await startApp(notificationsOnly(platforms.env), [NestPipelineProbeModule]);
    client = new TestClient(running.url, platforms);
    replicaClient = new TestClient(replica.url, platforms);
    pool = testDatabasePool();
  });
  afterAll(async () => {
    await running?.close();
    await replica?.close();
    await pool?.end();
  });

  const throughNest = (app: RunningApp) => app.app.get(NestPipelineProbe).notifyRequests.length;

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
    const before = throughNest(running);
    expect((await client.postWechatpay(payment(client, orderNo, transactionId))).status).toBe(204);
    expect(throughNest(running)).toBe(before + 1);
    return { orderNo, transactionId };
  }

  const payment = (via: TestClient, orderNo: string, transactionId: string) =>
    via.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 1500 });

  it('should ack the repeats of a payment it saw commit without Nest, recording each one', async () => {
    const { orderNo, transactionId } = await paidOrder();
    const before = throughNest(running);

    for (let i = 0; i < 3; i++) {
      expect((await client.postWechatpay(payment(client, orderNo, transactionId))).status).toBe(204);
    }

    expect(throughNest(running)).toBe(before);
    expect(await outcomes(transactionId)).toEqual(['PAID', 'DUPLICATE', 'DUPLICATE', 'DUPLICATE']);
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE transaction_id = ?', [transactionId])).toBe(
      1,
    );
    expect(await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no = ?', [orderNo])).toBe(1);
  });

  it("should send another replica's first sight of the repeat through Nest, which the database calls a duplicate", async () => {
    const { orderNo, transactionId } = await paidOrder();
    const before = throughNest(replica);

    expect((await replicaClient.postWechatpay(payment(replicaClient, orderNo, transactionId))).status).toBe(204);
    expect((await replicaClient.postWechatpay(payment(replicaClient, orderNo, transactionId))).status).toBe(204);

    // The first went through Nest and its transaction; it taught the replica, whose next repeat did not.
    expect(throughNest(replica)).toBe(before + 1);
    expect(await outcomes(transactionId)).toEqual(['PAID', 'DUPLICATE', 'DUPLICATE']);
  });

  it("should refuse a forged repeat of a known payment through Nest, in the channel's format, writing nothing", async () => {
    const { orderNo, transactionId } = await paidOrder();
    const forger = { ...platforms.wechatpay.publicKeySigner, privateKey: generateRsaKeyPair().privateKey };
    const before = throughNest(running);

    const answer = await client.postWechatpay(
      client.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 1500 }, { signer: forger }),
    );

    expect(answer.status).toBe(401);
    expect(answer.json()).toEqual({ code: 'FAIL', message: expect.stringContaining('does not verify') });
    expect(throughNest(running)).toBe(before + 1);
    expect(await outcomes(transactionId)).toEqual(['PAID']);
  });
});
