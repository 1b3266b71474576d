import { createConnection, Pool, RowDataPacket } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { PaymentNotification } from '../../src/domain/notification';
import { PayProcedure } from '../../src/settlement/pay-procedure.repository';
import { Medium, Replica, startMedium } from '../support/medium';
import { INTAKE_MODULES } from '../support/medium-intake';
import { count, notificationsOnly, uniqueId } from '../support/test-app';

/**
 * The dedup claim, the order's compare-and-set and the outbox insert must commit together or not at
 * all, and the platform must hear "success" only after the commit. These tests make the database
 * itself fail or stall between the steps (a trigger, a row lock held by the test) and look at what
 * was kept; the platform's reply is NotificationIntake.receive's.
 */
let medium: Medium;
let running: Replica;
let replica: Replica;
let pool: Pool;

beforeAll(async () => {
  medium = await startMedium((p) => notificationsOnly(p.env), { imports: INTAKE_MODULES, fake: false, replicas: 2 });
  [running, replica] = medium.replicas;
  pool = medium.pool;
});
afterAll(async () => {
  await medium?.close();
});

async function effects(orderNo: string, transactionId: string) {
  const [[order]] = await pool.query<Array<RowDataPacket & { status: string }>>(
    'SELECT status FROM payment_order WHERE order_no = ?',
    [orderNo],
  );
  return {
    status: order.status,
    claims: await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE transaction_id = ?', [transactionId]),
    deliveries: await count(pool, 'SELECT COUNT(*) FROM callback_delivery WHERE transaction_id = ?', [transactionId]),
    events: await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no = ?', [orderNo]),
  };
}

/** A trigger that makes one statement fail for one order only, as a crashed step would. */
async function withFailingTrigger(name: string, definition: string, run: () => Promise<void>): Promise<void> {
  await pool.query(`CREATE TRIGGER ${name} ${definition}`);
  try {
    await run();
  } finally {
    await pool.query(`DROP TRIGGER IF EXISTS ${name}`);
  }
}

/** A trigger body that fails `statement` (e.g. `BEFORE INSERT ON outbox_event`) for one order's rows only. */
const failingFor = (statement: string, orderNo: string) =>
  `${statement} FOR EACH ROW
   IF NEW.order_no = '${orderNo}' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'injected failure'; END IF`;
const NOTHING_KEPT = { status: 'WAIT_PAY', claims: 0, deliveries: 0, events: 0 };

const wechatpay = (via: Replica, orderNo: string, transactionId: string, total: number) =>
  via.wechatpay(via.signed.wechatpayPayment({ outTradeNo: orderNo, transactionId, total }));

it('should keep nothing, and answer failure, when the order update fails after the dedup insert', async () => {
  const orderNo = uniqueId('X');
  const transactionId = uniqueId('T');
  await running.make.order({ orderNo, amount: 500 });
  const delivery = () => wechatpay(running, orderNo, transactionId, 500);

  await withFailingTrigger('fail_pay_update', failingFor('BEFORE UPDATE ON payment_order', orderNo), async () => {
    const failed = await delivery();
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(failed.body).toEqual({ code: 'FAIL', message: expect.any(String) });
    expect(await effects(orderNo, transactionId)).toEqual(NOTHING_KEPT);
  });

  // Had the claim survived the rollback, the retry would be taken for a duplicate and never pay.
  expect((await delivery()).status).toBe(204);
  expect(await effects(orderNo, transactionId)).toEqual({ status: 'PAID', claims: 1, deliveries: 1, events: 1 });
});

it('should keep neither the claim nor the PAID status when the outbox insert fails', async () => {
  const orderNo = uniqueId('Y');
  const tradeNo = uniqueId('T');
  await running.make.order({ orderNo, amount: 1999 });
  const delivery = () =>
    running.alipay(running.signed.alipayPayment({ outTradeNo: orderNo, tradeNo, totalAmount: '19.99' }));

  await withFailingTrigger('fail_outbox_insert', failingFor('BEFORE INSERT ON outbox_event', orderNo), async () => {
    const failed = await delivery();
    expect([failed.status >= 500, failed.body]).toEqual([true, 'fail']);
    expect(await effects(orderNo, tradeNo)).toEqual(NOTHING_KEPT);
  });

  expect((await delivery()).body).toBe('success');
  expect(await effects(orderNo, tradeNo)).toEqual({ status: 'PAID', claims: 1, deliveries: 1, events: 1 });
});

it('should record the delivery that paid in the payment transaction: no record, no payment', async () => {
  const orderNo = uniqueId('R');
  const transactionId = uniqueId('T');
  await running.make.order({ orderNo, amount: 300 });
  const delivery = () => wechatpay(running, orderNo, transactionId, 300);

  // As a database node lost right after the commit would: were the record written after the
  // commit, the payment would stay and every retry would be recorded DUPLICATE, none PAID.
  await withFailingTrigger(
    'fail_delivery_record',
    failingFor('BEFORE INSERT ON callback_delivery', orderNo),
    async () => {
      const failed = await delivery();
      expect(failed.status).toBeGreaterThanOrEqual(500);
      expect(await effects(orderNo, transactionId)).toEqual(NOTHING_KEPT);
    },
  );

  expect((await delivery()).status).toBe(204);
  expect((await delivery()).status).toBe(204);
  const [outcomes] = await pool.query<Array<RowDataPacket & { outcome: string }>>(
    'SELECT outcome FROM callback_delivery WHERE transaction_id = ? ORDER BY id',
    [transactionId],
  );
  expect(outcomes.map((o) => o.outcome)).toEqual(['PAID', 'DUPLICATE']);
  expect(await effects(orderNo, transactionId)).toMatchObject({ status: 'PAID', claims: 1, events: 1 });
});

