import { createConnection } from 'mysql2/promise';

/**
 * `rows` earlier payments, as a service that has run for a while holds them: paid orders, their
 * dedup records, one delivery each with a realistic body, published events and the example
 * handlers' records of them, all `ageDays` old. MariaDB's Sequence engine (seq_1_to_N) makes the
 * rows server-side, in a few statements.
 */
export async function prefill(databaseUrl: string, rows: number, ageDays = 0): Promise<void> {
  const conn = await createConnection({ uri: databaseUrl.replace(/^mariadb:/, 'mysql:'), timezone: 'Z' });
  const seq = `seq_1_to_${rows}`;
  const at = `NOW(3) - INTERVAL ${Math.trunc(ageDays)} DAY`;
  try {
    await conn.query(
      `INSERT INTO payment_order (order_no, user_id, amount, currency, status, channel, transaction_id, paid_at, created_at, updated_at)
       SELECT CONCAT('PRE-', seq), 'prefill', 100 + seq % 9900, 'CNY', 'PAID', IF(seq % 2, 'ALIPAY', 'WECHATPAY'),
              CONCAT('PRE', seq), ${at}, ${at}, ${at} FROM ${seq}`,
    );
    await conn.query(
      `INSERT INTO payment_callback (channel, transaction_id, order_no, amount, currency, first_received_at)
       SELECT IF(seq % 2, 'ALIPAY', 'WECHATPAY'), CONCAT('PRE', seq), CONCAT('PRE-', seq), 100 + seq % 9900, 'CNY', ${at} FROM ${seq}`,
    );
    await conn.query(
      `INSERT INTO callback_delivery (channel, event_type, transaction_id, order_no, outcome, raw_body, headers, received_at)
       SELECT IF(seq % 2, 'ALIPAY', 'WECHATPAY'), 'TRADE_SUCCESS', CONCAT('PRE', seq), CONCAT('PRE-', seq), 'PAID',
              REPEAT('x', 900), '{}', ${at} FROM ${seq}`,
    );
    await conn.query(
      `INSERT INTO outbox_event (event_id, type, order_no, payload, created_at, published_at)
       SELECT UUID(), 'payment.succeeded', CONCAT('PRE-', seq), '{}', ${at}, ${at} FROM ${seq}`,
    );
    await conn.query(
      `INSERT INTO processed_event (consumer, event_id, processed_at)
       SELECT c.consumer, e.event_id, e.published_at FROM outbox_event e
       CROSS JOIN (SELECT 'grant-points' AS consumer UNION ALL SELECT 'issue-coupon' UNION ALL SELECT 'request-shipment') c
       WHERE e.order_no LIKE 'PRE-%'`,
    );
  } finally {
    await conn.end();
  }
}

/** What the retention worker did to the prefilled history while the service ran. */
export async function retentionProgress(
  databaseUrl: string,
): Promise<{ rawPruned: number; rawPrunedPerSecond: number; eventsLeft: number; processedLeft: number }> {
  const conn = await createConnection({ uri: databaseUrl.replace(/^mariadb:/, 'mysql:'), timezone: 'Z' });
  try {
    const [[raw]] = (await conn.query(
      `SELECT COUNT(*) AS n, TIMESTAMPDIFF(MICROSECOND, MIN(raw_pruned_at), MAX(raw_pruned_at)) AS us
       FROM callback_delivery WHERE raw_pruned_at IS NOT NULL`,
    )) as unknown as [[{ n: number; us: number | null }]];
    const [[events]] = (await conn.query(
      `SELECT (SELECT COUNT(*) FROM outbox_event WHERE order_no LIKE 'PRE-%') AS events,
              (SELECT COUNT(*) FROM processed_event WHERE processed_at < NOW(3) - INTERVAL 1 DAY) AS processed`,
    )) as unknown as [[{ events: number; processed: number }]];
    const seconds = Number(raw.us ?? 0) / 1e6;
    return {
      rawPruned: Number(raw.n),
      rawPrunedPerSecond: seconds > 0 ? Math.round(Number(raw.n) / seconds) : 0,
      eventsLeft: Number(events.events),
      processedLeft: Number(events.processed),
    };
  } finally {
    await conn.end();
  }
}
