import { randomUUID } from 'node:crypto';
import { createPool, ResultSetHeader } from 'mysql2/promise';
import { Delivery } from './delivery-mix';

/**
 * The raw limit: the SQL a delivery costs (claim, compare-and-set, outbox, delivery record, in
 * one transaction), sent by plain mysql2 at the same concurrency against the same server, with
 * no HTTP, no signatures, no Nest and no TypeORM. What the service reaches is measured against it.
 */
export async function rawSqlRun(
  databaseUrl: string,
  deliveries: Delivery[],
  concurrency: number,
): Promise<{ seconds: number }> {
  const pool = createPool({
    uri: databaseUrl.replace(/^mariadb:/, 'mysql:'),
    connectionLimit: concurrency,
    timezone: 'Z',
  });
  pool.on('connection', (conn) => conn.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED'));
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      const conn = await pool.getConnection();
      try {
        while (next < deliveries.length) await applyDelivery(conn, deliveries[next++]);
      } finally {
        conn.release();
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await pool.end();
  return { seconds };
}

type Connection = Awaited<ReturnType<ReturnType<typeof createPool>['getConnection']>>;

async function applyDelivery(conn: Connection, delivery: Delivery): Promise<void> {
  const { payment } = delivery;
  const now = new Date();
  await conn.query('START TRANSACTION');
  const claimed = await conn
    .execute(
      `INSERT INTO payment_callback (channel, transaction_id, order_no, amount, currency, first_received_at) VALUES (?, ?, ?, ?, 'CNY', ?)`,
      [payment.channel, payment.transactionId, payment.orderNo, payment.amount, now],
    )
    .then(
      () => true,
      (error: { errno?: number }) => {
        if (error.errno === 1062) return false;
        throw error;
      },
    );
  let outcome = 'DUPLICATE';
  if (claimed) {
    const [cas] = await conn.execute<ResultSetHeader>(
      `UPDATE payment_order SET status = 'PAID', updated_at = ?, channel = ?, transaction_id = ?, paid_at = ?
       WHERE order_no = ? AND status IN ('WAIT_PAY') AND amount = ? AND currency = 'CNY'`,
      [now, payment.channel, payment.transactionId, now, payment.orderNo, payment.amount],
    );
    if (cas.affectedRows === 1) {
      outcome = 'PAID';
      await conn.execute(
        `INSERT INTO order_status_change (order_no, from_status, to_status, event, cause, changed_at)
         VALUES (?, 'WAIT_PAY', 'PAID', 'PAY', ?, ?)`,
        [payment.orderNo, payment.transactionId, now],
      );
      await conn.execute(
        'INSERT INTO outbox_event (event_id, type, order_no, payload, created_at) VALUES (?, ?, ?, ?, ?)',
        [
          randomUUID(),
          'payment.succeeded',
          payment.orderNo,
          JSON.stringify({ orderNo: payment.orderNo, amount: payment.amount }),
          now,
        ],
      );
    }
  }
  await conn.execute(
    `INSERT INTO callback_delivery (channel, event_type, transaction_id, order_no, outcome, raw_body, headers, received_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      payment.channel,
      'TRADE_SUCCESS',
      payment.transactionId,
      payment.orderNo,
      outcome,
      Buffer.from(delivery.body),
      JSON.stringify(delivery.headers),
      now,
    ],
  );
  await conn.query('COMMIT');
}

/** Orders straight into the table, for the raw run (the service's own run registers them through its API). */
export async function insertOrdersDirectly(
  databaseUrl: string,
  payments: Array<{ orderNo: string; amount: number }>,
): Promise<void> {
  const pool = createPool({ uri: databaseUrl.replace(/^mariadb:/, 'mysql:'), connectionLimit: 4, timezone: 'Z' });
  const now = new Date();
  for (let i = 0; i < payments.length; i += 1000) {
    const rows = payments.slice(i, i + 1000).map((p) => [p.orderNo, 'bench', p.amount, 'CNY', 'WAIT_PAY', now, now]);
    await pool.query(
      'INSERT INTO payment_order (order_no, user_id, amount, currency, status, created_at, updated_at) VALUES ?',
      [rows],
    );
  }
  await pool.end();
}
