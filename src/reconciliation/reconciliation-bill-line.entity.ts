import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { bigintAmount } from '../domain/money';

/**
 * The bill's lines while its run compares them: loaded in multi-row batches, compared with the
 * payments and refunds by set-based joins, deleted when the run ends. So a bill of any size is
 * reconciled with bounded memory and no query per line.
 */
@Entity('reconciliation_bill_line')
@Index('ix_reconciliation_bill_line_transaction', ['runId', 'transactionId'])
@Index('ix_reconciliation_bill_line_refund', ['runId', 'refundNo'])
export class ReconciliationBillLine {
  @PrimaryColumn({ name: 'run_id', type: 'bigint' })
  runId: string;

  @PrimaryColumn({ type: 'int' })
  line: number;

  @Column({ type: 'varchar', length: 8 })
  kind: string;

  @Column({ name: 'transaction_id', type: 'varchar', length: 64 })
  transactionId: string;

  @Column({ name: 'order_no', type: 'varchar', length: 64 })
  orderNo: string;

  @Column({ name: 'refund_no', type: 'varchar', length: 64, nullable: true })
  refundNo: string | null;

  @Column({ type: 'bigint', transformer: bigintAmount })
  amount: number;

  @Column({ name: 'occurred_at', type: 'datetime', precision: 3 })
  occurredAt: Date;
}
