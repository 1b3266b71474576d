import { Pool, RowDataPacket } from 'mysql2/promise';
import {
  EXAMPLE_CONSUMERS,
  ExchangeTap,
  handlerQueuesConsumed,
  TEST_RABBITMQ_URL,
  testExchange,
} from '../support/amqp-tap';
import { AppProcess, startAppProcess } from '../support/app-process';
import { eventually, sleep } from '../support/eventually';
import {
  clusterStatus,
  GaleraNode,
  killNode,
  NodeProxy,
  startNode,
  syncedPool,
  waitClusterWhole,
} from '../support/galera-cluster';
import {
  deliver,
  inParallel,
  isAck,
  paymentEffects,
  registerAll,
  StormPayment,
  stormPayments,
} from '../support/payment-storm';
import { count, createTestPlatforms, HttpAnswer, TestClient, TestPlatforms } from '../support/test-app';

/**
 * Two replicas of the service, each writing through its own Galera node (behind a TCP proxy that
 * stands for the load balancer), receive every payment several times at once, half through each:
 * the conflicting claims meet at COMMIT (certification), not at the INSERT.
 */
const ORDERS = 40;
const DELIVERIES_PER_NODE = 3;
const ORDERS_AT_ONCE = 6;
/** A platform retries a delivery it got no ack for; these bound the test's retries. */
const MAX_ATTEMPTS = 20;
const ANSWER_BOUND_MS = 30_000;
/** What the example consumers do once per event (their effects' tables). */
const EXAMPLE_EFFECT_TABLES = ['points_grant', 'coupon_issue', 'shipment_request'];

interface Replica {
  proxy: NodeProxy;
  process: AppProcess;
  client: TestClient;
}

