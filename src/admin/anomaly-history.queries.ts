import { DataSource } from 'typeorm';
import { PaymentAnomaly } from '../payments/anomaly/anomaly.entity';

/** An admin_audit row as the driver reads it (MariaDB's JSON columns come as text). */
export interface AuditRow {
  id: string | number;
  operator_id: string;
  action: string;
  target: string;
  request_body: unknown;
  result: unknown;
  created_at: Date;
}

/**
 * Every audited decision on an anomaly, oldest first, at most `limit`: its resolution's (target
 * anomaly:<id>), its refunds' (refund:<refundNo> of its channel and transaction), and the refunds
 * refused before they had a number (order:<orderNo> naming its transaction). Undefined when there is
 * no such anomaly.
 */
export async function anomalyDecisions(db: DataSource, id: string, limit: number): Promise<AuditRow[] | undefined> {
  const anomaly = await db.getRepository(PaymentAnomaly).findOneBy({ id });
  if (!anomaly) return undefined;
  return db.query(
    `SELECT id, operator_id, action, target, request_body, result, created_at FROM admin_audit
     WHERE target = ?
        OR target IN (SELECT CONCAT('refund:', refund_no) FROM refund WHERE channel = ? AND transaction_id = ?)
        OR (target = ? AND JSON_UNQUOTE(JSON_EXTRACT(request_body, '$.transactionId')) = ?)
     ORDER BY id LIMIT ${Number(limit)}`,
    [
      `anomaly:${anomaly.id}`,
      anomaly.channel,
      anomaly.transactionId,
      `order:${anomaly.orderNo}`,
      anomaly.transactionId,
    ],
  );
}
