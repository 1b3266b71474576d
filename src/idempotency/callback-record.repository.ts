import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { WriteResult } from '../database/sql';
import { PaymentNotification, VerifiedNotification } from '../signature/verified-notification';

@Injectable()
export class CallbackRecordRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /**
   * Claims the payment's idempotency key in the caller's transaction: true for the first delivery
   * of (channel, transaction id), false for every other one. The unique index decides, not a
   * read: a concurrent duplicate blocks on the key until the first one commits or rolls back.
   */
  async claimPayment(payment: PaymentNotification, receivedAt: Date): Promise<boolean> {
    const result: WriteResult = await this.txHost.tx.query(
      `INSERT INTO payment_callback
         (channel, transaction_id, order_no, amount, currency, delivery_count, first_received_at, last_received_at)
       VALUES (?, ?, ?, ?, ?, 1, ?, ?)
       ON DUPLICATE KEY UPDATE delivery_count = delivery_count + 1, last_received_at = ?`,
      [
        payment.channel,
        payment.transactionId,
        payment.outTradeNo,
        payment.amount,
        payment.currency,
        receivedAt,
        receivedAt,
        receivedAt,
      ],
    );
    // MySQL reports 1 for a fresh insert and 2 for an update of an existing row.
    return result.affectedRows === 1;
  }

  async recordDelivery(notification: VerifiedNotification, outcome: string, receivedAt: Date): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO callback_delivery
         (channel, event_type, transaction_id, order_no, outcome, raw_body, headers, received_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        notification.channel,
        notification.eventType,
        notification.transactionId ?? null,
        notification.outTradeNo ?? null,
        outcome,
        notification.rawBody,
        JSON.stringify(notification.headers),
        receivedAt,
      ],
    );
  }
}
