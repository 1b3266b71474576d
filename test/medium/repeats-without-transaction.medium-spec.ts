import { Pool, RowDataPacket } from 'mysql2/promise';
import { PlatformReply } from '../../src/channels/payment-channel';
import { generateRsaKeyPair } from '../../tools/simulator/platform-signers';
import { Medium, Replica, startMedium } from '../support/medium';
import { INTAKE_MODULES } from '../support/medium-intake';
import { databaseProxy, databaseUrlVia } from '../support/payment-storm';
import { TcpProxy } from '../support/tcp-proxy';
import { count, notificationsOnly, uniqueId } from '../support/test-app';

/**
 * A repeat of a payment a replica saw commit is recorded and acked without a transaction; a first
 * delivery, and a repeat a replica has not seen commit, go through one; a forgery is refused before
 * either. Two instances on one database are two replicas, each reaching it through a TCP proxy
 * that reads the statements it sends: what counts is what went over the wire, whichever part of
 * the service sent it.
 */
let medium: Medium;
let running: Replica;
let replica: Replica;
const wireOf = new Map<Replica, TcpProxy>();
let pool: Pool;

beforeAll(async () => {
  medium = await startMedium({}, { imports: INTAKE_MODULES, fake: false, replicas: 0 });
  for (const which of ['running', 'replica'] as const) {
    const proxy = await databaseProxy();
    const instance = await medium.another((p) => ({
      ...notificationsOnly(p.env),
      DATABASE_URL: databaseUrlVia(proxy),
    }));
    wireOf.set(instance, proxy);
    if (which === 'running') running = instance;
    else replica = instance;
  }
  pool = medium.pool;
});
afterAll(async () => {
  for (const [instance, proxy] of wireOf) {
    await instance.close();
    await proxy.stop();
  }
  await medium?.close();
});

const OPENS = /^\s*(START\s+TRANSACTION|BEGIN|XA\s+START|CALL)\b|\bautocommit\s*=\s*(0|OFF)\b/i;
const ENDS = /^\s*(COMMIT|ROLLBACK)\b/i;

/**
 * The transactions `instance` sent since the last call: on each connection, from the statement
 * that opens one (START TRANSACTION, BEGIN, XA START, a stored procedure's CALL, autocommit off)
 * to its COMMIT or ROLLBACK. The outbox relay's own rounds, which run beside the deliveries on the
 * same pool and touch nothing but the outbox, are left out.
 */
function transactionsSent(instance: Replica): string[][] {
  const open = new Map<number, string[]>();
  const transactions: string[][] = [];
  for (const { connection, text } of wireOf.get(instance)!.commandsSent()) {
    const statements = text.split(/;\s*\n/);
    const current = open.get(connection);
    if (current) current.push(...statements);
    else if (statements.some((s) => OPENS.test(s))) {
      const started = [...statements];
      open.set(connection, started);
      transactions.push(started);
    }
    if (statements.some((s) => ENDS.test(s))) open.delete(connection);
  }
  const relayOnly = (t: string[]) =>
    // The relay's claim reads which enabled webhook endpoints want the events it marks.
    t.every((s) => OPENS.test(s) || ENDS.test(s) || /\b(outbox_event|webhook_endpoint)\b/.test(s)) &&
    t.some((s) => /\boutbox_event\b/.test(s));
  return transactions.filter((t) => !relayOnly(t));
}

async function outcomes(transactionId: string): Promise<string[]> {
  const [rows] = await pool.query<Array<RowDataPacket & { outcome: string }>>(
    'SELECT outcome FROM callback_delivery WHERE transaction_id = ? ORDER BY id',
    [transactionId],
  );
  return rows.map((r) => r.outcome);
}

const deliver = (to: Replica, orderNo: string, transactionId: string): Promise<PlatformReply> =>
  to.wechatpay(to.signed.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 1500 }));

/** A payment `running` has committed: one transaction went out for it. */
async function paidOrder(): Promise<{ orderNo: string; transactionId: string }> {
  const orderNo = uniqueId('KR');
  await running.make.order({ orderNo, amount: 1500 });
  const transactionId = uniqueId('T');
  transactionsSent(running);
  expect((await deliver(running, orderNo, transactionId)).status).toBe(204);
  expect(transactionsSent(running)).toHaveLength(1);
  return { orderNo, transactionId };
}

it('should ack the repeats of a payment it saw commit without sending a transaction, recording each one', async () => {
  const { orderNo, transactionId } = await paidOrder();

  for (let i = 0; i < 3; i++) expect((await deliver(running, orderNo, transactionId)).status).toBe(204);

  expect(transactionsSent(running)).toEqual([]);
  expect(await outcomes(transactionId)).toEqual(['PAID', 'DUPLICATE', 'DUPLICATE', 'DUPLICATE']);
  expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE transaction_id = ?', [transactionId])).toBe(1);
  expect(await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no = ?', [orderNo])).toBe(1);
});

it("should send another replica's first sight of the repeat through a transaction, which the database calls a duplicate", async () => {
  const { orderNo, transactionId } = await paidOrder();
  transactionsSent(replica);

  expect((await deliver(replica, orderNo, transactionId)).status).toBe(204);
  expect(transactionsSent(replica)).toHaveLength(1);
  // The first taught the replica: its next repeat goes without one.
  expect((await deliver(replica, orderNo, transactionId)).status).toBe(204);
  expect(transactionsSent(replica)).toEqual([]);
  expect(await outcomes(transactionId)).toEqual(['PAID', 'DUPLICATE', 'DUPLICATE']);
});

it("should refuse a forged repeat of a known payment in the channel's format, keeping the refusal but sending no payment transaction", async () => {
  const { orderNo, transactionId } = await paidOrder();
  const forger = { ...running.signed.platforms.wechatpay.publicKeySigner, privateKey: generateRsaKeyPair().privateKey };

  const answer = await running.wechatpay(
    running.signed.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 1500 }, { signer: forger }),
  );

  expect(answer.status).toBe(401);
  expect(answer.body).toEqual({ code: 'FAIL', message: expect.stringContaining('does not verify') });
  // The refusal is kept for an operator (refused_notification, in a transaction of its own); nothing else is sent.
  const keepsTheRefusal = (t: string[]) =>
    t.every((s) => OPENS.test(s) || ENDS.test(s) || /\brefused_notification(_hour)?\b/.test(s));
  const sent = transactionsSent(running);
  expect(sent.filter((t) => !keepsTheRefusal(t))).toEqual([]);
  expect(sent).toHaveLength(1);
  expect(await outcomes(transactionId)).toEqual(['PAID']);
});
