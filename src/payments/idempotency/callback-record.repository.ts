import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { Propagation, Transactional, TransactionHost } from '@nestjs-cls/transactional';
import { DataSource } from 'typeorm';
import { VerifiedNotification } from '../../domain/notification';
import { isDuplicateKeyOn, WriteResult } from '../../platform/database/sql';
import { PAYMENT_CLAIM_KEY, PaymentCallback } from './payment-callback.entity';

/**
 * One row per delivery (`VALUES ?` takes the rows). A replay (same replay_key) only counts on the
 * first row; its outcome is kept unless that one was a DUPLICATE, so that a replay racing its
 * original cannot hide the PAID that one did.
 */
const DELIVERY_COLUMNS =
  'channel, event_type, transaction_id, order_no, pays, outcome, raw_body, headers, received_at, processing_ms, replay_key';
const ON_REPLAY = `ON DUPLICATE KEY UPDATE replays = replays + 1,
    outcome = IF(outcome = 'DUPLICATE', VALUES(outcome), outcome)`;
export const RECORD_DELIVERIES = `INSERT INTO callback_delivery (${DELIVERY_COLUMNS}) VALUES ? ${ON_REPLAY}`;

/** Headers bigger than this (a channel's signature headers) go with the bytes they signed. */
const KEPT_HEADERS_MAX_BYTES = 256;

/** What one row of the delivery log is made of. */
export interface DeliveryRow {
  notification: VerifiedNotification;
  outcome: string;
  receivedAt: Date;
  processingMs: number;
}

/** A delivery as it was received: its bytes, the headers its signature needs, when it came. */
export interface StoredDelivery {
  body: Buffer;
  headers: Record<string, string>;
  receivedAt: Date;
}

