/** Reads an order's effects from the test database: what the suites count to prove a claim. */
import { Pool, RowDataPacket } from 'mysql2/promise';

export interface ChannelCallRow {
  request: string;
  channel: string;
  merchantId: string | null;
  outcome: string;
  transactionId: string | null;
  detail: string | null;
  createdAt: Date;
}

/** payment_channel_call's columns, as ChannelCallRow names them. */
interface ChannelCallColumns {
  request: string;
  channel: string;
  merchant_id: string | null;
  outcome: string;
  transaction_id: string | null;
  detail: string | null;
  created_at: Date;
}

export class OrderEffects {
  constructor(private readonly pool: Pool) {}

  async order(orderNo: string): Promise<Record<string, unknown> | undefined> {
    const [rows] = await this.pool.query<RowDataPacket[]>('SELECT * FROM payment_order WHERE order_no = ?', [orderNo]);
    return rows[0];
  }

  async status(orderNo: string): Promise<unknown> {
    return (await this.order(orderNo))?.status;
  }

  /** Every status change as 'from>to' ('-' for none). */
  async history(orderNo: string): Promise<string[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      'SELECT from_status, to_status FROM order_status_change WHERE order_no = ? ORDER BY id',
      [orderNo],
    );
    return rows.map((r) => `${r.from_status ?? '-'}>${r.to_status}`);
  }

  async events(orderNo: string, type = 'payment.succeeded'): Promise<number> {
    return this.count('SELECT COUNT(*) FROM outbox_event WHERE order_no = ? AND type = ?', [orderNo, type]);
  }

  async payments(orderNo: string): Promise<Array<Record<string, unknown>>> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      'SELECT * FROM payment_callback WHERE order_no = ? ORDER BY id',
      [orderNo],
    );
    return rows;
  }

  async anomalies(orderNo: string): Promise<Array<Record<string, unknown>>> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      'SELECT * FROM payment_anomaly WHERE order_no = ? ORDER BY id',
      [orderNo],
    );
    return rows;
  }

  /** The delivery log's outcomes for one payment, in order. */
  async deliveryOutcomes(channel: string, transactionId: string): Promise<string[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      'SELECT outcome FROM callback_delivery WHERE channel = ? AND transaction_id = ? ORDER BY id',
      [channel, transactionId],
    );
    return rows.map((r) => String(r.outcome));
  }

  async deliveriesFor(orderNo: string): Promise<number> {
    return this.count('SELECT COUNT(*) FROM callback_delivery WHERE order_no = ?', [orderNo]);
  }

  async channelCalls(orderNo: string, request?: 'QUERY' | 'CLOSE'): Promise<ChannelCallRow[]> {
    const [rows] = await this.pool.query<Array<RowDataPacket & ChannelCallColumns>>(
      `SELECT request, channel, merchant_id, outcome, transaction_id, detail, created_at
       FROM payment_channel_call WHERE order_no = ? ${request ? 'AND request = ?' : ''} ORDER BY id`,
      request ? [orderNo, request] : [orderNo],
    );
    return rows.map((r) => ({
      request: r.request,
      channel: r.channel,
      merchantId: r.merchant_id,
      outcome: r.outcome,
      transactionId: r.transaction_id,
      detail: r.detail,
      createdAt: r.created_at,
    }));
  }

  /** Rows written about the order anywhere, but for the order itself: the proof that nothing was written. */
  async everythingAbout(orderNo: string): Promise<Record<string, number>> {
    const tables = [
      'payment_order',
      'order_status_change',
      'payment_callback',
      'callback_delivery',
      'payment_anomaly',
      'outbox_event',
      'payment_channel_call',
    ];
    const counts: Record<string, number> = {};
    for (const table of tables) {
      counts[table] = await this.count(`SELECT COUNT(*) FROM ${table} WHERE order_no = ?`, [orderNo]);
    }
    return counts;
  }

  private async count(sql: string, params: unknown[]): Promise<number> {
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, params);
    return Number(Object.values(rows[0])[0]);
  }
}

/** The sum of a Prometheus counter's samples whose labels include `labels`. */
export function metricValue(exposition: string, name: string, labels: Record<string, string>): number {
  let total = 0;
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const labelText = line.slice(name.length + 1, line.lastIndexOf('}'));
    if (Object.entries(labels).every(([key, value]) => labelText.includes(`${key}="${value}"`))) {
      total += Number(line.slice(line.lastIndexOf('}') + 1).trim());
    }
  }
  return total;
}
