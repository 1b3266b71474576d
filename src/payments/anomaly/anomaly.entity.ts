import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { bigintAmount } from '../../domain/money';

export const AnomalyType = {
  DuplicatePayment: 'DUPLICATE_PAYMENT',
  PaidAfterClose: 'PAID_AFTER_CLOSE',
  AmountMismatch: 'AMOUNT_MISMATCH',
  /** Paid to another account (mchid, app_id) than the one the order was registered with. */
  MerchantMismatch: 'MERCHANT_MISMATCH',
  /** Signed, but its data cannot apply (see VerifiedNotification.malformed): for an operator to read. */
  MalformedNotification: 'MALFORMED_NOTIFICATION',
} as const;
export type AnomalyType = (typeof AnomalyType)[keyof typeof AnomalyType];

export const AnomalyStatus = { Open: 'OPEN', Refunding: 'REFUNDING', Resolved: 'RESOLVED' } as const;
export type AnomalyStatus = (typeof AnomalyStatus)[keyof typeof AnomalyStatus];

/** Money that moved wrongly and must be given back: one row per offending transaction. */
@Entity('payment_anomaly')
@Index('uq_payment_anomaly_channel_transaction', ['channel', 'transactionId'], { unique: true })
export class PaymentAnomaly {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ type: 'varchar', length: 32 })
  type: AnomalyType;

  @Index('ix_payment_anomaly_order_no')
  @Column({ name: 'order_no', type: 'varchar', length: 64 })
  orderNo: string;

  @Column({ type: 'varchar', length: 16 })
  channel: string;

  @Column({ name: 'transaction_id', type: 'varchar', length: 64 })
  transactionId: string;

  @Column({ name: 'order_amount', type: 'bigint', transformer: bigintAmount })
  orderAmount: number;

  @Column({ name: 'paid_amount', type: 'bigint', transformer: bigintAmount })
  paidAmount: number;

  @Column({ type: 'char', length: 3 })
  currency: string;

  @Index('ix_payment_anomaly_status')
  @Column({ type: 'varchar', length: 16, default: AnomalyStatus.Open })
  status: AnomalyStatus;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}
