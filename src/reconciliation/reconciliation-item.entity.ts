import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { bigintAmount } from '../domain/money';

export const ItemOutcome = {
  Matched: 'MATCHED',
  MissingLocal: 'MISSING_LOCAL',
  MissingChannel: 'MISSING_CHANNEL',
  AmountDiffers: 'AMOUNT_DIFFERS',
  RefundMissingLocal: 'REFUND_MISSING_LOCAL',
  RefundMissingChannel: 'REFUND_MISSING_CHANNEL',
  Malformed: 'MALFORMED',
} as const;
export type ItemOutcome = (typeof ItemOutcome)[keyof typeof ItemOutcome];
/** Every outcome but MATCHED, which is only counted. */
export const DISCREPANCIES = Object.values(ItemOutcome).filter((o) => o !== ItemOutcome.Matched);

/** One discrepancy found by a run (matched lines are counted on the run, not listed). */
@Entity('reconciliation_item')
@Index('ix_reconciliation_item_run', ['runId', 'outcome'])
export class ReconciliationItem {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'run_id', type: 'bigint' })
  runId: string;

  @Column({ type: 'varchar', length: 32 })
  outcome: ItemOutcome;

  /** PAYMENT, REFUND, or LINE for a malformed line. */
  @Column({ type: 'varchar', length: 8 })
  kind: string;

  @Column({ name: 'transaction_id', type: 'varchar', length: 64, nullable: true })
  transactionId: string | null;

  @Column({ name: 'order_no', type: 'varchar', length: 64, nullable: true })
  orderNo: string | null;

  @Column({ name: 'refund_no', type: 'varchar', length: 64, nullable: true })
  refundNo: string | null;

  @Column({ name: 'channel_amount', type: 'bigint', nullable: true, transformer: bigintAmount })
  channelAmount: number | null;

  @Column({ name: 'local_amount', type: 'bigint', nullable: true, transformer: bigintAmount })
  localAmount: number | null;

  @Column({ name: 'bill_line', type: 'int', nullable: true })
  billLine: number | null;

  /** MISSING_LOCAL: what the trade query and the payment pipeline made of it (PAID, DUPLICATE, an anomaly, NOT_CONFIRMED, FAILED). */
  @Column({ type: 'varchar', length: 32, nullable: true })
  resolution: string | null;

  @Column({ type: 'varchar', length: 500, nullable: true })
  detail: string | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;
}
