import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { Propagation, Transactional, TransactionHost } from '@nestjs-cls/transactional';
import { isDuplicateKey, Statement, WriteResult } from '../platform/database/sql';
import { nextStatus, OrderEvent, OrderStatus } from './order-status';
import { OrderStatusChange } from './order-status-change.entity';
import { PaymentOrder } from './payment-order.entity';

export interface NewPaymentOrder {
  orderNo: string;
  userId: string;
  amount: number;
  currency: string;
  channel?: string;
  merchantId?: string;
  subMerchantId?: string;
  /** yyyyMMddHHmmss: when the order was sent to the channel. */
  channelOrderTime?: string;
  /** The first time to ask the channel whether it was paid; undefined: never. */
  nextQueryAt?: Date | null;
}

/** A WAIT_PAY order due to be asked about at its channel. */
export interface DueQuery {
  orderNo: string;
  channel: string | null;
  merchantId: string | null;
  subMerchantId: string | null;
  channelOrderTime: string | null;
  createdAt: Date;
}

@Injectable()
export class PaymentOrderRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /** Inserts the order in WAIT_PAY; false when the order number already exists. */
  async insertIfAbsent(order: NewPaymentOrder): Promise<boolean> {
    const now = new Date();
    try {
      await this.txHost.tx.query(
        `INSERT INTO payment_order
           (order_no, user_id, amount, currency, status, channel, merchant_id, sub_merchant_id, channel_order_time,
            next_query_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          order.orderNo,
          order.userId,
          order.amount,
          order.currency,
          OrderStatus.WaitPay,
          order.channel ?? null,
          order.merchantId ?? null,
          order.subMerchantId ?? null,
          order.channelOrderTime ?? null,
          order.nextQueryAt ?? null,
          now,
          now,
        ],
      );
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
    await this.recordChange({
      orderNo: order.orderNo,
      from: null,
      to: OrderStatus.WaitPay,
      event: 'REGISTER',
      cause: null,
      at: now,
    });
    return true;
  }

  async find(orderNo: string): Promise<PaymentOrder | null> {
    return this.txHost.tx.getRepository(PaymentOrder).findOneBy({ orderNo });
  }

  /** A locking read: the order as committed now, held until the transaction ends. */
  @Transactional(Propagation.Mandatory)
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

  async closeIfWaiting(orderNo: string): Promise<boolean> {
    return this.transition(orderNo, OrderEvent.Close, OrderStatus.WaitPay, null);
  }

  /**
   * Claims the orders due to be asked about, in the caller's transaction: locked rows of other
   * replicas' claims are skipped, and each claimed row moves on to its next age (`next`) before the
   * transaction commits, so no order is asked twice for the same age, on any replica.
   */
  @Transactional(Propagation.Mandatory)
  async claimDueQueries(now: Date, limit: number, next: (createdAt: Date) => Date | null): Promise<DueQuery[]> {
    const rows: Array<{
      order_no: string;
      status: string;
      channel: string | null;
      merchant_id: string | null;
      sub_merchant_id: string | null;
      channel_order_time: string | null;
      created_at: Date;
    }> = await this.txHost.tx.query(
      `SELECT order_no, status, channel, merchant_id, sub_merchant_id, channel_order_time, created_at FROM payment_order
         WHERE next_query_at <= ? ORDER BY next_query_at LIMIT ? FOR UPDATE SKIP LOCKED`,
      [now, limit],
    );
    for (const row of rows) {
      const nextAt = row.status === OrderStatus.WaitPay ? next(row.created_at) : null;
      await this.txHost.tx.query('UPDATE payment_order SET next_query_at = ? WHERE order_no = ?', [
        nextAt,
        row.order_no,
      ]);
    }
    return rows
      .filter((row) => row.status === OrderStatus.WaitPay)
      .map((row) => ({
        orderNo: row.order_no,
        channel: row.channel,
        merchantId: row.merchant_id,
        subMerchantId: row.sub_merchant_id,
        channelOrderTime: row.channel_order_time,
        createdAt: row.created_at,
      }));
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
  ): Promise<boolean> {
    const change = statusChange(orderNo, event, from, cause);
    const update = compareAndSet(change);
    const result: WriteResult = await this.txHost.tx.query(update.sql, update.params);
    if (result.affectedRows !== 1) return false;
    await this.recordChange(change);
    return true;
  }

  private async recordChange(change: StatusChange): Promise<void> {
    const insert = historyRow(change);
    await this.txHost.tx.query(insert.sql, insert.params);
  }
}

interface StatusChange {
  orderNo: string;
  from: OrderStatus | null;
  to: OrderStatus;
  event: OrderEvent | 'REGISTER';
  cause: string | null;
  at: Date;
}

/** The state machine's answer to `event` in `from`, as of now. */
function statusChange(orderNo: string, event: OrderEvent, from: OrderStatus, cause: string | null): StatusChange {
  const to = nextStatus(from, event);
  if (to === undefined) throw new Error(`the state machine has no ${event} from ${from}`);
  return { orderNo, from, to, event, cause, at: new Date() };
}

/** `from` → `to` as one conditional UPDATE; `columns` are set with it and must match for it. */
function compareAndSet(
  change: StatusChange,
  columns: {
    set: Record<string, unknown>;
    where: Record<string, unknown>;
    guard?: { sql: string; params: unknown[] };
  } = { set: {}, where: {} },
): Statement {
  const set = Object.keys(columns.set)
    .map((c) => `, ${c} = ?`)
    .join('');
  const where = Object.keys(columns.where)
    .map((c) => ` AND ${c} = ?`)
    .concat(columns.guard ? [` AND ${columns.guard.sql}`] : [])
    .join('');
  return {
    // Leaving a status leaves WAIT_PAY or later: nothing is left to ask the channel about.
    sql: `UPDATE payment_order SET status = ?, updated_at = ?, next_query_at = NULL${set}
          WHERE order_no = ? AND status = ?${where}`,
    params: [
      change.to,
      change.at,
      ...Object.values(columns.set),
      change.orderNo,
      change.from,
      ...Object.values(columns.where),
      ...(columns.guard?.params ?? []),
    ],
  };
}

/** The history row of a change; with `condition`, written only when it holds (a batch's guard). */
function historyRow(change: StatusChange, condition?: string): Statement {
  const values = [change.orderNo, change.from, change.to, change.event, change.cause, change.at];
  const columns = '(order_no, from_status, to_status, event, cause, changed_at)';
  return condition === undefined
    ? { sql: `INSERT INTO order_status_change ${columns} VALUES (?, ?, ?, ?, ?, ?)`, params: values }
    : {
        sql: `INSERT INTO order_status_change ${columns} SELECT ?, ?, ?, ?, ?, ? FROM DUAL WHERE ${condition}`,
        params: values,
      };
}