@Injectable()
export class CallbackRecordRepository {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly dataSource: DataSource,
  ) {}

  /**
   * The delivery log's rows in ONE INSERT, never in a request's transaction (DeliveryLog writes
   * after that one has committed): on the data source itself.
   */
  async recordDeliveries(rows: DeliveryRow[]): Promise<void> {
    await this.dataSource.query(RECORD_DELIVERIES, [rows.map(toRow)]);
  }

  /**
   * Empties the bytes (and large headers) of at most `limit` deliveries received before `before`,
   * marking them pruned at `now`; the rows and outcomes stay. Rows another replica has locked are
   * skipped; the caller's transaction keeps the rows locked from the SELECT to the UPDATE.
   */
  @Transactional(Propagation.Mandatory)
  async pruneRawBytesBefore(before: Date, now: Date, limit: number): Promise<number> {
    const rows: Array<{ id: string }> = await this.txHost.tx.query(
      `SELECT id FROM callback_delivery WHERE raw_pruned_at IS NULL AND received_at < ?
         ORDER BY received_at LIMIT ? FOR UPDATE SKIP LOCKED`,
      [before, limit],
    );
    if (rows.length === 0) return 0;
    const result: WriteResult = await this.txHost.tx.query(
      `UPDATE callback_delivery
         SET raw_body = '', headers = IF(LENGTH(headers) > ?, JSON_OBJECT(), headers), raw_pruned_at = ?
         WHERE id IN (?) AND raw_pruned_at IS NULL`,
      [KEPT_HEADERS_MAX_BYTES, now, rows.map((r) => String(r.id))],
    );
    return result.affectedRows;
  }

  /** A channel's deliveries since `since` whose bytes are still kept, the newest first, at most `limit`. */
  async recentDeliveries(channel: string, since: Date, limit: number): Promise<StoredDelivery[]> {
    const rows: Array<{ raw_body: Buffer; headers: unknown; received_at: Date }> = await this.txHost.tx.query(
      `SELECT raw_body, headers, received_at FROM callback_delivery
       WHERE received_at >= ? AND channel = ? AND raw_pruned_at IS NULL ORDER BY received_at DESC LIMIT ?`,
      [since, channel, limit],
    );
    return rows.map((r) => ({ body: r.raw_body, headers: jsonObject(r.headers), receivedAt: r.received_at }));
  }

  /**
   * True when the claim (the payment procedure's first statement, settlement/pay-procedure.repository.ts) failed
   * because the payment was claimed before: nothing was written.
   */
  isDuplicateClaim(error: unknown): boolean {
    return isDuplicateKeyOn(error, PAYMENT_CLAIM_KEY);
  }

  /**
   * The account (the channel's merchant or app id) and sub-merchant that took a payment: refunds go
   * through the same ones. Undefined for payments recorded before they were kept.
   */
  async accountOf(channel: string, transactionId: string): Promise<{ merchantId?: string; subMerchantId?: string }> {
    const payment = await this.txHost.tx.getRepository(PaymentCallback).findOneBy({ channel, transactionId });
    return { merchantId: payment?.merchantId ?? undefined, subMerchantId: payment?.subMerchantId ?? undefined };
  }

  /** The payments (normally one) of an order by the platform's transaction id. */
  async findPayments(orderNo: string, transactionId: string): Promise<PaymentCallback[]> {
    return this.txHost.tx.getRepository(PaymentCallback).findBy({ orderNo, transactionId });
  }

  /**
   * Locks the payment's row until the transaction ends. Every change to the refunds of a payment
   * (a new one, a settled one) takes this lock after writing its refund row, so whoever holds it
   * reads the refunds' totals with every other change either committed or waiting behind it.
   */
  @Transactional(Propagation.Mandatory)
  async lockPayment(channel: string, transactionId: string): Promise<void> {
    await this.txHost.tx.query(`SELECT id FROM payment_callback WHERE channel = ? AND transaction_id = ? FOR UPDATE`, [
      channel,
      transactionId,
    ]);
  }

  /**
   * Takes `amount` from what the payment has left to refund, by a conditional UPDATE: concurrent
   * refunds on any replica can never take more than the payment was, together. False when it would.
   */
  async reserveRefund(channel: string, transactionId: string, amount: number): Promise<boolean> {
    const result: WriteResult = await this.txHost.tx.query(
      `UPDATE payment_callback SET refund_reserved_amount = refund_reserved_amount + ?
       WHERE channel = ? AND transaction_id = ? AND refund_reserved_amount + ? <= amount`,
      [amount, channel, transactionId, amount],
    );
    return result.affectedRows === 1;
  }

  /** What the payment's refunds have reserved, read with a lock: the latest committed value, or the caller's own. */
  @Transactional(Propagation.Mandatory)
  async lockedRefundReserved(channel: string, transactionId: string): Promise<number> {
    const [row]: Array<{ reserved: string }> = await this.txHost.tx.query(
      `SELECT refund_reserved_amount AS reserved FROM payment_callback
       WHERE channel = ? AND transaction_id = ? FOR UPDATE`,
      [channel, transactionId],
    );
    return Number(row.reserved);
  }

  /**
   * Reserves again what a refund recorded CLOSED or REJECTED had given back, now that the channel
   * says its money left: unconditionally, for the money is gone, even when the freed amount was
   * refunded again meanwhile (the reservation then exceeds the payment: money left twice).
   */
  async reserveRefundAgain(channel: string, transactionId: string, amount: number): Promise<void> {
    await this.txHost.tx.query(
      `UPDATE payment_callback SET refund_reserved_amount = refund_reserved_amount + ?
       WHERE channel = ? AND transaction_id = ?`,
      [amount, channel, transactionId],
    );
  }

  /** Gives back what a refund the channel closed had reserved. */
  async releaseRefund(channel: string, transactionId: string, amount: number): Promise<void> {
    const result: WriteResult = await this.txHost.tx.query(
      `UPDATE payment_callback SET refund_reserved_amount = refund_reserved_amount - ?
       WHERE channel = ? AND transaction_id = ? AND refund_reserved_amount >= ?`,
      [amount, channel, transactionId, amount],
    );
    if (result.affectedRows !== 1) throw new Error(`payment ${channel}/${transactionId} has no ${amount} reserved`);
  }
}

/** A JSON column as mysql2 gives it: parsed (MySQL) or as text (MariaDB's JSON is LONGTEXT). */
export function jsonObject(value: unknown): Record<string, string> {
  return (typeof value === 'string' ? JSON.parse(value) : value) as Record<string, string>;
}

/** The values of one row, in RECORD_DELIVERIES' column order. */
export function toRow({ notification, outcome, receivedAt, processingMs }: DeliveryRow): unknown[] {
  return [
    notification.channel,
    notification.eventType,
    notification.transactionId ?? null,
    notification.outTradeNo ?? null,
    notification.paid,
    outcome,
    notification.rawBody,
    JSON.stringify(notification.headers),
    receivedAt,
    processingMs,
    notification.replayKey === undefined ? null : Buffer.from(notification.replayKey, 'hex'),
  ];
}
