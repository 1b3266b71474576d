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

/** Why an admin closes an anomaly without a refund. */
export const ResolutionReason = {
  /** The merchant keeps the money as payment (e.g. an underpayment accepted). */
  AcceptedAsPaid: 'ACCEPTED_AS_PAID',
  /** The money went back to the payer outside the service. */
  RefundedOutside: 'REFUNDED_OUTSIDE',
  /** Another anomaly or record covers it: `reference` names which. */
  DuplicateOf: 'DUPLICATE_OF',
  /** Settled with the channel's support (e.g. a malformed notification). */
  SettledWithChannel: 'SETTLED_WITH_CHANNEL',
} as const;
export type ResolutionReason = (typeof ResolutionReason)[keyof typeof ResolutionReason];

/** A resolution at or above REFUND_APPROVAL_THRESHOLD waits for a second admin; APPLIED has closed the anomaly. */
export const ResolutionStatus = { AwaitingApproval: 'AWAITING_APPROVAL', Applied: 'APPLIED' } as const;
export type ResolutionStatus = (typeof ResolutionStatus)[keyof typeof ResolutionStatus];

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

  /** Set while an admin's resolution without a refund awaits approval or once it applied: no refund may start then. */
  @Column({ name: 'resolution_status', type: 'varchar', length: 24, nullable: true })
  resolutionStatus: ResolutionStatus | null;

  @Column({ name: 'resolution_reason', type: 'varchar', length: 32, nullable: true })
  resolutionReason: ResolutionReason | null;

  @Column({ name: 'resolution_reference', type: 'varchar', length: 64, nullable: true })
  resolutionReference: string | null;

  @Column({ name: 'resolution_note', type: 'varchar', length: 256, nullable: true })
  resolutionNote: string | null;

  @Column({ name: 'resolution_requested_by', type: 'varchar', length: 64, nullable: true })
  resolutionRequestedBy: string | null;

  @Column({ name: 'resolution_requested_at', type: 'datetime', precision: 3, nullable: true })
  resolutionRequestedAt: Date | null;

  @Column({ name: 'resolution_reviewed_by', type: 'varchar', length: 64, nullable: true })
  resolutionReviewedBy: string | null;

  @Column({ name: 'resolution_reviewed_at', type: 'datetime', precision: 3, nullable: true })
  resolutionReviewedAt: Date | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}
