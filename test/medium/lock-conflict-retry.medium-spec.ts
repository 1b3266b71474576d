import { Pool, RowDataPacket } from 'mysql2/promise';
import { PlatformReply } from '../../src/channels/payment-channel';
import { INTAKE_MODULES } from '../support/medium-intake';
import { Medium, Replica, startMedium } from '../support/medium';
import { count, notificationsOnly, uniqueId } from '../support/test-app';

/**
 * A lock conflict (InnoDB's deadlock victim, 1213, or a lock wait timeout, 1205) aborts a
 * payment's transaction; the service runs it again itself instead of handing a 5xx to the
 * platform. The conflict is injected by a trigger on the order's compare-and-set, which every
 * attempt at the payment's transaction runs once: it counts each attempt in a MyISAM table (whose
 * writes no rollback undoes) and raises the error on the first `failures` attempts only. The
 * tests look at the reply, the rows and that count, whatever statements the service sends.
 */
let medium: Medium;
let instance: Replica;
let pool: Pool;

beforeAll(async () => {
  medium = await startMedium((p) => notificationsOnly(p.env), { imports: INTAKE_MODULES, fake: false });
  ({ ctx: instance, pool } = medium);
  await pool.query(
    'CREATE TABLE test_conflict_attempt (order_no VARCHAR(64) PRIMARY KEY, attempts INT NOT NULL) ENGINE=MyISAM',
  );
});
afterAll(async () => {
  await pool?.query('DROP TABLE IF EXISTS test_conflict_attempt');
  await medium?.close();
});

const CONFLICTS = {
  deadlock: `SQLSTATE '40001' SET MYSQL_ERRNO = 1213, MESSAGE_TEXT = 'Deadlock found when trying to get lock; try restarting transaction'`,
  lockWaitTimeout: `SQLSTATE 'HY000' SET MYSQL_ERRNO = 1205, MESSAGE_TEXT = 'Lock wait timeout exceeded; try restarting transaction'`,
};

/** Runs `work` while the order's compare-and-set meets `conflict` on its first `failures` attempts. */
async function withConflicts<T>(
  orderNo: string,
  conflict: keyof typeof CONFLICTS,
  failures: number,
  work: () => Promise<T>,
): Promise<T> {
  await pool.query('INSERT INTO test_conflict_attempt (order_no, attempts) VALUES (?, 0)', [orderNo]);
  await pool.query(
    `CREATE TRIGGER inject_lock_conflict BEFORE UPDATE ON payment_order FOR EACH ROW
     BEGIN
       IF NEW.order_no = ${pool.escape(orderNo)} THEN
         UPDATE test_conflict_attempt SET attempts = attempts + 1 WHERE order_no = NEW.order_no;
         IF (SELECT attempts FROM test_conflict_attempt WHERE order_no = NEW.order_no) <= ${failures} THEN
           SIGNAL ${CONFLICTS[conflict]};
         END IF;
       END IF;
     END`,
  );
  try {
    return await work();
  } finally {
    await pool.query('DROP TRIGGER IF EXISTS inject_lock_conflict');
  }
}

async function attempts(orderNo: string): Promise<number> {
  return count(pool, 'SELECT attempts FROM test_conflict_attempt WHERE order_no = ?', [orderNo]);
}

async function effects(orderNo: string, transactionId: string) {
  const [[order]] = await pool.query<Array<RowDataPacket & { status: string }>>(
    'SELECT status FROM payment_order WHERE order_no = ?',
    [orderNo],
  );
  const [outcomes] = await pool.query<Array<RowDataPacket & { outcome: string }>>(
    'SELECT outcome FROM callback_delivery WHERE transaction_id = ? ORDER BY id',
    [transactionId],
  );
  return {
    status: order.status,
    claims: await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE transaction_id = ?', [transactionId]),
    deliveries: outcomes.map((o) => o.outcome),
    transitions: await count(
      pool,
      `SELECT COUNT(*) FROM order_status_change WHERE order_no = ? AND to_status = 'PAID'`,
      [orderNo],
    ),
    events: await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no = ?', [orderNo]),
  };
}

const PAID_ONCE = { status: 'PAID', claims: 1, deliveries: ['PAID'], transitions: 1, events: 1 };

async function newPayment(amount: number) {
  const orderNo = uniqueId('LC');
  await instance.make.order({ orderNo, amount });
  return { orderNo, transactionId: uniqueId('T'), amount };
}

const wechatpay = (p: { orderNo: string; transactionId: string; amount: number }): Promise<PlatformReply> =>
  instance.wechatpay(
    instance.signed.wechatpayPayment({ outTradeNo: p.orderNo, transactionId: p.transactionId, total: p.amount }),
  );

it("should run a payment's transaction again when it was a deadlock's victim, and ack it once it commits", async () => {
  const p = await newPayment(1100);

  const reply = await withConflicts(p.orderNo, 'deadlock', 1, () => wechatpay(p));

  expect(reply.status).toBe(204);
  expect(await attempts(p.orderNo)).toBe(2);
  expect(await effects(p.orderNo, p.transactionId)).toEqual(PAID_ONCE);
});

it("should run a payment's transaction again after a lock wait timeout, and ack it once it commits", async () => {
  const p = await newPayment(1200);
  const form = instance.signed.alipayPayment({ outTradeNo: p.orderNo, tradeNo: p.transactionId, totalAmount: '12.00' });

  const reply = await withConflicts(p.orderNo, 'lockWaitTimeout', 1, () => instance.alipay(form));

  expect([reply.status, reply.body]).toEqual([200, 'success']);
  expect(await attempts(p.orderNo)).toBe(2);
  expect(await effects(p.orderNo, p.transactionId)).toEqual(PAID_ONCE);
});

it('should stop after a bounded number of attempts when every one meets a conflict, and ack nothing', async () => {
  const p = await newPayment(1300);

  const reply = await withConflicts(p.orderNo, 'deadlock', 1000, () => wechatpay(p));

  expect(reply.status).toBeGreaterThanOrEqual(500);
  // Retried, but not without end: a bound (a handful of attempts), not a particular count, is the promise.
  expect(await attempts(p.orderNo)).toBeGreaterThan(1);
  expect(await attempts(p.orderNo)).toBeLessThanOrEqual(10);
  expect(await effects(p.orderNo, p.transactionId)).toEqual({
    status: 'WAIT_PAY',
    claims: 0,
    deliveries: [],
    transitions: 0,
    events: 0,
  });

  // Once the conflicts are gone, the platform's next delivery pays it.
  expect((await wechatpay(p)).status).toBe(204);
  expect(await effects(p.orderNo, p.transactionId)).toEqual(PAID_ONCE);
});
