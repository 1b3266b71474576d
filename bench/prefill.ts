import { createConnection } from 'mysql2/promise';

/**
 * `rows` earlier payments, as a service that has run for a while holds them: paid orders, their
 * dedup records, one delivery each with a realistic body, published events. MariaDB's Sequence
 * engine (seq_1_to_N) makes the rows server-side, in a few statements.
 */
export async function prefill(databaseUrl: string, rows: number): Promise<void> {
  const conn = await createConnection({ uri: databaseUrl.replace(/^mariadb:/, 'mysql:'), timezone: 'Z' });
  const seq = `seq_1_to_${rows}`;
  try {
    await conn.query(
      `INSERT INTO payment_order (order_no, user_id, amount, currency, status, channel, transaction_id, paid_at, created_at, updated_at)
       SELECT CONCAT('PRE-', seq), 'prefill', 100 + seq % 9900, 'CNY', 'PAID', IF(seq % 2, 'ALIPAY', 'WECHATPAY'),
              CONCAT('PRE', seq), NOW(3), NOW(3), NOW(3) FROM ${seq}`,
    );
    await conn.query(
      `INSERT INTO payment_callback (channel, transaction_id, order_no, amount, currency, first_received_at)
       SELECT IF(seq % 2, 'ALIPAY', 'WECHATPAY'), CONCAT('PRE', seq), CONCAT('PRE-', seq), 100 + seq % 9900, 'CNY', NOW(3) FROM ${seq}`,
    );
    await conn.query(
      `INSERT INTO callback_delivery (channel, event_type, transaction_id, order_no, outcome, raw_body, headers, received_at)
       SELECT IF(seq % 2, 'ALIPAY', 'WECHATPAY'), 'TRADE_SUCCESS', CONCAT('PRE', seq), CONCAT('PRE-', seq), 'PAID',
              REPEAT('x', 900), '{}', NOW(3) FROM ${seq}`,
    );
    await conn.query(
      `INSERT INTO outbox_event (event_id, type, order_no, payload, created_at, published_at)
       SELECT UUID(), 'payment.succeeded', CONCAT('PRE-', seq), '{}', NOW(3), NOW(3) FROM ${seq}`,
    );
  } finally {
    await conn.end();
  }
}
