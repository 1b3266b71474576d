import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { isDuplicateKey, WriteResult } from '../database/sql';
import { PaymentNotification } from '../domain/notification';
import { nextStatus, OrderEvent, OrderStatus } from './order-status';
import { OrderStatusChange } from './order-status-change.entity';
import { PaymentOrder } from './payment-order.entity';

export interface NewPaymentOrder {
  orderNo: string;
  userId: string;
  amount: number;
  currency: string;
}

@Injectable()
export class PaymentOrderRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /** Inserts the order in WAIT_PAY; false when the order number already exists. */
  async insertIfAbsent(order: NewPaymentOrder): Promise<boolean> {
    const now = new Date();
    try {
      await this.txHost.tx.query(
        `INSERT INTO payment_order (order_no, user_id, amount, currency, status, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
        [order.orderNo, order.userId, order.amount, order.currency, OrderStatus.WaitPay, now, now],
      );
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
    await this.recordChange(order.orderNo, null, OrderStatus.WaitPay, 'REGISTER', null, now);
    return true;
  }

  async find(orderNo: string): Promise<PaymentOrder | null> {
    return this.txHost.tx.getRepository(PaymentOrder).findOneBy({ orderNo });
  }

  /** A locking read: the order as committed now, held until the transaction ends. */
  async findForUpdate(orderNo: string): Promise<PaymentOrder | null> {
    return this.txHost.tx
      .getRepository(PaymentOrder)
      .createQueryBuilder('o')
      .setLock('pessimistic_write')
      .where('o.order_no = :orderNo', { orderNo })
      .getOne();
  }

  async history(orderNo: string): Promise<OrderStatusChange[]> {
    return this.txHost.tx.getRepository(OrderStatusChange).find({ where: { orderNo }, order: { id: 'ASC' } });
  }

  /**
   * Compare-and-set WAIT_PAY → PAID, only for the exact amount and currency: true when this
   * payment moved the order; false when the order is elsewhere, absent, or the amount differs.
   */
  async markPaidIfWaiting(payment: PaymentNotification): Promise<boolean> {
    return this.transition(payment.outTradeNo, OrderEvent.Pay, OrderStatus.WaitPay, payment.transactionId, {
      set: { channel: payment.channel, transaction_id: payment.transactionId, paid_at: payment.paidAt },
      where: { amount: payment.amount, currency: payment.currency },
    });
  }

  async closeIfWaiting(orderNo: string): Promise<boolean> {
    return this.transition(orderNo, OrderEvent.Close, OrderStatus.WaitPay, null);
  }

  /** Compare-and-set `from` → the event's target; `cause` names what moved it (refund number, ...). */
  async moveIf(orderNo: string, event: OrderEvent, from: OrderStatus, cause: string): Promise<boolean> {
    return this.transition(orderNo, event, from, cause);
  }

  /** The state machine as one conditional UPDATE; the affected-row count is the answer. */
  private async transition(
    orderNo: string,
    event: OrderEvent,
    from: OrderStatus,
    cause: string | null,
    columns: { set: Record<string, unknown>; where: Record<string, unknown> } = { set: {}, where: {} },
  ): Promise<boolean> {
    const to = nextStatus(from, event);
    if (to === undefined) throw new Error(`the state machine has no ${event} from ${from}`);
    const now = new Date();
    const set = Object.keys(columns.set)
      .map((c) => `, ${c} = ?`)
      .join('');
    const where = Object.keys(columns.where)
      .map((c) => ` AND ${c} = ?`)
      .join('');
    const result: WriteResult = await this.txHost.tx.query(
      `UPDATE payment_order SET status = ?, updated_at = ?${set} WHERE order_no = ? AND status = ?${where}`,
      [to, now, ...Object.values(columns.set), orderNo, from, ...Object.values(columns.where)],
    );
    if (result.affectedRows !== 1) return false;
    await this.recordChange(orderNo, from, to, event, cause, now);
    return true;
  }

  private async recordChange(
    orderNo: string,
    from: OrderStatus | null,
    to: OrderStatus,
    event: OrderEvent | 'REGISTER',
    cause: string | null,
    at: Date,
  ): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO order_status_change (order_no, from_status, to_status, event, cause, changed_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
      [orderNo, from, to, event, cause, at],
    );
  }
}
