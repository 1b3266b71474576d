import { Pool, RowDataPacket } from 'mysql2/promise';
import { NotifyModule } from '../../src/intake/notify.module';
import { OrderModule } from '../../src/order/order.module';
import { SettlementModule } from '../../src/settlement/settlement.module';
import { Settlement } from '../../src/settlement/settlement.service';
import { TradeModule } from '../../src/trade/trade.module';
import { generateRsaKeyPair } from '../../tools/simulator/platform-signers';
import { Factories } from '../support/factories';
import { MediumContext } from '../support/medium';
import { MediumSuite, startMediumSuite } from '../support/medium-suite';
import { IntakeReply, receive } from '../support/medium-intake';
import { count, notificationsOnly, TestPlatforms, uniqueId } from '../support/test-app';

/** Counts the transactions the notify use case's transactional step (Settlement.settle) opens, in one module (one replica). */
function countTransactions(ctx: MediumContext): () => number {
  const settlement = ctx.get(Settlement);
  const settle = settlement.settle.bind(settlement);
  let opened = 0;
  settlement.settle = (notification, arrival) => {
    opened++;
    return settle(notification, arrival);
  };
  return () => opened;
}

/**
 * A repeat of a payment this replica saw commit is acked without a transaction
 * (CommittedRepeatFastPath); a first delivery and a repeat this replica has not seen go through
 * the transactional step (Settlement.settle); a forgery is refused, in the channel's
 * format, before either. Two modules on one database are two replicas; deliveries are handed to
 * NotificationIntake.receive as the notify route hands them over. Moved from
 * the e2e tier with the same assertions.
 */
describe('known repeats without a transaction', () => {
  let setup: MediumSuite;
  let platforms: TestPlatforms;
  let running: MediumContext;
  let replica: MediumContext;
  let make: Factories;
  let pool: Pool;
  const transactionsOf = new Map<MediumContext, () => number>();

  beforeAll(async () => {
    setup = await startMediumSuite((p) => notificationsOnly(p.env), {
      imports: [OrderModule, SettlementModule, TradeModule, NotifyModule],
      fake: false,
      replicas: 2,
    });
    ({ platforms, make, pool } = setup);
    [running, replica] = setup.replicas;
    transactionsOf.set(running, countTransactions(running));
    transactionsOf.set(replica, countTransactions(replica));
  });
  afterAll(() => setup?.close());

  const transactions = (ctx: MediumContext) => transactionsOf.get(ctx)!();

  async function outcomes(transactionId: string): Promise<string[]> {
    const [rows] = await pool.query<RowDataPacket[]>(
      'SELECT outcome FROM callback_delivery WHERE transaction_id = ? ORDER BY id',
      [transactionId],
    );
    return rows.map((r) => String(r.outcome));
  }

  const payment = (orderNo: string, transactionId: string) =>
    make.deliveries.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 1500 });
  const post = (to: MediumContext, delivery: { headers: Record<string, string>; body: string }): Promise<IntakeReply> =>
    receive(to, 'wechatpay', delivery.headers, delivery.body);

  async function paidOrder(): Promise<{ orderNo: string; transactionId: string }> {
    const { orderNo } = await make.order({ orderNo: uniqueId('KR'), amount: 1500 });
    const transactionId = uniqueId('T');
    const before = transactions(running);
    expect((await post(running, payment(orderNo, transactionId))).status).toBe(204);
    expect(transactions(running)).toBe(before + 1);
    return { orderNo, transactionId };
  }

  it('should ack the repeats of a payment it saw commit without a transaction, recording each one', async () => {
    const { orderNo, transactionId } = await paidOrder();
    const before = transactions(running);

    for (let i = 0; i < 3; i++) {
      expect((await post(running, payment(orderNo, transactionId))).status).toBe(204);
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

    expect((await post(replica, payment(orderNo, transactionId))).status).toBe(204);
    expect((await post(replica, payment(orderNo, transactionId))).status).toBe(204);

    // The first went through a transaction; it taught the replica, whose next repeat did not.
    expect(transactions(replica)).toBe(before + 1);
    expect(await outcomes(transactionId)).toEqual(['PAID', 'DUPLICATE', 'DUPLICATE']);
  });

  it("should refuse a forged repeat of a known payment before any transaction, in the channel's format, writing nothing", async () => {
    const { orderNo, transactionId } = await paidOrder();
    const forger = { ...platforms.wechatpay.publicKeySigner, privateKey: generateRsaKeyPair().privateKey };
    const before = transactions(running);

    const answer = await post(
      running,
      make.deliveries.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 1500 }, { signer: forger }),
    );

    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toEqual({ code: 'FAIL', message: expect.stringContaining('does not verify') });
    expect(transactions(running)).toBe(before);
    expect(await outcomes(transactionId)).toEqual(['PAID']);
  });
});
