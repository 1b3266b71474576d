import { randomBytes } from 'node:crypto';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { DataSource, QueryFailedError } from 'typeorm';
import { BODY_LIMIT_BYTES } from '../../src/start/app.factory';
import { PaymentChannels } from '../../src/channels/payment-channels';
import { Channel } from '../../src/domain/notification';
import { DeliveryLog } from '../../src/payments/idempotency/delivery-log';
import { OrderStatusChange } from '../../src/order/order-status-change.entity';
import { requireTransactionAlive } from '../../src/platform/database/transaction-alive';
import { Medium, Replica, startMedium } from '../support/medium';
import { INTAKE_MODULES } from '../support/medium-intake';
import { eventually, sleep } from '../support/eventually';
import { SentCommands } from '../support/sent-commands';
import { count, notificationsOnly, uniqueId } from '../support/test-app';

/**
 * A new payment costs ONE round trip to the database: START TRANSACTION with the CALL of the payment
 * procedure (claim, compare-and-set, history, outbox, the paying delivery's record), which commits
 * inside. The suite counts the commands the driver actually sends, on two instances sharing the
 * database (deliveries handed to NotificationIntake.receive, as the notify route hands them), and
 * checks the procedure's failure paths.
 */
let medium: Medium;
let running: Replica;
let replica: Replica;
let sent: SentCommands;
let replicaSent: SentCommands;
let pool: Pool;

beforeAll(async () => {
  medium = await startMedium((p) => notificationsOnly(p.env), { imports: INTAKE_MODULES, fake: false, replicas: 2 });
  [running, replica] = medium.replicas;
  sent = SentCommands.attachTo(running.get(DataSource));
  replicaSent = SentCommands.attachTo(replica.get(DataSource));
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
    history: await count(pool, `SELECT COUNT(*) FROM order_status_change WHERE order_no = ? AND event = 'PAY'`, [
      orderNo,
    ]),
    events: await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no = ?', [orderNo]),
  };
}

async function outcomes(transactionId: string): Promise<string[]> {
  const [rows] = await pool.query<RowDataPacket[]>(
    'SELECT outcome FROM callback_delivery WHERE transaction_id = ? ORDER BY id',
    [transactionId],
  );
  return rows.map((r) => String(r.outcome));
}

async function newOrder(amount: number): Promise<{ orderNo: string; transactionId: string }> {
  const { orderNo } = await running.make.order({ orderNo: uniqueId('RT'), amount });
  return { orderNo, transactionId: uniqueId('T') };
}

const wechatpay = (via: Replica, orderNo: string, transactionId: string, total: number) =>
  via.wechatpay(via.signed.wechatpayPayment({ outTradeNo: orderNo, transactionId, total }));

