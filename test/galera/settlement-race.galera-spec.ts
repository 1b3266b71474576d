import { Pool } from 'mysql2/promise';
import { VerifiedNotification } from '../../src/domain/notification';
import { OrderModule } from '../../src/order/order.module';
import { SettlementModule } from '../../src/settlement/settlement.module';
import { TradeModule } from '../../src/trade/trade.module';
import { Factories } from '../support/factories';
import { nodeDatabaseUrl, syncedPool } from '../support/galera-cluster';
import { createMediumModule, MediumContext } from '../support/medium';
import { inParallel, paymentEffects, stormPayments } from '../support/payment-storm';
import { createTestPlatforms, notificationsOnly, TestPlatforms } from '../support/test-app';

/**
 * The settlement itself, without HTTP, on two Galera nodes at once: many payments, each settled
 * twice through each node at the same moment. Two claims of one payment on two nodes both succeed
 * locally; certification lets the first to commit win and aborts the other, at any point of its
 * one-round-trip batch (claim → compare-and-set → history → outbox). The loser must leave nothing:
 * no second outbox event, no second history row, no anomaly.
 */
const ORDERS = 600;
const SETTLES_PER_NODE = 2;
const ORDERS_AT_ONCE = 12;
const ORDERS_REGISTERED_THEN_PAID = 200;
/** A platform retries a delivery it got no ack for: a settle that failed transiently is run again. */
const MAX_ATTEMPTS = 10;

describe('a payment settled on two Galera nodes at once', () => {
  let platforms: TestPlatforms;
  let nodes: MediumContext[] = [];
  let pool: Pool;

  async function settleUntilAnswered(make: Factories, notification: VerifiedNotification): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await make.settle(notification);
      } catch (error) {
        if (attempt === MAX_ATTEMPTS) throw error;
      }
    }
  }

  beforeAll(async () => {
    platforms = await createTestPlatforms();
    const env = { ...notificationsOnly(platforms.env), DATABASE_POOL_SIZE: '16' };
    // One after the other: the first applies the migrations, the second finds them applied.
    for (const node of [1, 2] as const) {
      nodes.push(
        await createMediumModule([OrderModule, SettlementModule, TradeModule], {
          ...env,
          DATABASE_URL: nodeDatabaseUrl(node),
        }),
      );
    }
    pool = syncedPool(1);
  });

  afterAll(async () => {
    for (const node of nodes) await node.close();
    nodes = [];
    await pool?.end();
  });

  it('claims, pays and writes the event once per payment', async () => {
    const [first, second] = nodes.map((node) => new Factories(node, platforms));
    const payments = stormPayments(ORDERS, 'GR');
    await inParallel(payments, ORDERS_AT_ONCE, async (p) => {
      await first.order({ orderNo: p.orderNo, amount: p.amount });
    });
    const outcomes: string[] = [];
    await inParallel(payments, ORDERS_AT_ONCE, async (p) => {
      const notification = first.paymentNotification(p.channel, {
        orderNo: p.orderNo,
        transactionId: p.transactionId,
        amount: p.amount,
      });
      const settles = [first, second].flatMap((make) =>
        Array.from({ length: SETTLES_PER_NODE }, () => settleUntilAnswered(make, notification)),
      );
      outcomes.push(...(await Promise.all(settles)));
    });

    const effects = await paymentEffects(pool, payments);
    expect(effects.ordersNotExactlyOnce).toEqual([]);
    expect(effects).toMatchObject({
      paidOrders: ORDERS,
      callbacks: ORDERS,
      paidTransitions: ORDERS,
      outboxEvents: ORDERS,
      anomalies: 0,
    });
    // Every settle ended with the payment's answer: PAID once, DUPLICATE for the rest.
    // Every settle ended with an answer the platform acks, PAID at most once per payment. (A winner
    // can be told of a conflict after all, when the cluster aborts it late and replays it; its retry
    // then answers DUPLICATE: acked all the same.)
    expect(outcomes.filter((o) => o !== 'PAID' && o !== 'DUPLICATE')).toEqual([]);
    expect(outcomes.filter((o) => o === 'PAID').length).toBeLessThanOrEqual(ORDERS);
  });

  it('pays, on the first try, an order registered on the other node a moment before', async () => {
    const [first, second] = nodes.map((node) => new Factories(node, platforms));
    const payments = stormPayments(ORDERS_REGISTERED_THEN_PAID, 'GC');

    // The order service registers through node 1; the buyer's payment reaches node 2 right after.
    // wsrep_sync_wait=1 makes node 2's transaction wait until it has applied node 1's commit: no
    // settle may answer "order not found", which would leave the payment to the platform's retries.
    const outcomes: string[] = [];
    await inParallel(payments, ORDERS_AT_ONCE, async (p) => {
      await first.order({ orderNo: p.orderNo, amount: p.amount });
      const notification = second.paymentNotification(p.channel, {
        orderNo: p.orderNo,
        transactionId: p.transactionId,
        amount: p.amount,
      });
      outcomes.push(await second.settle(notification));
    });

    expect(outcomes).toEqual(Array(payments.length).fill('PAID'));
    const effects = await paymentEffects(pool, payments);
    expect(effects.ordersNotExactlyOnce).toEqual([]);
    expect(effects).toMatchObject({ paidOrders: payments.length, outboxEvents: payments.length, anomalies: 0 });
  });
});
