import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { PaymentOrder } from '../../order/payment-order.entity';
import { PaymentNotification, VerifiedNotification } from '../../domain/notification';
import { DomainError } from '../../domain/domain-error';
import { WriteResult } from '../../platform/database/sql';
import { AnomalyStatus, AnomalyType, PaymentAnomaly } from './anomaly.entity';

@Injectable()
export class AnomalyRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /**
   * One anomaly per offending transaction: the payment's dedup key already guarantees a single call.
   * A MALFORMED_NOTIFICATION row of the same transaction (an earlier delivery that could not apply)
   * gives way to it: money that moved wrongly is what an operator must see and refund, and the
   * malformed delivery's bytes stay in the delivery log.
   */
  async record(type: AnomalyType, order: PaymentOrder, payment: PaymentNotification): Promise<void> {
    const now = new Date();
    const result: WriteResult = await this.txHost.tx.query(
      `INSERT INTO payment_anomaly
         (type, order_no, channel, transaction_id, order_amount, paid_amount, currency, status, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON DUPLICATE KEY UPDATE
         order_no = IF(type = ?, VALUES(order_no), order_no),
         order_amount = IF(type = ?, VALUES(order_amount), order_amount),
         paid_amount = IF(type = ?, VALUES(paid_amount), paid_amount),
         currency = IF(type = ?, VALUES(currency), currency),
         status = IF(type = ?, VALUES(status), status),
         updated_at = IF(type = ?, VALUES(updated_at), updated_at),
         resolution_status = IF(type = ?, NULL, resolution_status),
         type = IF(type = ?, VALUES(type), type)`,
      [
        type,
        order.orderNo,
        payment.channel,
        payment.transactionId,
        order.amount,
        payment.amount,
        payment.currency,
        AnomalyStatus.Open,
        now,
        now,
        ...Array<string>(8).fill(AnomalyType.MalformedNotification),
      ],
    );
    if (result.affectedRows === 0) {
      throw new Error(`a ${type} anomaly of ${payment.channel} ${payment.transactionId} is already recorded`);
    }
  }

  /**
   * A signed notification that cannot apply, once per (channel, transaction id) however often the
   * platform sends it. No amount or currency of it can be trusted to fit: they are recorded as 0 and
   * XXX (ISO 4217's "no currency"); the delivery log keeps its bytes.
   */
  async recordMalformed(notification: VerifiedNotification): Promise<void> {
    const now = new Date();
    await this.txHost.tx.query(
      `INSERT INTO payment_anomaly
         (type, order_no, channel, transaction_id, order_amount, paid_amount, currency, status, created_at, updated_at)
       VALUES (?, ?, ?, ?, 0, 0, 'XXX', ?, ?, ?)
       ON DUPLICATE KEY UPDATE updated_at = updated_at`,
      [
        AnomalyType.MalformedNotification,
        notification.outTradeNo ?? '',
        notification.channel,
        notification.transactionId ?? '',
        AnomalyStatus.Open,
        now,
        now,
      ],
    );
  }

  async findByTransaction(channel: string, transactionId: string): Promise<PaymentAnomaly | null> {
    return this.txHost.tx.getRepository(PaymentAnomaly).findOneBy({ channel, transactionId });
  }

  /**
   * OPEN or REFUNDING to REFUNDING for a refund being requested, unless an admin resolved the anomaly
   * without a refund or asked to (then a 409: it is never refunded while that stands). An anomaly
   * RESOLVED by its earlier refunds stays as it is, as before.
   */
  async moveToRefunding(id: string): Promise<void> {
    const result: WriteResult = await this.txHost.tx.query(
      `UPDATE payment_anomaly SET status = ?, updated_at = ?
       WHERE id = ? AND status IN (?) AND resolution_status IS NULL`,
      [AnomalyStatus.Refunding, new Date(), id, [AnomalyStatus.Open, AnomalyStatus.Refunding]],
    );
    if (result.affectedRows === 1) return;
    const [row]: Array<Pick<PaymentAnomaly, 'resolutionStatus'>> = await this.txHost.tx.query(
      'SELECT resolution_status AS resolutionStatus FROM payment_anomaly WHERE id = ? FOR UPDATE',
      [id],
    );
    if (row?.resolutionStatus) {
      throw new DomainError(
        'AnomalyConflict',
        `anomaly ${id} is resolved without a refund (${row.resolutionStatus}); it cannot be refunded`,
      );
    }
  }

  /** Compare-and-set of the anomaly's status: true when it was in one of `from`. */
  async moveIf(id: string, from: readonly AnomalyStatus[], to: AnomalyStatus): Promise<boolean> {
    const result: WriteResult = await this.txHost.tx.query(
      `UPDATE payment_anomaly SET status = ?, updated_at = ? WHERE id = ? AND status IN (?)`,
      [to, new Date(), id, from],
    );
    return result.affectedRows === 1;
  }
}
