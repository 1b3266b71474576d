import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { bigintAmount } from '../domain/money';

/**
 * A refund the channel made although it was recorded CLOSED or REJECTED here: its amount had been
 * freed, and may have been refunded again meanwhile (money left twice). One row per refund, for a
 * person to act on, with the figures.
 */
@Entity('refund_anomaly')
@Index('uq_refund_anomaly_refund_no', ['refundNo'], { unique: true })
export class RefundAnomaly {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'refund_no', type: 'varchar', length: 64 })
  refundNo: string;

  @Column({ type: 'varchar', length: 16 })
  channel: string;

  @Column({ name: 'transaction_id', type: 'varchar', length: 64 })
  transactionId: string;

  @Index('ix_refund_anomaly_order_no')
  @Column({ name: 'order_no', type: 'varchar', length: 64 })
  orderNo: string;

  /** What the refund was recorded as when the channel said it succeeded: CLOSED or REJECTED. */
  @Column({ name: 'was_status', type: 'varchar', length: 32 })
  wasStatus: string;

  /** The refund's amount, integer minor units. */
  @Column({ type: 'bigint', transformer: bigintAmount })
  amount: number;

  /** What the transaction paid. */
  @Column({ name: 'paid_amount', type: 'bigint', transformer: bigintAmount })
  paidAmount: number;

  /** What the transaction's refunds add up to once this one counts: above paid_amount, money left twice. */
  @Column({ name: 'refunded_amount', type: 'bigint', transformer: bigintAmount })
  refundedAmount: number;

  @Column({ type: 'char', length: 3 })
  currency: string;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;
}
