import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { Propagation, Transactional, TransactionHost } from '@nestjs-cls/transactional';
import { changedOneRow, isDuplicateKey } from '../platform/database/sql';
import { ChannelPayment, ChannelPaymentState } from './channel-payment.entity';
import { OrderStatus } from './order-status';

export interface NewChannelPayment {
  orderNo: string;
  channel: string;
  method: string;
  requestHash: string;
  terms: string;
  expiresAt: Date;
}

/** The statements of channel_payment: the terms fixed once, the claim of a call, its result, the expiry close. */
@Injectable()
export class ChannelPaymentRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /** Fixes the order's payment terms (PENDING), due to be closed at its expiry; false when the order has them already. */
  async insertIfAbsent(payment: NewChannelPayment, now: Date): Promise<boolean> {
    try {
      await this.txHost.tx.query(
        `INSERT INTO channel_payment
           (order_no, channel, method, request_hash, terms, expires_at, state, attempts, close_due_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)`,
        [
          payment.orderNo,
          payment.channel,
          payment.method,
          payment.requestHash,
          payment.terms,
          payment.expiresAt,
          ChannelPaymentState.Pending,
          payment.expiresAt,
          now,
          now,
        ],
      );
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }

  async find(orderNo: string): Promise<ChannelPayment | null> {
    return this.txHost.tx.getRepository(ChannelPayment).findOneBy({ orderNo });
  }

  /**
   * The claim of one call, as one conditional UPDATE: it wins only from PENDING or RETRY, from a
   * lapsed CREATING (its request died), or from a CREATED whose parameters lapsed, and only while
   * the order is WAIT_PAY and the call (bounded by `leaseUntil`) ends before the order expires.
   * Returns the attempt number that owns the call, or undefined when another request owns it or
   * there is nothing to call for.
   */
  async claimCall(orderNo: string, now: Date, leaseUntil: Date): Promise<number | undefined> {
    const claimed: unknown = await this.txHost.tx.query(
      `UPDATE channel_payment cp JOIN payment_order o ON o.order_no = cp.order_no
         SET cp.state = ?, cp.attempts = cp.attempts + 1, cp.lease_until = ?, cp.updated_at = ?
       WHERE cp.order_no = ? AND o.status = ? AND cp.expires_at > ?
         AND (cp.state IN (?, ?) OR (cp.state = ? AND cp.lease_until <= ?) OR (cp.state = ? AND cp.valid_until <= ?))`,
      [
        ChannelPaymentState.Creating,
        leaseUntil,
        now,
        orderNo,
        OrderStatus.WaitPay,
        leaseUntil,
        ChannelPaymentState.Pending,
        ChannelPaymentState.Retry,
        ChannelPaymentState.Creating,
        now,
        ChannelPaymentState.Created,
        now,
      ],
    );
    if (!changedOneRow(claimed)) return undefined;
    const rows: Array<{ attempts: number }> = await this.txHost.tx.query(
      'SELECT attempts FROM channel_payment WHERE order_no = ?',
      [orderNo],
    );
    return Number(rows[0].attempts);
  }

  /** Stores a call's result, only for the attempt that still owns the claim; false when it lapsed to another. */
  async storeResult(
    orderNo: string,
    attempt: number,
    result:
      | { state: 'CREATED'; buyer: string; validUntil: Date; channelTradeId: string | null }
      | { state: 'REFUSED' | 'RETRY'; code: string; message: string },
  ): Promise<boolean> {
    const now = new Date();
    const created = result.state === ChannelPaymentState.Created;
    const stored: unknown = await this.txHost.tx.query(
      `UPDATE channel_payment SET state = ?, lease_until = NULL, buyer = ?, valid_until = ?, channel_trade_id = ?,
         failure_code = ?, failure_message = ?, updated_at = ?
       WHERE order_no = ? AND attempts = ? AND state = ?`,
      [
        result.state,
        created ? result.buyer : null,
        created ? result.validUntil : null,
        created ? result.channelTradeId : null,
        created ? null : result.code.slice(0, 64),
        created ? null : result.message.slice(0, 500),
        now,
        orderNo,
        attempt,
        ChannelPaymentState.Creating,
      ],
    );
    return changedOneRow(stored);
  }

  /**
   * Claims the payments whose order is due to be closed at the channel, in the caller's
   * transaction (SKIP LOCKED: each on one replica), pushing each to `retryAt` before commit; rows
   * whose order is no longer WAIT_PAY have nothing left to close and are cleared.
   */
  @Transactional(Propagation.Mandatory)
  async claimDueCloses(now: Date, limit: number, retryAt: Date): Promise<string[]> {
    const rows: Array<{ order_no: string; status: string }> = await this.txHost.tx.query(
      `SELECT cp.order_no, o.status FROM channel_payment cp JOIN payment_order o ON o.order_no = cp.order_no
         WHERE cp.close_due_at <= ? ORDER BY cp.close_due_at LIMIT ? FOR UPDATE SKIP LOCKED`,
      [now, limit],
    );
    for (const row of rows) {
      const next = row.status === OrderStatus.WaitPay ? retryAt : null;
      await this.txHost.tx.query('UPDATE channel_payment SET close_due_at = ? WHERE order_no = ?', [
        next,
        row.order_no,
      ]);
    }
    return rows.filter((row) => row.status === OrderStatus.WaitPay).map((row) => row.order_no);
  }

  /** Nothing more to close: the order closed (or was paid) here. */
  async closeDone(orderNo: string): Promise<void> {
    await this.txHost.tx.query('UPDATE channel_payment SET close_due_at = NULL WHERE order_no = ?', [orderNo]);
  }
}
