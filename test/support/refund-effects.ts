/** Reads refunds' effects from the test database: what the refund suites count to prove a claim. */
import { Pool, RowDataPacket } from 'mysql2/promise';
import { waitFor } from './eventually';

export class RefundEffects {
  constructor(private readonly pool: Pool) {}

  async row(refundNo: string): Promise<Record<string, unknown> | undefined> {
    const [rows] = await this.pool.query<RowDataPacket[]>('SELECT * FROM refund WHERE refund_no = ?', [refundNo]);
    return rows[0];
  }

  /** Waits until the refund is in `status` (the executor and the retry worker work in the background). */
  statusIs(refundNo: string, status: string): Promise<Record<string, unknown>> {
    return waitFor(`refund ${refundNo} to be ${status}`, async () => {
      const refund = await this.row(refundNo);
      return refund?.status === status && refund;
    });
  }

  /** What the payment has reserved for its refunds, in minor units. */
  async reserved(transactionId: string): Promise<number> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      'SELECT refund_reserved_amount FROM payment_callback WHERE transaction_id = ?',
      [transactionId],
    );
    return Number(rows[0]?.refund_reserved_amount);
  }

  /** The anomalies opened for a refund the channel made after it was recorded CLOSED or REJECTED, with their figures. */
  async lateSuccesses(refundNo: string): Promise<Array<Record<string, unknown>>> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT refund_no, was_status, amount, paid_amount, refunded_amount FROM refund_anomaly WHERE refund_no = ?`,
      [refundNo],
    );
    return rows.map((r) => ({
      ...r,
      amount: Number(r.amount),
      paid_amount: Number(r.paid_amount),
      refunded_amount: Number(r.refunded_amount),
    }));
  }

  async anomalyStatus(transactionId: string): Promise<unknown> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      'SELECT status FROM payment_anomaly WHERE transaction_id = ?',
      [transactionId],
    );
    return rows[0]?.status;
  }

  /** The refund notifications' delivery-log lines of an order, as 'EVENT_TYPE OUTCOME', in order. */
  async deliveries(orderNo: string): Promise<string[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      "SELECT event_type, outcome FROM callback_delivery WHERE order_no = ? AND event_type LIKE 'REFUND%' ORDER BY id",
      [orderNo],
    );
    return rows.map((d) => `${d.event_type} ${d.outcome}`);
  }

  async succeededEvents(orderNo: string): Promise<number> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      "SELECT COUNT(*) AS n FROM outbox_event WHERE type = 'refund.succeeded' AND order_no = ?",
      [orderNo],
    );
    return Number(rows[0].n);
  }
}
