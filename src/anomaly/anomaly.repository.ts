import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { PaymentOrder } from '../order/payment-order.entity';
import { PaymentNotification } from '../signature/verified-notification';
import { AnomalyStatus, AnomalyType } from './anomaly.entity';

@Injectable()
export class AnomalyRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /** One anomaly per offending transaction: the payment's dedup key already guarantees a single call. */
  async record(type: AnomalyType, order: PaymentOrder, payment: PaymentNotification): Promise<void> {
    const now = new Date();
    await this.txHost.tx.query(
      `INSERT INTO payment_anomaly
         (type, order_no, channel, transaction_id, order_amount, paid_amount, currency, status, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
      ],
    );
  }
}
