/** Reads what payment notifications leave in the test database: the payment suites' proof of a claim. */
import { Pool, RowDataPacket } from 'mysql2/promise';
import { Channel } from '../../src/domain/notification';
import { count } from './test-app';

export interface OrderRow {
  status: string;
  amount: number;
  channel: string | null;
  transaction_id: string | null;
  /** UTC, ISO 8601 with milliseconds (the app writes UTC; formatted by the server so the test's zone never matters). */
  paid_at: string | null;
}

export interface DeliveryRow {
  outcome: string;
  replays: number;
  event_type: string;
  order_no: string | null;
  raw_body: Buffer;
  headers: Record<string, string>;
}

/** What a delivery that was refused leaves behind. */
export const NOTHING = { callbacks: 0, deliveries: 0, anomalies: 0, outbox: 0 };

export class PaymentEffects {
  constructor(private readonly pool: Pool) {}

  async orderRow(orderNo: string): Promise<OrderRow | undefined> {
    const [rows] = await this.pool.query<Array<RowDataPacket & { paid_at: string | null }>>(
      `SELECT status, amount, channel, transaction_id, DATE_FORMAT(paid_at, '%Y-%m-%dT%H:%i:%s.%fZ') AS paid_at
       FROM payment_order WHERE order_no = ?`,
      [orderNo],
    );
    if (!rows[0]) return undefined;
    const row = rows[0];
    return {
      ...row,
      amount: Number(row.amount),
      paid_at: row.paid_at ? row.paid_at.replace(/(\.\d{3})\d{3}Z$/, '$1Z') : null,
    } as OrderRow;
  }

  /** Everything a delivery of (channel, transaction) can leave behind, and the order's outbox events. */
  async effects(channel: Channel, transactionId: string, orderNo: string) {
    const [callbacks, deliveries, anomalies, outbox] = await Promise.all([
      count(this.pool, 'SELECT COUNT(*) FROM payment_callback WHERE channel = ? AND transaction_id = ?', [
        channel,
        transactionId,
      ]),
      // Deliveries received: a row, and the replays counted on it.
      count(
        this.pool,
        'SELECT COALESCE(SUM(1 + replays), 0) FROM callback_delivery WHERE channel = ? AND transaction_id = ?',
        [channel, transactionId],
      ),
      count(this.pool, 'SELECT COUNT(*) FROM payment_anomaly WHERE channel = ? AND transaction_id = ?', [
        channel,
        transactionId,
      ]),
      count(this.pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no = ?', [orderNo]),
    ]);
    return { callbacks, deliveries, anomalies, outbox };
  }

  /** Paying deliveries recorded for a payment; undefined while the payment has no dedup record. */
  async deliveryCount(channel: Channel, transactionId: string): Promise<number | undefined> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT (SELECT SUM(1 + replays) FROM callback_delivery d
               WHERE d.channel = c.channel AND d.transaction_id = c.transaction_id AND d.outcome <> 'NOT_PAYING') AS deliveries
       FROM payment_callback c WHERE c.channel = ? AND c.transaction_id = ?`,
      [channel, transactionId],
    );
    return rows.length === 1 ? Number(rows[0].deliveries) : undefined;
  }

  async deliveryRows(channel: Channel, transactionId: string): Promise<DeliveryRow[]> {
    // headers: JSON, which MariaDB keeps as text.
    const [rows] = await this.pool.query<Array<RowDataPacket & { headers: string | Record<string, string> }>>(
      'SELECT outcome, replays, event_type, order_no, raw_body, headers FROM callback_delivery WHERE channel = ? AND transaction_id = ? ORDER BY id',
      [channel, transactionId],
    );
    return rows.map(
      (r) =>
        ({
          ...r,
          headers: typeof r.headers === 'string' ? (JSON.parse(r.headers) as Record<string, string>) : r.headers,
        }) as DeliveryRow,
    );
  }

  /** One outcome per delivery received: a row's replays repeat its outcome. */
  async outcomes(channel: Channel, transactionId: string): Promise<string[]> {
    return (await this.deliveryRows(channel, transactionId)).flatMap((r) =>
      Array<string>(1 + r.replays).fill(r.outcome),
    );
  }

  async outboxPayloads(orderNo: string): Promise<Array<{ type: string; payload: Record<string, unknown> }>> {
    const [rows] = await this.pool.query<
      Array<RowDataPacket & { type: string; payload: string | Record<string, unknown> }>
    >('SELECT type, payload FROM outbox_event WHERE order_no = ? ORDER BY id', [orderNo]);
    return rows.map((r) => ({
      type: r.type,
      payload: typeof r.payload === 'string' ? (JSON.parse(r.payload) as Record<string, unknown>) : r.payload,
    }));
  }

  async anomalyRows(orderNo: string): Promise<RowDataPacket[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      'SELECT type, order_no, channel, transaction_id, order_amount, paid_amount, currency, status FROM payment_anomaly WHERE order_no = ? ORDER BY id',
      [orderNo],
    );
    return rows.map((r) => ({ ...r, order_amount: Number(r.order_amount), paid_amount: Number(r.paid_amount) }));
  }
}
