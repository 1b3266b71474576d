import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { WriteResult } from '../../platform/database/sql';
import { AnomalyStatus, PaymentAnomaly, ResolutionReason, ResolutionStatus } from './anomaly.entity';

const RESOLUTION_COLUMNS = [
  'resolution_status',
  'resolution_reason',
  'resolution_reference',
  'resolution_note',
  'resolution_requested_by',
  'resolution_requested_at',
  'resolution_reviewed_by',
  'resolution_reviewed_at',
];

/** A resolution as asked for: why, with what reference, by whom. */
export interface ResolutionClaim {
  reason: ResolutionReason;
  reference: string | null;
  note: string;
  operatorId: string;
}

/**
 * payment_anomaly's resolution columns, in the caller's transaction: each step one conditional
 * UPDATE of the anomaly's row, true when it changed the row.
 */
@Injectable()
export class AnomalyResolutionRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /**
   * An OPEN anomaly without a resolution gets one: applied at once (RESOLVED) below `threshold`,
   * AWAITING_APPROVAL at or above it, read against the row's own paid_amount in the statement that claims it.
   */
  async request(id: string, claim: ResolutionClaim, threshold: number | null, now: Date): Promise<boolean> {
    const waits = '(? IS NOT NULL AND paid_amount >= ?)';
    const result: WriteResult = await this.txHost.tx.query(
      `UPDATE payment_anomaly SET
         resolution_status = IF(${waits}, ?, ?),
         status = IF(${waits}, status, ?),
         resolution_reason = ?, resolution_reference = ?, resolution_note = ?,
         resolution_requested_by = ?, resolution_requested_at = ?, updated_at = ?
       WHERE id = ? AND status = ? AND resolution_status IS NULL`,
      [
        threshold,
        threshold,
        ResolutionStatus.AwaitingApproval,
        ResolutionStatus.Applied,
        threshold,
        threshold,
        AnomalyStatus.Resolved,
        claim.reason,
        claim.reference,
        claim.note,
        claim.operatorId,
        now,
        now,
        id,
        AnomalyStatus.Open,
      ],
    );
    return result.affectedRows === 1;
  }

  /** Applies a resolution AWAITING_APPROVAL of an OPEN anomaly, when `operatorId` is not who asked for it. */
  async approve(id: string, operatorId: string, now: Date): Promise<boolean> {
    const result: WriteResult = await this.txHost.tx.query(
      `UPDATE payment_anomaly SET resolution_status = ?, status = ?, resolution_reviewed_by = ?,
         resolution_reviewed_at = ?, updated_at = ?
       WHERE id = ? AND resolution_status = ? AND status = ? AND resolution_requested_by <> ?`,
      [
        ResolutionStatus.Applied,
        AnomalyStatus.Resolved,
        operatorId,
        now,
        now,
        id,
        ResolutionStatus.AwaitingApproval,
        AnomalyStatus.Open,
        operatorId,
      ],
    );
    return result.affectedRows === 1;
  }

  /** Clears the resolution (the caller holds the row's lock and checked it awaits approval). */
  async withdraw(id: string, now: Date): Promise<void> {
    await this.txHost.tx.query(
      `UPDATE payment_anomaly SET ${RESOLUTION_COLUMNS.map((c) => `${c} = NULL`).join(', ')}, updated_at = ?
       WHERE id = ?`,
      [now, id],
    );
  }

  /** A locking read: it sees the latest committed row, whatever this transaction read before. */
  locked(id: string): Promise<PaymentAnomaly | null> {
    return this.txHost.tx.getRepository(PaymentAnomaly).findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }
}
