import { Connection, createConnection, Pool, RowDataPacket } from 'mysql2/promise';
import { PlatformReply } from '../../src/channels/payment-channel';
import { waitFor } from '../support/eventually';
import { Medium, Replica, startMedium } from '../support/medium';
import { INTAKE_MODULES } from '../support/medium-intake';
import { databaseProxy, databaseUrlVia } from '../support/payment-storm';
import { TcpProxy } from '../support/tcp-proxy';
import { count, notificationsOnly, uniqueId } from '../support/test-app';

/**
 * The platform hears "success" only after the payment's COMMIT has succeeded. These tests hold the
 * COMMIT itself, on the server (MariaDB's BACKUP STAGE BLOCK_COMMIT: statements still run, no
 * transaction can commit), so the payment has done all its writes and waits for nothing but its
 * commit; then they lose the commit's answer on the wire (a TCP proxy that drops the server's
 * answers, then cuts the connection). They look at the reply and at the database only, whatever
 * statements the service sends. The block is server-wide, so that it would stall every other suite's
 * commits on the same server: this suite runs alone, after the others (`npm run test:serial`, which
 * the README's test command, tools/test.sh, runs after `npm test`).
 */
let medium: Medium;
let instance: Replica;
let proxy: TcpProxy;
let pool: Pool;

beforeAll(async () => {
  proxy = await databaseProxy();
  medium = await startMedium((p) => ({ ...notificationsOnly(p.env), DATABASE_URL: databaseUrlVia(proxy) }), {
    imports: INTAKE_MODULES,
    fake: false,
  });
  ({ ctx: instance, pool } = medium);
});
afterAll(async () => {
  await instance?.close();
  await proxy?.stop();
  await medium?.close();
});

/** No transaction on the server can commit while this is held; statements, reads and writes, still run. */
async function blockCommits(): Promise<{ release(): Promise<void> }> {
  const admin: Connection = await createConnection({ uri: process.env.DATABASE_URL! });
  await admin.query('BACKUP STAGE START');
  await admin.query('BACKUP STAGE BLOCK_COMMIT');
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      try {
        await admin.query('BACKUP STAGE END');
      } finally {
        await admin.end();
      }
    },
  };
}

/**
 * Waits until one of the test database's sessions waits to commit a transaction that has written
 * rows: the payment has run every statement it had and now waits for its COMMIT alone.
 */
async function commitWaiting(): Promise<void> {
  // Usually well under a second; seen to take 9 s, and once more than 15 s, before the payment reached its COMMIT.
  await waitFor(
    'a transaction that has written rows to wait for its commit',
    async () => {
      const [rows] = await pool.query<RowDataPacket[]>(
        `SELECT p.ID FROM information_schema.PROCESSLIST p
         JOIN information_schema.INNODB_TRX t ON t.trx_mysql_thread_id = p.ID
        WHERE p.DB = DATABASE() AND p.STATE = 'Waiting for backup lock' AND t.trx_rows_modified > 0`,
      );
      return rows.length > 0;
    },
    60_000,
  );
}

/** The reply, and whether it has come yet. */
function watched(reply: Promise<PlatformReply>): { reply: Promise<PlatformReply>; answered: () => boolean } {
  let answered = false;
  void reply.finally(() => (answered = true));
  return { reply, answered: () => answered };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
    events: await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no = ?', [orderNo]),
  };
}

async function newOrder(amount: number): Promise<{ orderNo: string; transactionId: string; amount: number }> {
  const orderNo = uniqueId('CA');
  await instance.make.order({ orderNo, amount });
  return { orderNo, transactionId: uniqueId('T'), amount };
}

const delivery = (p: { orderNo: string; transactionId: string; amount: number }) =>
  instance.wechatpay(
    instance.signed.wechatpayPayment({ outTradeNo: p.orderNo, transactionId: p.transactionId, total: p.amount }),
  );

it('should send no ack while the payment waits for its COMMIT, and ack once it has committed', async () => {
  const payment = await newOrder(800);
  const commits = await blockCommits();
  try {
    const first = watched(delivery(payment));
    await commitWaiting();
    // The payment's writes are done and only its COMMIT waits: a reply now would ack an uncommitted payment.
    await sleep(300);
    expect(first.answered()).toBe(false);
    expect(await effects(payment.orderNo, payment.transactionId)).toEqual({
      status: 'WAIT_PAY',
      claims: 0,
      deliveries: [],
      events: 0,
    });

    await commits.release();
    expect((await first.reply).status).toBe(204);
  } finally {
    await commits.release();
  }
  expect(await effects(payment.orderNo, payment.transactionId)).toEqual({
    status: 'PAID',
    claims: 1,
    deliveries: ['PAID'],
    events: 1,
  });
});

it("should answer 503 when the COMMIT's answer is lost, and record the platform's retry as a duplicate of the one payment", async () => {
  const payment = await newOrder(900);
  let lost: PlatformReply;
  try {
    // The server will commit, but the service never hears it: a payment is one round trip, its
    // procedure commits on the server, and the answer to that call (the COMMIT's) is lost on the wire.
    proxy.dropAnswers();
    const first = watched(delivery(payment));
    await waitFor('the payment to commit on the server', async () => {
      return (await effects(payment.orderNo, payment.transactionId)).status === 'PAID';
    });
    expect(first.answered()).toBe(false);
    proxy.cut();
    proxy.passAnswers();
    lost = await first.reply;
  } finally {
    proxy.passAnswers();
  }

  // Not acked: the service cannot know the payment took effect, so the platform must deliver again.
  expect(lost.status).toBe(503);
  expect(lost.body).toEqual({ code: 'FAIL', message: expect.any(String) });
  expect(await effects(payment.orderNo, payment.transactionId)).toEqual({
    status: 'PAID',
    claims: 1,
    deliveries: ['PAID'],
    events: 1,
  });

  expect((await delivery(payment)).status).toBe(204);
  expect(await effects(payment.orderNo, payment.transactionId)).toEqual({
    status: 'PAID',
    claims: 1,
    deliveries: ['PAID', 'DUPLICATE'],
    events: 1,
  });
});