describe('exactly once on a three-node Galera cluster', () => {
  let platforms: TestPlatforms;
  let pool: Pool;
  let tap: ExchangeTap;
  let exchange: string;
  const replicas: Replica[] = [];
  const answers: Array<{ status: number; ms: number; body: string }> = [];
  const acked = new Set<string>();
  /** While set, the platforms hold every delivery and retry they have not sent yet (see `platformsPaused`). */
  let paused: Promise<void> | undefined;
  /** The node this suite killed and has not brought back yet: afterAll brings it back for the suites after this one. */
  let nodeDown: GaleraNode | undefined;

  async function startReplica(node: GaleraNode): Promise<Replica> {
    const proxy = await NodeProxy.to(node);
    const process = await startAppProcess({
      ...platforms.env,
      DATABASE_URL: proxy.databaseUrl,
      RABBITMQ_URL: TEST_RABBITMQ_URL,
      RABBITMQ_EXCHANGE: exchange,
      EXAMPLE_HANDLERS: 'true',
      OUTBOX_POLL_INTERVAL_MS: '50',
      RECONCILE_AT: 'off',
      DATABASE_QUERY_TIMEOUT_MS: '10000',
      DATABASE_POOL_ACQUIRE_TIMEOUT_MS: '10000',
    });
    return { proxy, process, client: new TestClient(process.url, platforms) };
  }

  /**
   * Delivers until the payment is acked, as the platform retries: once any delivery of the payment
   * is acked, the platform sends it no more (retries are per payment, not per delivery), so a
   * payment acked and then lost would not be paid again behind the test's back. Every answer is
   * kept for the bounds.
   */
  async function deliverUntilAcked(replica: Replica, payment: StormPayment): Promise<void> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      await paused;
      if (acked.has(payment.orderNo)) return;
      const started = Date.now();
      // A connection the app cut (status 0) counts as no ack, as for the platform.
      const answer = await deliver(replica.client, payment).catch((error: Error): HttpAnswer => ({
        status: 0,
        body: error.message,
        json: <T>() => JSON.parse('{}') as T,
      }));
      answers.push({ status: answer.status, ms: Date.now() - started, body: answer.body });
      if (isAck(payment, answer)) {
        acked.add(payment.orderNo);
        return;
      }
      await sleep(100 * attempt);
    }
    throw new Error(
      `${payment.orderNo} was not acked in ${MAX_ATTEMPTS} deliveries through node ${replica.proxy.node}`,
    );
  }

  /** Every payment delivered DELIVERIES_PER_NODE times through each replica, all at once. */
  async function storm(payments: StormPayment[]): Promise<void> {
    await inParallel(payments, ORDERS_AT_ONCE, async (payment) => {
      await Promise.all(
        replicas.flatMap((replica) =>
          Array.from({ length: DELIVERIES_PER_NODE }, () => deliverUntilAcked(replica, payment)),
        ),
      );
    });
  }

  async function expectExactlyOnce(payments: StormPayment[]): Promise<void> {
    const effects = await paymentEffects(pool, payments);
    expect(effects.ordersNotExactlyOnce).toEqual([]);
    expect(effects).toMatchObject({
      paidOrders: payments.length,
      callbacks: payments.length,
      paidTransitions: payments.length,
      outboxEvents: payments.length,
      paidDeliveries: payments.length,
      anomalies: 0,
    });
    // Each payment's one event reaches the broker; a second publication would carry the same event id.
    const orderNos = new Set(payments.map((p) => p.orderNo));
    await tap.waitFor(
      () =>
        new Set(tap.messages.filter((m) => orderNos.has(String(m.body.orderNo))).map((m) => m.body.orderNo)).size ===
        payments.length,
      60_000,
      'every payment event at the broker',
    );
    const [events] = await pool.query<RowDataPacket[]>('SELECT event_id FROM outbox_event WHERE order_no IN (?)', [
      [...orderNos],
    ]);
    const published = new Set(tap.messages.filter((m) => orderNos.has(String(m.body.orderNo))).map((m) => m.messageId));
    expect([...published].sort()).toEqual(events.map((e) => e.event_id as string).sort());
    // Relays on two nodes may both claim an event (SKIP LOCKED locks one node's rows) and publish it
    // twice under its one event id; the consumers, on both replicas, still take each effect once.
    for (const table of EXAMPLE_EFFECT_TABLES) {
      const effects = () => count(pool, `SELECT COUNT(*) FROM ${table} WHERE order_no IN (?)`, [[...orderNos]]);
      await eventually(`one ${table} row per payment`, async () => (await effects()) >= payments.length, 60_000);
      expect(await effects()).toBe(payments.length);
    }
  }

  /** Registers the orders through node 1, and waits until node 2 has them too. */
  async function registerOrders(payments: StormPayment[]): Promise<void> {
    await registerAll(replicas[0].client, payments);
    const node2 = syncedPool(2);
    try {
      const orderNos = payments.map((p) => p.orderNo);
      expect(await count(node2, 'SELECT COUNT(*) FROM payment_order WHERE order_no IN (?)', [orderNos])).toBe(
        payments.length,
      );
    } finally {
      await node2.end();
    }
  }

  beforeAll(async () => {
    platforms = await createTestPlatforms();
    exchange = testExchange();
    tap = await ExchangeTap.bind(exchange);
    pool = syncedPool(1);
    // One migrator first, as the Kubernetes Job runs before the Deployment; the second finds nothing to do.
    replicas.push(await startReplica(1));
    replicas.push(await startReplica(2));
    await eventually('the example consumers to consume', () => handlerQueuesConsumed(exchange), 90_000);
  });

  afterAll(async () => {
    if (nodeDown !== undefined) await startNode(nodeDown);
    for (const replica of replicas) {
      replica.process.child.kill('SIGKILL');
      await replica.process.exited;
      await replica.proxy.stop();
    }
    await tap?.close(EXAMPLE_CONSUMERS);
    await pool?.end();
  });

  it('claims, pays and publishes each payment once when both replicas take every delivery at once', async () => {
    const payments = stormPayments(ORDERS, 'GS');
    await registerOrders(payments);

    await storm(payments);

    await expectExactlyOnce(payments);
    // The claims' certification conflicts are the service's to retry: no delivery was turned away.
    expect(answers.filter((a) => a.status !== 204 && !(a.status === 200 && a.body === 'success'))).toEqual([]);
    expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(ANSWER_BOUND_MS);
  });

  it('loses no acked payment when the node under one replica dies mid-storm, and the node rejoins', async () => {
    const payments = stormPayments(ORDERS, 'GK');
    await registerOrders(payments);
    acked.clear();
    answers.length = 0;

    let stormEnded = false;
    const storming = storm(payments).finally(() => (stormEnded = true));
    await eventually('a third of the payments to be acked', () => acked.size >= ORDERS / 3, 120_000);
    // The platforms send nothing new from here until the cluster has been read: what the read
    // finds was written before the kill (or by a request already in flight then), not by a retry.
    let resume!: () => void;
    paused = new Promise((resolve) => (resume = resolve));
    const ackedBeforeKill = payments.filter((p) => acked.has(p.orderNo));
    await killNode(2);
    nodeDown = 2;
    try {
      // The kill came in the middle of the storm: payments were still unacked, deliveries still due.
      expect(stormEnded).toBe(false);
      expect(ackedBeforeKill.length).toBeLessThan(ORDERS);
      // Every payment acked before the kill is on a surviving node: PAID, with the delivery that paid it.
      const node1 = syncedPool(1);
      try {
        const [rows] = await node1.query<RowDataPacket[]>(
          `SELECT o.order_no,
             (SELECT COUNT(*) FROM callback_delivery d WHERE d.order_no = o.order_no AND d.outcome = 'PAID') AS paid_by
           FROM payment_order o WHERE o.order_no IN (?) AND o.status = 'PAID'`,
          [ackedBeforeKill.map((p) => p.orderNo)],
        );
        const paidWithDelivery = new Set(rows.filter((r) => Number(r.paid_by) === 1).map((r) => String(r.order_no)));
        expect(ackedBeforeKill.filter((p) => !paidWithDelivery.has(p.orderNo)).map((p) => p.orderNo)).toEqual([]);
      } finally {
        await node1.end();
      }
    } finally {
      // The load balancer's health check fails: the replica on node 2 now reaches node 3.
      await replicas[1].proxy.repoint(3);
      paused = undefined;
      resume();
    }
    await storming;

    await expectExactlyOnce(payments);
    expect(answers.filter((a) => a.status !== 503 && a.status >= 500)).toEqual([]);
    expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(ANSWER_BOUND_MS);

    // The node comes back, catches up from the others, and has every payment the cluster acked.
    await startNode(2);
    nodeDown = undefined;
    await waitClusterWhole();
    expect(await clusterStatus()).not.toMatch(/down/);
    const node2 = syncedPool(2);
    try {
      const effects = await paymentEffects(node2, payments);
      expect(effects.ordersNotExactlyOnce).toEqual([]);
      expect(effects.paidOrders).toBe(ORDERS);
    } finally {
      await node2.end();
    }
  });
});
