import { Pool } from 'mysql2/promise';
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
 * no second outbox event, no second history row, no anomaly. No settle is run again by the test:
 * the conflicts are the service's to retry (its lock-conflict retries), so every settle must end
 * with the payment's own answer.
 */
const ORDERS = 600;
const SETTLES_PER_NODE = 2;
const ORDERS_AT_ONCE = 12;
const ORDERS_REGISTERED_THEN_PAID = 200;

describe('a payment settled on two Galera nodes at once', () => {
  let platforms: TestPlatforms;
  let nodes: MediumContext[] = [];
  let pool: Pool;

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
    const outcomes = new Map<string, string[]>();
    await inParallel(payments, ORDERS_AT_ONCE, async (p) => {
      const notification = first.paymentNotification(p.channel, {
        orderNo: p.orderNo,
        transactionId: p.transactionId,
        amount: p.amount,
      });
      const settles = [first, second].flatMap((make) =>
        Array.from({ length: SETTLES_PER_NODE }, () => make.settle(notification)),
      );
      outcomes.set(p.orderNo, (await Promise.all(settles)).sort());
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
    // Every settle of every payment ended with the payment's answer: PAID once, DUPLICATE for the rest.
    const paidOnce = ['PAID', ...Array<string>(2 * SETTLES_PER_NODE - 1).fill('DUPLICATE')].sort();
    expect([...outcomes.values()].filter((each) => each.join() !== paidOnce.join())).toEqual([]);
    expect([...outcomes.values()].flat().filter((o) => o === 'PAID')).toHaveLength(ORDERS);
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
