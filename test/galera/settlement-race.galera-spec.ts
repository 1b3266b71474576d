import { Pool } from 'mysql2/promise';
import { VerifiedNotification } from '../../src/domain/notification';
import { OrderModule } from '../../src/order/order.module';
import { SettlementModule } from '../../src/settlement/settlement.module';
import { TradeModule } from '../../src/trade/trade.module';
import { Factories } from '../support/factories';
import { nodeDatabaseUrl, syncedPool } from '../support/galera-cluster';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { inParallel, paymentEffects, stormPayments } from '../support/payment-storm';
import { notificationsOnly, TestPlatforms } from '../support/test-app';

/**
 * The settlement itself, without HTTP, on two Galera nodes at once: many payments, each settled
 * twice through each node at the same moment. Two claims of one payment on two nodes both succeed
 * locally; certification lets the first to commit win and aborts the other, at any point of its
 * one-round-trip batch (claim → compare-and-set → history → outbox). The loser must leave nothing:
 * no second outbox event, no second history row, no anomaly. The conflicts are the service's to
 * retry; one that outlasts its retries is answered 503 by the route, and the platform delivers
 * again: the test runs such a settle again, a lock conflict only (any other error fails it), and
 * notes the payment.
 */
const ORDERS = 600;
const SETTLES_PER_NODE = 2;
const ORDERS_AT_ONCE = 12;
const ORDERS_REGISTERED_THEN_PAID = 200;

/** InnoDB's deadlock victim or lock wait timeout, which Galera's certification conflicts are reported as. */
function isLockConflict(error: unknown): boolean {
  const errno = (error as { driverError?: { errno?: number } }).driverError?.errno;
  return errno === 1213 || errno === 1205;
}

describe('a payment settled on two Galera nodes at once', () => {
  let medium: Medium;
  let platforms: TestPlatforms;
  let nodes: MediumContext[] = [];
  let pool: Pool;

  /** Payments one of whose settles met a lock conflict past the service's retries, and was run again. */
  const settledAgain = new Set<string>();

  /** Settles as the platform delivers: again after a lock conflict (the route's 503), twice at most. */
  async function settleAsPlatform(make: Factories, notification: VerifiedNotification): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await make.settle(notification);
      } catch (error) {
        if (attempt >= 3 || !isLockConflict(error)) throw error;
        settledAgain.add(notification.outTradeNo!);
      }
    }
  }

  beforeAll(async () => {
    medium = await startMedium({}, { imports: [OrderModule, SettlementModule, TradeModule], fake: false, replicas: 0 });
    platforms = medium.platforms;
    const env = { ...notificationsOnly(platforms.env), DATABASE_POOL_SIZE: '16' };
    // One after the other: the first applies the migrations, the second finds them applied.
    for (const node of [1, 2] as const) {
      nodes.push(await medium.another(() => ({ ...env, DATABASE_URL: nodeDatabaseUrl(node) })));
    }
    pool = syncedPool(1);
  });

  afterAll(async () => {
    for (const node of nodes) await node.close();
    nodes = [];
    await pool?.end();
    await medium?.close();
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
        Array.from({ length: SETTLES_PER_NODE }, () => settleAsPlatform(make, notification)),
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
    // One exception: a winner told of a conflict at its COMMIT after the cluster had committed it
    // (the route's 503) is settled again and answers DUPLICATE, so its payment has no PAID answer;
    // that happens only to a payment one of whose settles was run again.
    const paidOnce = ['PAID', ...Array<string>(2 * SETTLES_PER_NODE - 1).fill('DUPLICATE')].sort().join();
    const neverPaid = Array<string>(2 * SETTLES_PER_NODE)
      .fill('DUPLICATE')
      .join();
    const answered = payments.map((p) => ({ orderNo: p.orderNo, outcomes: outcomes.get(p.orderNo)!.join() }));
    expect(answered.filter((a) => a.outcomes !== paidOnce && a.outcomes !== neverPaid)).toEqual([]);
    const withoutPaid = answered.filter((a) => a.outcomes === neverPaid).map((a) => a.orderNo);
    expect(withoutPaid.filter((orderNo) => !settledAgain.has(orderNo))).toEqual([]);
    expect([...outcomes.values()].flat().filter((o) => o === 'PAID')).toHaveLength(ORDERS - withoutPaid.length);
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
