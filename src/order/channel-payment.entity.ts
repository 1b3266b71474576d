import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** Where a payment created at the channel stands. */
export const ChannelPaymentState = {
  /** Terms fixed, no call made yet. */
  Pending: 'PENDING',
  /** One request holds the claim (until lease_until) and is calling the channel. */
  Creating: 'CREATING',
  /** The channel created it: buyer parameters until valid_until. */
  Created: 'CREATED',
  /** The channel refused it, with its code and message. */
  Refused: 'REFUSED',
  /** No trustworthy answer: the same terms are sent again by the next request. */
  Retry: 'RETRY',
} as const;
export type ChannelPaymentState = (typeof ChannelPaymentState)[keyof typeof ChannelPaymentState];

/**
 * The payment this service created at the channel for an order (POST /payment-orders with
 * `method`): one per order, its terms fixed once, so every call sends the same request.
 */
@Entity('channel_payment')
@Index('ix_channel_payment_close_due_at', ['closeDueAt'])
export class ChannelPayment {
  @PrimaryColumn({ name: 'order_no', type: 'varchar', length: 64 })
  orderNo: string;

  @Column({ type: 'varchar', length: 16 })
  channel: string;

  @Column({ type: 'varchar', length: 32 })
  method: string;

  /** SHA-256 (hex) of the shop's request: the same request again replays, another one is a 409. */
  @Column({ name: 'request_hash', type: 'char', length: 64 })
  requestHash: string;

  /** The CreatePaymentRequest as sent to the channel, JSON: every call sends exactly these terms. */
  @Column({ type: 'text' })
  terms: string;

  /** The order's expiry, the channel's time_expire: the trade is closed at the channel after it. */
  @Column({ name: 'expires_at', type: 'datetime', precision: 3 })
  expiresAt: Date;

  @Column({ type: 'varchar', length: 16 })
  state: ChannelPaymentState;

  /** The call counter: the claim's token, so a call's result is stored only by the request that made it. */
  @Column({ type: 'int' })
  attempts: number;

  /** While CREATING: when the claim lapses (its call has long timed out; the process died). */
  @Column({ name: 'lease_until', type: 'datetime', precision: 3, nullable: true })
  leaseUntil: Date | null;

  /** CREATED: the buyer parameters (BuyerParameters, JSON). */
  @Column({ type: 'text', nullable: true })
  buyer: string | null;

  /** CREATED: until when the buyer parameters can be used (never after expires_at). */
  @Column({ name: 'valid_until', type: 'datetime', precision: 3, nullable: true })
  validUntil: Date | null;

  /** The channel's id of what it created (prepay_id, trade_no, tn), when it gives one. */
  @Column({ name: 'channel_trade_id', type: 'varchar', length: 128, nullable: true })
  channelTradeId: string | null;

  /** REFUSED: the channel's code; RETRY: why there was no answer. */
  @Column({ name: 'failure_code', type: 'varchar', length: 64, nullable: true })
  failureCode: string | null;

  @Column({ name: 'failure_message', type: 'varchar', length: 500, nullable: true })
  failureMessage: string | null;

  /** When the expiry worker is next to close the order at the channel; null once nothing is left to close. */
  @Column({ name: 'close_due_at', type: 'datetime', precision: 3, nullable: true })
  closeDueAt: Date | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}
