import { Pool, RowDataPacket } from 'mysql2/promise';
import { AppProcess, startAppProcess } from './support/app-process';
import { sleep } from './support/eventually';
import {
  deliver,
  inParallel,
  isAck,
  paymentEffects,
  registerAll,
  StormPayment,
  stormPayments,
} from './support/payment-storm';
import { createTestPlatforms, notificationsOnly, TestClient, testDatabasePool } from './support/test-app';

const PAYMENTS = 120;
const DELIVERIES_EACH = 3;
/** The instance is killed as soon as this many payments have been acked: well before the storm ends. */
const ACKS_BEFORE_KILL = 12;

/** Every delivery of every payment, shuffled, as platforms retrying on their own clocks send them. */
function shuffledDeliveries(payments: StormPayment[]): StormPayment[] {
  const all = payments.flatMap((p) => Array.from({ length: DELIVERIES_EACH }, () => p));
  for (let i = all.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [all[i], all[j]] = [all[j], all[i]];
  }
  return all;
}

/**
 * The process that acks payments is SIGKILLed in the middle of a storm of concurrent deliveries,
 * with transactions in flight. Whatever it acked before it died must be committed and on record:
 * the order PAID, with the delivery that paid it, before any platform delivers again.
 */
describe('an instance SIGKILLed while it serves a storm of payments', () => {
  let pool: Pool;
  let child: AppProcess | undefined;

  beforeAll(() => {
    pool = testDatabasePool();
  });
  afterAll(async () => {
    child?.child.kill('SIGKILL');
    await child?.exited;
    await pool?.end();
  });

  it('should have committed every payment it acked, with the delivery that paid it, and pay the rest once after a restart', async () => {
    const platforms = await createTestPlatforms();
    const env = notificationsOnly(platforms.env);
    child = await startAppProcess(env);
    const killed = child;
    const client = new TestClient(killed.url, platforms);
    const payments = stormPayments(PAYMENTS, 'SK');
    await registerAll(client, payments);

    const acked = new Set<StormPayment>();
    let killedAt: number | undefined;
    await inParallel(shuffledDeliveries(payments), 16, async (p) => {
      if (killedAt !== undefined) return;
      try {
        if (isAck(p, await deliver(client, p))) acked.add(p);
      } catch {
        return; // the connection died with the process: not acked
      }
      if (acked.size >= ACKS_BEFORE_KILL && killedAt === undefined) {
        killedAt = Date.now();
        killed.child.kill('SIGKILL');
      }
    });
    expect(await killed.exited).toBe('SIGKILL');

    // Read before anything is delivered again: nothing but the killed process can have written these.
    const ackedOrders = [...acked].map((p) => p.orderNo);
    expect(acked.size).toBeGreaterThanOrEqual(ACKS_BEFORE_KILL);
    expect(acked.size).toBeLessThan(PAYMENTS); // the kill came in the middle of the storm
    const [rows] = await pool.query<Array<RowDataPacket & { order_no: string; paid_deliveries: number }>>(
      `SELECT o.order_no,
         (SELECT COUNT(*) FROM callback_delivery d
           WHERE d.order_no = o.order_no AND d.outcome = 'PAID') AS paid_deliveries
       FROM payment_order o WHERE o.order_no IN (?) AND o.status = 'PAID'`,
      [ackedOrders],
    );
    const committed = new Map(rows.map((r) => [r.order_no, Number(r.paid_deliveries)]));
    expect(ackedOrders.filter((orderNo) => committed.get(orderNo) !== 1)).toEqual([]);
    const paidDeliveryOf = await pool.query<Array<RowDataPacket & { transaction_id: string }>>(
      `SELECT transaction_id FROM callback_delivery WHERE order_no IN (?) AND outcome = 'PAID'`,
      [ackedOrders],
    );
    expect(new Set(paidDeliveryOf[0].map((r) => r.transaction_id))).toEqual(
      new Set([...acked].map((p) => p.transactionId)),
    );

    // A new instance; the platforms go on delivering what was never acked.
    child = await startAppProcess(env);
    const restarted = new TestClient(child.url, platforms);
    // As a platform retries (for hours): again after a refusal, every 200 ms, for up to 30 s here.
    await inParallel(payments, 8, async (p) => {
      const deadline = Date.now() + 30_000;
      while (!isAck(p, await deliver(restarted, p))) {
        if (Date.now() > deadline) throw new Error(`${p.orderNo} was never acked in 30 s after the restart`);
        await sleep(200);
      }
    });
    expect(await paymentEffects(pool, payments)).toMatchObject({
      paidOrders: PAYMENTS,
      ordersNotExactlyOnce: [],
      paidTransitions: PAYMENTS,
      outboxEvents: PAYMENTS,
      callbacks: PAYMENTS,
      paidDeliveries: PAYMENTS,
      anomalies: 0,
    });
  });
});
