import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { isDuplicateKey } from '../database/sql';
import { PaymentNotification } from '../signature/verified-notification';

@Injectable()
export class CallbackRecordRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /**
   * Claims the payment's idempotency key in the caller's transaction: true for the first delivery
   * of (channel, transaction id), false for every other one. The unique index decides, not a
   * read: a concurrent duplicate blocks on the key until the first one commits or rolls back.
   */
  async claimPayment(payment: PaymentNotification, receivedAt: Date): Promise<boolean> {
    try {
      await this.txHost.tx.query(
        `INSERT INTO payment_callback (channel, transaction_id, order_no, amount, currency, first_received_at)
         VALUES (?, ?, ?, ?, ?, ?)`,
        [payment.channel, payment.transactionId, payment.outTradeNo, payment.amount, payment.currency, receivedAt],
      );
      return true;
    } catch (error) {
      // Only the statement is undone: the transaction goes on, holding a shared lock on the claim.
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }
}
