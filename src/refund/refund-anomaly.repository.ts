import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { RefundAnomaly } from './refund-anomaly.entity';

export type NewRefundAnomaly = Omit<RefundAnomaly, 'id' | 'createdAt'>;

@Injectable()
export class RefundAnomalyRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /** One row per refund (its unique key): a repeat of the channel's word adds nothing. */
  async record(anomaly: NewRefundAnomaly): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO refund_anomaly
         (refund_no, channel, transaction_id, order_no, was_status, amount, paid_amount, refunded_amount, currency, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON DUPLICATE KEY UPDATE id = id`,
      [
        anomaly.refundNo,
        anomaly.channel,
        anomaly.transactionId,
        anomaly.orderNo,
        anomaly.wasStatus,
        anomaly.amount,
        anomaly.paidAmount,
        anomaly.refundedAmount,
        anomaly.currency,
        new Date(),
      ],
    );
  }

  async listForOrder(orderNo: string): Promise<RefundAnomaly[]> {
    return this.txHost.tx.getRepository(RefundAnomaly).find({ where: { orderNo }, order: { id: 'ASC' } });
  }
}
