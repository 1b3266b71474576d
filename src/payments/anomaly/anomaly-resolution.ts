import { Inject, Injectable } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { DomainError } from '../../domain/domain-error';
import { fourEyesConfig } from '../../operators/four-eyes.config';
import { WriteResult } from '../../platform/database/sql';
import { AnomalyStatus, PaymentAnomaly, ResolutionReason, ResolutionStatus } from './anomaly.entity';

export interface ResolutionRequest {
  reason: ResolutionReason;
  /** What the anomaly duplicates (DUPLICATE_OF), or any outside reference. */
  reference?: string;
  note: string;
}

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

/**
 * Closes an anomaly without a refund, in the caller's transaction. Every step is one conditional
 * UPDATE of the anomaly's row, so the row lock orders it against the others and against a refund
 * (EmergencyRefundService moves the anomaly to REFUNDING only while it has no resolution):
 * - request: an OPEN anomaly without a resolution gets one; below REFUND_APPROVAL_THRESHOLD (on the
 *   amount paid) it applies at once (RESOLVED), at or above it waits AWAITING_APPROVAL, the anomaly
 *   still OPEN but closed to refunds. The same request again changes nothing (idempotent);
 * - approve: another admin than the requester applies a waiting one;
 * - reject: any admin (the requester too) withdraws a waiting one: the anomaly is OPEN to refunds again.
 */
@Injectable()
export class AnomalyResolution {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    @Inject(fourEyesConfig.KEY) private readonly config: ConfigType<typeof fourEyesConfig>,
  ) {}

  async request(
    id: string,
    request: ResolutionRequest,
    operatorId: string,
  ): Promise<{ anomaly: PaymentAnomaly; created: boolean }> {
    const now = new Date();
    const threshold = this.config.approvalThreshold ?? null;
    // The threshold is read against the row's own paid_amount, in the statement that claims it.
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
        request.reason,
        request.reference ?? null,
        request.note,
        operatorId,
        now,
        now,
        id,
        AnomalyStatus.Open,
      ],
    );
    const anomaly = await this.lockedOrNotFound(id);
    if (result.affectedRows === 1) return { anomaly, created: true };
    if (anomaly.resolutionStatus !== null && sameRequest(anomaly, request)) return { anomaly, created: false };
    throw new DomainError('AnomalyConflict', unresolvableReason(anomaly));
  }

  async approve(id: string, operatorId: string): Promise<PaymentAnomaly> {
    const now = new Date();
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
    const anomaly = await this.lockedOrNotFound(id);
    if (result.affectedRows === 1) return anomaly;
    if (
      anomaly.resolutionStatus === ResolutionStatus.AwaitingApproval &&
      anomaly.resolutionRequestedBy === operatorId
    ) {
      throw new DomainError(
        'Forbidden',
        `operator ${operatorId} asked to resolve anomaly ${id} and cannot approve it; another admin must`,
      );
    }
    throw notAwaiting(anomaly, 'approved');
  }

  /** Answers the anomaly as it was (`withdrawn`) and as it is now: OPEN to a refund or another resolution again. */
  async reject(id: string): Promise<{ withdrawn: PaymentAnomaly; anomaly: PaymentAnomaly }> {
    const before = await this.lockedOrNotFound(id);
    if (before.resolutionStatus !== ResolutionStatus.AwaitingApproval) throw notAwaiting(before, 'rejected');
    await this.txHost.tx.query(
      `UPDATE payment_anomaly SET ${RESOLUTION_COLUMNS.map((c) => `${c} = NULL`).join(', ')}, updated_at = ?
       WHERE id = ?`,
      [new Date(), id],
    );
    return { withdrawn: before, anomaly: await this.lockedOrNotFound(id) };
  }

  /** A locking read: it sees the latest committed row, whatever this transaction read before. */
  private async lockedOrNotFound(id: string): Promise<PaymentAnomaly> {
    const anomaly = await this.txHost.tx
      .getRepository(PaymentAnomaly)
      .findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
    if (!anomaly) throw new DomainError('NotFound', `anomaly ${id} not found`);
    return anomaly;
  }
}

function sameRequest(anomaly: PaymentAnomaly, request: ResolutionRequest): boolean {
  return (
    anomaly.resolutionReason === request.reason &&
    anomaly.resolutionReference === (request.reference ?? null) &&
    anomaly.resolutionNote === request.note
  );
}

function unresolvableReason(anomaly: PaymentAnomaly): string {
  if (anomaly.resolutionStatus !== null) {
    return (
      `anomaly ${anomaly.id} already has a resolution ${anomaly.resolutionStatus} ` +
      `(${anomaly.resolutionReason}, by ${anomaly.resolutionRequestedBy}); reject it first to resolve it otherwise`
    );
  }
  if (anomaly.status === AnomalyStatus.Refunding) {
    return `anomaly ${anomaly.id} has a refund in flight; it settles the anomaly, or reject the refund first`;
  }
  return `anomaly ${anomaly.id} is ${anomaly.status}; only an OPEN anomaly can be resolved`;
}

function notAwaiting(anomaly: PaymentAnomaly, verb: string): DomainError {
  return new DomainError(
    'AnomalyConflict',
    `the resolution of anomaly ${anomaly.id} is ${anomaly.resolutionStatus ?? 'absent'}; ` +
      `only a resolution that is AWAITING_APPROVAL can be ${verb}`,
  );
}
