import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

export const RunStatus = {
  /** Created by the schedule, not started yet. */
  Pending: 'PENDING',
  /** Claimed by one instance until `leaseUntil`; an expired lease may be taken over. */
  Running: 'RUNNING',
  Completed: 'COMPLETED',
  /** The channel has not generated the bill yet: asked again at `nextAttemptAt`. */
  NotReady: 'NOT_READY',
  /** No trustworthy bill (download, hash, signature) or a database failure: asked again at `nextAttemptAt`. */
  Failed: 'FAILED',
} as const;
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];

/** One reconciliation of one account's bill of one day; a re-run replaces its items. */
@Entity('reconciliation_run')
@Index('uq_reconciliation_run_day', ['channel', 'merchantId', 'subMerchantId', 'billDate'], { unique: true })
@Index('ix_reconciliation_run_due', ['status', 'nextAttemptAt'])
@Index('ix_reconciliation_run_date', ['billDate'])
export class ReconciliationRun {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ type: 'varchar', length: 16 })
  channel: string;

  @Column({ name: 'merchant_id', type: 'varchar', length: 32 })
  merchantId: string;

  /** The sub-merchant (of a service provider's account) whose bill it is; '' for the account's own bill. */
  @Column({ name: 'sub_merchant_id', type: 'varchar', length: 32, default: '' })
  subMerchantId: string;

  /** The Beijing calendar day, YYYY-MM-DD. */
  @Column({ name: 'bill_date', type: 'char', length: 10 })
  billDate: string;

  @Column({ type: 'varchar', length: 16 })
  status: RunStatus;

  /** Who holds the run while RUNNING: only that claim may renew or finish it. */
  @Column({ name: 'claim_token', type: 'char', length: 36, nullable: true })
  claimToken: string | null;

  @Column({ name: 'lease_until', type: 'datetime', precision: 3, nullable: true })
  leaseUntil: Date | null;

  @Column({ type: 'int', default: 0 })
  attempts: number;

  @Column({ name: 'next_attempt_at', type: 'datetime', precision: 3, nullable: true })
  nextAttemptAt: Date | null;

  /** Bill lines about money read (payments and refunds). */
  @Column({ name: 'bill_lines', type: 'int', default: 0 })
  billLines: number;

  /** JSON: the count per outcome, MATCHED included. */
  @Column({ type: 'varchar', length: 500, nullable: true })
  counts: string | null;

  @Column({ type: 'varchar', length: 500, nullable: true })
  detail: string | null;

  @Column({ name: 'started_at', type: 'datetime', precision: 3, nullable: true })
  startedAt: Date | null;

  @Column({ name: 'finished_at', type: 'datetime', precision: 3, nullable: true })
  finishedAt: Date | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;
}