it('should hold both the claim and every duplicate unacknowledged until the order update commits', async () => {
  const orderNo = uniqueId('Z');
  const transactionId = uniqueId('T');
  await running.make.order({ orderNo, amount: 700 });

  // The test holds the order's row lock, so the first delivery stalls between its claim and its CAS.
  const blocker = await createConnection({ uri: process.env.DATABASE_URL! });
  try {
    await blocker.beginTransaction();
    await blocker.query('SELECT order_no FROM payment_order WHERE order_no = ? FOR UPDATE', [orderNo]);
    const first = wechatpay(running, orderNo, transactionId, 700);
    await waitForStatement(/^\s*UPDATE payment_order/);
    // On another instance, which cannot know the first is in flight: only the database holds it back.
    const duplicate = wechatpay(replica, orderNo, transactionId, 700);
    await waitForStatement(/^\s*INSERT INTO payment_callback/);

    let settled = 'pending';
    void Promise.all([first, duplicate]).then(
      () => (settled = 'answered'),
      () => (settled = 'failed'),
    );
    // No ack while the transaction is open: neither has answered (an answer already in has been
    // taken by the next turn of the event loop), and both are still held in their statements on the
    // server after that was read.
    await new Promise(setImmediate);
    expect(settled).toBe('pending');
    await waitForStatement(/^\s*UPDATE payment_order/);
    await waitForStatement(/^\s*INSERT INTO payment_callback/);
    expect(settled).toBe('pending');
    // Uncommitted: invisible to everyone else, because the claim lives in the stalled transaction.
    expect(await effects(orderNo, transactionId)).toEqual({ status: 'WAIT_PAY', claims: 0, deliveries: 0, events: 0 });

    await blocker.commit();
    const answers = await Promise.all([first, duplicate]);
    expect(answers.map((a) => a.status)).toEqual([204, 204]);
  } finally {
    await blocker.end();
  }
  expect(await effects(orderNo, transactionId)).toEqual({ status: 'PAID', claims: 1, deliveries: 2, events: 1 });
  const [outcomes] = await pool.query<Array<RowDataPacket & { outcome: string }>>(
    // Each instance writes its own delivery log, so the two rows may land in either order.
    'SELECT outcome FROM callback_delivery WHERE transaction_id = ? ORDER BY outcome DESC',
    [transactionId],
  );
  expect(outcomes.map((o) => o.outcome)).toEqual(['PAID', 'DUPLICATE']);
});

it('should refuse to apply a payment outside a transaction, instead of autocommitting the claim alone', async () => {
  const orderNo = uniqueId('MT');
  const transactionId = uniqueId('T');
  await running.make.order({ orderNo, amount: 100 });
  const payment: PaymentNotification = {
    channel: 'WECHATPAY',
    merchantId: 'none',
    eventType: 'TRANSACTION.SUCCESS',
    paid: true,
    outTradeNo: orderNo,
    transactionId,
    amount: 100,
    currency: 'CNY',
    paidAt: new Date(),
    rawBody: Buffer.from('{}'),
    headers: {},
  };

  // The decorator throws before the procedure is called: the async wrapper turns that into the rejection a caller awaits.
  await expect(async () => running.get(PayProcedure).call(payment, { receivedAt: new Date() })).rejects.toThrow(
    /transaction/i,
  );

  expect(await effects(orderNo, transactionId)).toEqual({ status: 'WAIT_PAY', claims: 0, deliveries: 0, events: 0 });
});

it('should run every pooled connection at READ COMMITTED without a per-transaction SET', async () => {
  const dataSource = running.get(DataSource);
  // Twenty at once, so that the pool hands out (and opens) many distinct connections.
  const levels = await Promise.all(
    Array.from({ length: 20 }, () =>
      dataSource.transaction(async (tx) => {
        const [row] = await tx.query<Array<{ level: string }>>(
          'SELECT @@tx_isolation AS level, CONNECTION_ID() AS id, SLEEP(0.05) AS pause',
        );
        return `${row.level}`;
      }),
    ),
  );
  expect(new Set(levels)).toEqual(new Set(['READ-COMMITTED']));
});

/** Waits until one of the instances' connections is executing (and so blocked in) a statement like `pattern`. */
async function waitForStatement(pattern: RegExp): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const [rows] = await pool.query<RowDataPacket[]>(
      `SELECT INFO FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND INFO IS NOT NULL`,
    );
    if (rows.some((r) => pattern.test(String(r.INFO)))) return;
    await sleep(25);
  }
  throw new Error(`no connection ever ran ${pattern}`);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
