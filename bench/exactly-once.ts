import { createConnection } from 'mysql2/promise';
import { Payment } from './delivery-mix';

/** Reads the service's database after the run: each payment took effect once, and nothing else did. */
export async function exactlyOnceViolations(
  databaseUrl: string,
  payments: Payment[],
  sent: number,
  acked: number,
): Promise<string[]> {
  const conn = await createConnection({ uri: databaseUrl.replace(/^mariadb:/, 'mysql:') });
  const orderNos = payments.map((p) => p.orderNo);
  const one = async (sql: string): Promise<number> => {
    let total = 0;
    for (let i = 0; i < orderNos.length; i += 5000) {
      const [rows] = await conn.query(sql, [orderNos.slice(i, i + 5000)]);
      total += Number(Object.values((rows as Array<Record<string, unknown>>)[0])[0]);
    }
    return total;
  };
  try {
    const checks: Array<[string, number, number]> = [
      [
        'orders PAID',
        await one(`SELECT COUNT(*) FROM payment_order WHERE status = 'PAID' AND order_no IN (?)`),
        payments.length,
      ],
      ['outbox events', await one('SELECT COUNT(*) FROM outbox_event WHERE order_no IN (?)'), payments.length],
      [
        'orders with an event',
        await one('SELECT COUNT(DISTINCT order_no) FROM outbox_event WHERE order_no IN (?)'),
        payments.length,
      ],
      [
        'PAID transitions recorded',
        await one(`SELECT COUNT(*) FROM callback_delivery WHERE outcome = 'PAID' AND order_no IN (?)`),
        payments.length,
      ],
      ['anomalies', await one('SELECT COUNT(*) FROM payment_anomaly WHERE order_no IN (?)'), 0],
      ['deliveries acked', acked, sent],
    ];
    return checks
      .filter(([, actual, expected]) => actual !== expected)
      .map(([what, actual, expected]) => `${what}: ${actual}, expected ${expected}`);
  } finally {
    await conn.end();
  }
}