describe('round trips of a payment', () => {
  it("should pay a new payment in ONE round trip: START TRANSACTION with the payment procedure's CALL, which commits", async () => {
    const { orderNo, transactionId } = await newOrder(1200);

    expect((await wechatpay(running, orderNo, transactionId, 1200)).status).toBe(204);

    const payment = sent.sending(transactionId);
    expect(payment).toEqual([expect.stringMatching(/^START TRANSACTION;\s*CALL pay_v1\(/)]);
    // Nothing ends the transaction from the client: the procedure committed it.
    expect(commandsAfter(sent, payment[0]).slice(0, 1)).not.toEqual([expect.stringMatching(/^(COMMIT|ROLLBACK)$/)]);
    expect(await effects(orderNo, transactionId)).toEqual({ status: 'PAID', claims: 1, history: 1, events: 1 });
    expect(await outcomes(transactionId)).toEqual(['PAID']);
  });

  it('should answer a duplicate on another instance in two round trips, write nothing more, and take the next payment', async () => {
    const { orderNo, transactionId } = await newOrder(1300);
    expect((await wechatpay(running, orderNo, transactionId, 1300)).status).toBe(204);

    // The replica has not seen this payment commit: only the database's unique key can tell it.
    expect((await wechatpay(replica, orderNo, transactionId, 1300)).status).toBe(204);

    const duplicate = replicaSent.transactionSending(transactionId);
    expect(duplicate).toEqual([expect.stringMatching(/^START TRANSACTION;\s*CALL pay_v1\(/), 'COMMIT']);
    expect(await outcomes(transactionId)).toEqual(['PAID', 'DUPLICATE']);
    expect(await effects(orderNo, transactionId)).toEqual({ status: 'PAID', claims: 1, history: 1, events: 1 });

    const next = await newOrder(1400);
    expect((await wechatpay(replica, next.orderNo, next.transactionId, 1400)).status).toBe(204);
    expect(await effects(next.orderNo, next.transactionId)).toEqual({
      status: 'PAID',
      claims: 1,
      history: 1,
      events: 1,
    });
  });

  it('should roll the whole payment back when a statement after the claim fails on a duplicate key', async () => {
    const { orderNo, transactionId } = await newOrder(1500);
    // A duplicate key that is not the claim's must not pass for a duplicate delivery (which commits).
    await pool.query(
      `CREATE TRIGGER fail_outbox_duplicate BEFORE INSERT ON outbox_event FOR EACH ROW
       IF NEW.order_no = '${orderNo}' THEN
         SIGNAL SQLSTATE '23000' SET MYSQL_ERRNO = 1062,
           MESSAGE_TEXT = 'Duplicate entry ''x'' for key ''uq_outbox_event_event_id''';
       END IF`,
    );
    try {
      expect((await wechatpay(running, orderNo, transactionId, 1500)).status).toBeGreaterThanOrEqual(500);
      expect(sent.transactionSending(transactionId)).toEqual([
        expect.stringMatching(/^START TRANSACTION;\s*CALL pay_v1\(/),
        'ROLLBACK',
      ]);
      expect(await effects(orderNo, transactionId)).toEqual({ status: 'WAIT_PAY', claims: 0, history: 0, events: 0 });
    } finally {
      await pool.query('DROP TRIGGER IF EXISTS fail_outbox_duplicate');
    }

    expect((await wechatpay(running, orderNo, transactionId, 1500)).status).toBe(204);
    expect(await effects(orderNo, transactionId)).toEqual({ status: 'PAID', claims: 1, history: 1, events: 1 });
  });

  it("should write the deliveries that arrive while the delivery log's INSERT waits in ONE next INSERT, in arrival order", async () => {
    const { orderNo, transactionId } = await newOrder(1600);
    expect((await wechatpay(running, orderNo, transactionId, 1600)).status).toBe(204);
    const repeats = Array.from({ length: 6 }, () =>
      running.signed.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 1600 }),
    );
    const nonces = repeats.map((r) => r.headers['wechatpay-nonce']);
    const sentBefore = sent.sent.length;

    // The first repeat's INSERT waits on the lock (sent, and the table locked); the others arrive
    // 20 ms apart, each a group of its own, and the lock goes only once every one of them is in a
    // group waiting for the next INSERT: what the machine's speed decides is only how they group.
    const log = running.get(DeliveryLog) as unknown as { formed: Array<{ group: unknown[] }> };
    const inFormedGroups = () => log.formed.reduce((n, formed) => n + formed.group.length, 0);
    const lock = await pool.getConnection();
    const answers: Promise<{ status: number }>[] = [];
    try {
      await lock.query('LOCK TABLES callback_delivery WRITE');
      const [first, ...others] = repeats;
      answers.push(running.wechatpay(first));
      await eventually('the first repeat INSERT to be sent', () =>
        sent.sent
          .slice(sentBefore)
          .some((c) => c.text.startsWith('INSERT INTO callback_delivery') && c.text.includes(nonces[0])),
      );
      for (const repeat of others) {
        answers.push(running.wechatpay(repeat));
        await sleep(20);
      }
      await eventually('the other repeats to wait for the next INSERT', () => inFormedGroups() === others.length);
    } finally {
      await lock.query('UNLOCK TABLES');
      lock.release();
    }

    expect((await Promise.all(answers)).map((a) => a.status)).toEqual(repeats.map(() => 204));
    const inserts = sent.sent.slice(sentBefore).filter((c) => c.text.startsWith('INSERT INTO callback_delivery'));
    expect(inserts.map((insert) => nonces.filter((nonce) => insert.text.includes(nonce)))).toEqual([
      nonces.slice(0, 1),
      nonces.slice(1),
    ]);
    const [rows] = await pool.query<RowDataPacket[]>(
      'SELECT headers FROM callback_delivery WHERE transaction_id = ? ORDER BY id',
      [transactionId],
    );
    const logged = rows.map(
      (r) => (typeof r.headers === 'string' ? JSON.parse(r.headers) : r.headers) as Record<string, string>,
    );
    expect(logged.slice(1).map((h) => h['wechatpay-nonce'])).toEqual(nonces);
    expect(await outcomes(transactionId)).toEqual(['PAID', ...repeats.map(() => 'DUPLICATE')]);
  });

  it("should split the delivery log's INSERTs by the bytes of the bodies, so that large bodies stay under max_allowed_packet", async () => {
    const { orderNo, transactionId } = await newOrder(1700);
    const delivery = running.signed.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 1700 });
    const verified = running
      .get(PaymentChannels)
      .get(Channel.Wechatpay)!
      .verify({ headers: delivery.headers, body: Buffer.from(delivery.body, 'utf8') });
    // 130 deliveries at the route's body limit: as hex, 128 of them in one INSERT exceed MariaDB's default 16 MiB packet.
    const large = Array.from({ length: 130 }, (_, i) => ({
      ...verified,
      rawBody: Buffer.alloc(BODY_LIMIT_BYTES, String(i % 10)),
      replayKey: randomBytes(32).toString('hex'),
    }));
    const sentBefore = sent.sent.length;

    await Promise.all(large.map((notification) => running.get(DeliveryLog).record(notification, 'DUPLICATE')));

    const inserts = sent.sent.slice(sentBefore).filter((c) => c.text.startsWith('INSERT INTO callback_delivery'));
    expect(inserts.length).toBeGreaterThanOrEqual(3);
    for (const insert of inserts) expect(insert.text.length).toBeLessThan(10 * 1024 * 1024);
    expect(await count(pool, 'SELECT COUNT(*) FROM callback_delivery WHERE transaction_id = ?', [transactionId])).toBe(
      130,
    );
  });
  it('should settle an order that did not move in the same transaction: the claim held, its anomaly, then COMMIT', async () => {
    const { orderNo, transactionId } = await newOrder(1800);

    // 1 minor unit short: the compare-and-set does not move the order.
    expect((await wechatpay(running, orderNo, transactionId, 1799)).status).toBe(204);

    expect(sent.transactionSending(transactionId)).toEqual([
      expect.stringMatching(/^START TRANSACTION;\s*CALL pay_v1\(/),
      expect.stringMatching(/^SELECT .* FROM `payment_order`.* FOR UPDATE/s),
      expect.stringMatching(/^INSERT INTO payment_anomaly/),
      'COMMIT',
    ]);
    expect(sent.sending(transactionId).filter((text) => text.includes('CALL pay_v1'))).toHaveLength(1);
    expect(await effects(orderNo, transactionId)).toEqual({ status: 'WAIT_PAY', claims: 1, history: 0, events: 0 });
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_anomaly WHERE transaction_id = ?', [transactionId])).toBe(1);
  });

  it('should write nothing, and run no statement after it, once a statement of the payment procedure fails', async () => {
    const { orderNo, transactionId } = await newOrder(1900);
    // A deadlock in the middle of the procedure, after the claim and the compare-and-set: were the
    // procedure to go on after it, the outbox row and the paying record would be written and committed.
    await pool.query(
      `CREATE TRIGGER fail_history_deadlock BEFORE INSERT ON order_status_change FOR EACH ROW
       IF NEW.order_no = '${orderNo}' THEN
         SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213, MESSAGE_TEXT = 'Deadlock found when trying to get lock';
       END IF`,
    );
    try {
      expect((await wechatpay(running, orderNo, transactionId, 1900)).status).toBeGreaterThanOrEqual(500);
      // A deadlock is transient: TransactionRunner ran the payment three times, each rolled back.
      const calls = sent.sending(transactionId);
      expect(calls).toEqual([1, 2, 3].map(() => expect.stringMatching(/^START TRANSACTION;\s*CALL pay_v1\(/)));
      for (const call of calls) expect(commandsAfter(sent, call)[0]).toBe('ROLLBACK');
      expect(await effects(orderNo, transactionId)).toEqual({ status: 'WAIT_PAY', claims: 0, history: 0, events: 0 });
      expect(await outcomes(transactionId)).toEqual([]);
    } finally {
      await pool.query('DROP TRIGGER IF EXISTS fail_history_deadlock');
    }

    expect((await wechatpay(running, orderNo, transactionId, 1900)).status).toBe(204);
    expect(await effects(orderNo, transactionId)).toEqual({ status: 'PAID', claims: 1, history: 1, events: 1 });
    expect(await outcomes(transactionId)).toEqual(['PAID']);
  });
});

describe('START TRANSACTION with the first statement', () => {
  const marker = () => uniqueId('BEGIN');

  it("should send a transaction's first statement with its START TRANSACTION and answer it as if alone", async () => {
    const tag = marker();
    const answers = await running.get(DataSource).transaction(async (manager) => ({
      raw: (await manager.query('SELECT ? AS tag', [tag])) as unknown,
      structured: (await manager.getRepository(OrderStatusChange).findBy({ orderNo: tag })).length,
    }));

    expect(answers).toEqual({ raw: [{ tag }], structured: 0 });
    expect(sent.transactionSending(tag)).toEqual([
      `START TRANSACTION;\nSELECT '${tag}' AS tag`,
      expect.stringMatching(new RegExp(`^SELECT .* FROM \`order_status_change\`.*'${tag}'`)),
      'COMMIT',
    ]);
  });

  it('should keep the first statement inside the transaction: a rollback undoes it', async () => {
    const tag = marker();
    const failure = await running
      .get(DataSource)
      .transaction(async (manager) => {
        const written = await manager.query<{ affectedRows: number }>(
          `INSERT INTO order_status_change (order_no, from_status, to_status, event, cause, changed_at)
           VALUES (?, NULL, 'WAIT_PAY', 'REGISTER', 'round-trips test', NOW(3))`,
          [tag],
        );
        expect(written.affectedRows).toBe(1);
        throw new Error('undo it');
      })
      .catch((error: Error) => error.message);

    expect(failure).toBe('undo it');
    expect(sent.transactionSending(tag)).toEqual([expect.stringMatching(/^START TRANSACTION;\s*INSERT/), 'ROLLBACK']);
    expect(await count(pool, 'SELECT COUNT(*) FROM order_status_change WHERE order_no = ?', [tag])).toBe(0);
  });

  it('should send no COMMIT for a transaction the server has ended, and refuse a statement after its end', async () => {
    const [kept, refused] = [marker(), marker()];
    const insert = (tag: string) =>
      `INSERT INTO order_status_change (order_no, from_status, to_status, event, cause, changed_at)
       VALUES ('${tag}', NULL, 'WAIT_PAY', 'REGISTER', 'round-trips test', NOW(3))`;
    const failure: unknown = await running
      .get(DataSource)
      .transaction(async (manager) => {
        await manager.query(insert(kept));
        // As the payment procedure does inside: the transaction ends on the server.
        await manager.query('COMMIT WORK');
        await manager.query(insert(refused));
      })
      .catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(QueryFailedError);
    expect((failure as QueryFailedError).driverError).toMatchObject({ errno: 1213, code: 'ER_LOCK_DEADLOCK' });
    const first = sent.sent.find((c) => c.text.includes(kept))!;
    expect(commandsAfter(sent, first.text).slice(0, 2)).not.toContain('ROLLBACK');
    expect(sent.sending(refused)).toEqual([]);
    expect(
      await count(pool, 'SELECT COUNT(*) FROM order_status_change WHERE order_no IN (?, ?)', [kept, refused]),
    ).toBe(1);
  });

  it('should send nothing for a transaction that sends no statement', async () => {
    const [before, after] = [marker(), marker()];
    const runner = running.get(DataSource).createQueryRunner();
    try {
      await runner.query(`SELECT '${before}'`);
      await runner.startTransaction();
      await runner.commitTransaction();
      await runner.query(`SELECT '${after}'`);
    } finally {
      await runner.release();
    }

    const [first, last] = [before, after].map((tag) => sent.sent.find((c) => c.text.includes(tag))!);
    const between = sent.sent.slice(sent.sent.indexOf(first), sent.sent.indexOf(last) + 1);
    expect(between.filter((c) => c.connectionId === first.connectionId).map((c) => c.text)).toEqual([
      `SELECT '${before}'`,
      `SELECT '${after}'`,
    ]);
  });
});

/** The commands sent on the same connection after `command` (the pool may hand it to other work next). */
function commandsAfter(commands: SentCommands, text: string): string[] {
  const at = commands.sent.findIndex((c) => c.text === text);
  return commands.sent
    .slice(at + 1)
    .filter((c) => c.connectionId === commands.sent[at].connectionId)
    .map((c) => c.text);
}

describe("the payment procedure's transaction guard", () => {
  const historyRow = (tag: string) =>
    `INSERT INTO order_status_change (order_no, from_status, to_status, event, cause, changed_at)
     VALUES ('${tag}', NULL, 'WAIT_PAY', 'REGISTER', 'round-trips test', NOW(3));`;
  const rowsOf = (tag: string) => count(pool, 'SELECT COUNT(*) FROM order_status_change WHERE order_no = ?', [tag]);

  it.each(['mariadb', 'mysql'] as const)(
    "should write nothing once its transaction ended in the middle of a procedure, by %s's condition",
    async (flavour) => {
      const [claim, alive, after] = [uniqueId('CLAIM'), uniqueId('ALIVE'), uniqueId('AFTER')];
      const procedure = `guard_${flavour}_${Date.now()}`;
      await pool.query(`CREATE PROCEDURE ${procedure}()
        BEGIN
          DECLARE v_claim BIGINT;
          DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
          INSERT INTO payment_callback (channel, transaction_id, order_no, amount, currency, first_received_at)
          VALUES ('WECHATPAY', '${claim}', '${claim}', 1, 'CNY', NOW(3));
          SET v_claim = LAST_INSERT_ID();
          ${requireTransactionAlive(flavour, 'v_claim')}
          ${historyRow(alive)}
          -- What the server does to a transaction that a Galera certification abort or a deadlock
          -- kills between two statements: rolls it back, and the rest would run outside any transaction.
          ROLLBACK;
          ${requireTransactionAlive(flavour, 'v_claim')}
          ${historyRow(after)}
        END`);
      const connection = await pool.getConnection();
      try {
        await connection.query('START TRANSACTION');
        const failure: unknown = await connection.query(`CALL ${procedure}()`).catch((error: unknown) => error);
        await connection.query('ROLLBACK');

        expect(failure).toMatchObject({ errno: 1213, code: 'ER_LOCK_DEADLOCK' });
        expect({
          claim: await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE transaction_id = ?', [claim]),
          alive: await rowsOf(alive),
          after: await rowsOf(after),
        }).toEqual({ claim: 0, alive: 0, after: 0 });
      } finally {
        connection.release();
        await pool.query(`DROP PROCEDURE IF EXISTS ${procedure}`);
      }
    },
  );
});
