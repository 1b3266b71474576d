import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { bigintAmount } from '../domain/money';
import { AnomalyType } from '../payments/anomaly/anomaly.entity';

export const RefundStatus = {
  /** At or above REFUND_APPROVAL_THRESHOLD: recorded and reserved, the channel not called until another admin approves. */
  AwaitingApproval: 'AWAITING_APPROVAL',
  /** Recorded; the channel has not accepted it yet (not called, or a transient failure: retried). */
  Pending: 'PENDING',
  /** The channel accepted it; its result comes by notification. */
  Processing: 'PROCESSING',
  Succeeded: 'SUCCEEDED',
  /** The channel refused or closed it: no money moved, the amount can be refunded again. */
  Closed: 'CLOSED',
  /**
   * The channel could not pay it out (e.g. the buyer's card is gone): needs a person. Not final: the
   * channel's later SUCCESS or CLOSED still settles it, or an operator resolves it offline.
   */
  Abnormal: 'ABNORMAL',
  /** An operator gave the money back outside the channel (after ABNORMAL): counts as refunded. */
  ResolvedOffline: 'RESOLVED_OFFLINE',
  /** An admin rejected it while it awaited approval: the channel was never called, the amount is free again. */
  Rejected: 'REJECTED',
} as const;
export type RefundStatus = (typeof RefundStatus)[keyof typeof RefundStatus];

/** Statuses the channel may still move; the money is on its way. */
export const OPEN_REFUND_STATUSES: readonly RefundStatus[] = [RefundStatus.Pending, RefundStatus.Processing];

/** Statuses in which the money may still go back: the order or anomaly waits for them in REFUNDING. */
export const IN_FLIGHT_REFUND_STATUSES: readonly RefundStatus[] = [
  RefundStatus.AwaitingApproval,
  ...OPEN_REFUND_STATUSES,
];

/** Statuses in which the money is back with the payer. */
export const REFUNDED_STATUSES: readonly RefundStatus[] = [RefundStatus.Succeeded, RefundStatus.ResolvedOffline];

/**
 * Why the last send of a PENDING refund settled nothing, so the channel is asked before anything is
 * sent again: NO_ANSWER (a timeout, a dropped connection, a 5xx, an answer that did not verify) or
 * REFUSED (a re-send refused: that says nothing about the first request).
 */
export const UnconfirmedSend = { NoAnswer: 'NO_ANSWER', Refused: 'REFUSED' } as const;
export type UnconfirmedSend = (typeof UnconfirmedSend)[keyof typeof UnconfirmedSend];

/** Send times as epoch milliseconds, comma-separated, oldest first; none is NULL. */
const sendTimesColumn = {
  to: (times: Date[] | undefined): string | null => (times?.length ? times.map((t) => t.getTime()).join(',') : null),
  from: (text: string | null): Date[] => (text ? text.split(',').map((ms) => new Date(Number(ms))) : []),
};

// A malformed notification's anomaly took no money: there is nothing of it to refund.
const { MalformedNotification: _tookNoMoney, ...RefundableAnomalyType } = AnomalyType;

/** Why a transaction's money goes back: it paid its order, or it is an anomaly's (the anomaly's type). */
export const RefundPurpose = { OrderRefund: 'ORDER_REFUND', ...RefundableAnomalyType } as const;
export type RefundPurpose = (typeof RefundPurpose)[keyof typeof RefundPurpose];

/**
 * One refund of one transaction. The refund number is unique and exists before the channel is
 * called: retries and repeated requests reuse it, and the channels treat it as their idempotency key.
 */
@Entity('refund')
@Index('uq_refund_refund_no', ['refundNo'], { unique: true })
@Index('ix_refund_transaction', ['channel', 'transactionId'])
@Index('ix_refund_due', ['status', 'nextAttemptAt'])
export class Refund {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'refund_no', type: 'varchar', length: 64 })
  refundNo: string;

  @Column({ type: 'varchar', length: 16 })
  channel: string;

  @Column({ name: 'transaction_id', type: 'varchar', length: 64 })
  transactionId: string;

  @Index('ix_refund_order_no')
  @Column({ name: 'order_no', type: 'varchar', length: 64 })
  orderNo: string;

  @Column({ type: 'varchar', length: 32 })
  purpose: RefundPurpose;

  /** Integer minor units. */
  @Column({ type: 'bigint', transformer: bigintAmount })
  amount: number;

  /** What the refunded transaction paid; the channels want it with every refund. */
  @Column({ name: 'transaction_amount', type: 'bigint', transformer: bigintAmount })
  transactionAmount: number;

  @Column({ type: 'char', length: 3 })
  currency: string;

  @Column({ type: 'varchar', length: 256 })
  reason: string;

  @Column({ type: 'varchar', length: 32 })
  status: RefundStatus;

  @Column({ name: 'channel_refund_id', type: 'varchar', length: 64, nullable: true })
  channelRefundId: string | null;

  @Column({ type: 'int', unsigned: true, default: 0 })
  attempts: number;

  /** When a PENDING refund may be sent (again); also the lease of the attempt in flight. */
  @Column({ name: 'next_attempt_at', type: 'datetime', precision: 3, nullable: true })
  nextAttemptAt: Date | null;

  /** When the channel last accepted the refund request (PROCESSING); how long it has gone unconfirmed. */
  @Column({ name: 'accepted_at', type: 'datetime', precision: 3, nullable: true })
  acceptedAt: Date | null;

  @Column({ name: 'last_error', type: 'varchar', length: 500, nullable: true })
  lastError: string | null;

  /**
   * Every time the refund request was sent to the channel, oldest first: a channel may know a
   * request by when it was sent (UnionPay's txnTime), and is asked about each of them.
   */
  @Column({ name: 'send_times', type: 'varchar', length: 255, nullable: true, transformer: sendTimesColumn })
  sendTimes: Date[];

  /** Set while the last send settled nothing: the channel is asked about the refund before it is sent again. */
  @Column({ name: 'unconfirmed_send', type: 'varchar', length: 16, nullable: true })
  unconfirmedSend: UnconfirmedSend | null;

  @Column({ name: 'requested_by', type: 'varchar', length: 64 })
  requestedBy: string;

  /** The admin who approved or rejected a refund that awaited approval. */
  @Column({ name: 'reviewed_by', type: 'varchar', length: 64, nullable: true })
  reviewedBy: string | null;

  @Column({ name: 'reviewed_at', type: 'datetime', precision: 3, nullable: true })
  reviewedAt: Date | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;

  @Column({ name: 'completed_at', type: 'datetime', precision: 3, nullable: true })
  completedAt: Date | null;
}
