import { Inject, Injectable } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { Propagation, Transactional } from '@nestjs-cls/transactional';
import { DomainError } from '../../domain/domain-error';
import { fourEyesConfig } from '../../operators/four-eyes.config';
import { TransactionRunner } from '../../platform/transaction/transaction.runner';
import { AnomalyStatus, PaymentAnomaly, ResolutionReason, ResolutionStatus } from './anomaly.entity';
import { AnomalyResolutionRepository } from './anomaly-resolution.repository';

export interface ResolutionRequest {
  reason: ResolutionReason;
  /** What the anomaly duplicates (DUPLICATE_OF), or any outside reference. */
  reference?: string;
  note: string;
}

/** Written in the step's own transaction, after it (the admin route's audit row): both commit, or neither. */
export type Alongside<T> = (result: T) => Promise<void>;

/**
 * Closes an anomaly without a refund. Each step is a use case that opens ONE transaction of its
 * own (Propagation.Never), with the caller's audit row (alongside), and is one conditional UPDATE
 * of the anomaly's row (AnomalyResolutionRepository), so the row lock orders it against the others
 * and against a refund (EmergencyRefundService moves the anomaly to REFUNDING only while it has no resolution):
 * - request: an OPEN anomaly without a resolution gets one; below REFUND_APPROVAL_THRESHOLD (on the
 *   amount paid) it applies at once (RESOLVED), at or above it waits AWAITING_APPROVAL, the anomaly
 *   still OPEN but closed to refunds. The same request again changes nothing (idempotent);
 * - approve: another admin than the requester applies a waiting one;
 * - reject: any admin (the requester too) withdraws a waiting one: the anomaly is OPEN to refunds again.
 */
@Injectable()
export class AnomalyResolution {
  constructor(
    private readonly resolutions: AnomalyResolutionRepository,
    private readonly transactions: TransactionRunner,
    @Inject(fourEyesConfig.KEY) private readonly config: ConfigType<typeof fourEyesConfig>,
  ) {}

  @Transactional(Propagation.Never)
  request(
    id: string,
    request: ResolutionRequest,
    operatorId: string,
    alongside?: Alongside<{ anomaly: PaymentAnomaly; created: boolean }>,
  ): Promise<{ anomaly: PaymentAnomaly; created: boolean }> {
    return this.commit(async () => {
      const claim = { reason: request.reason, reference: request.reference ?? null, note: request.note, operatorId };
      const claimed = await this.resolutions.request(id, claim, this.config.approvalThreshold ?? null, new Date());
      const anomaly = await this.lockedOrNotFound(id);
      if (claimed) return { anomaly, created: true };
      if (anomaly.resolutionStatus !== null && sameRequest(anomaly, request)) return { anomaly, created: false };
      throw new DomainError('AnomalyConflict', unresolvableReason(anomaly));
    }, alongside);
  }

  @Transactional(Propagation.Never)
  approve(id: string, operatorId: string, alongside?: Alongside<PaymentAnomaly>): Promise<PaymentAnomaly> {
    return this.commit(async () => {
      const approved = await this.resolutions.approve(id, operatorId, new Date());
      const anomaly = await this.lockedOrNotFound(id);
      if (approved) return anomaly;
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
    }, alongside);
  }

  /** Answers the anomaly as it was (`withdrawn`) and as it is now: OPEN to a refund or another resolution again. */
  @Transactional(Propagation.Never)
  reject(
    id: string,
    alongside?: Alongside<{ withdrawn: PaymentAnomaly; anomaly: PaymentAnomaly }>,
  ): Promise<{ withdrawn: PaymentAnomaly; anomaly: PaymentAnomaly }> {
    return this.commit(async () => {
      const before = await this.lockedOrNotFound(id);
      if (before.resolutionStatus !== ResolutionStatus.AwaitingApproval) throw notAwaiting(before, 'rejected');
      await this.resolutions.withdraw(id, new Date());
      return { withdrawn: before, anomaly: await this.lockedOrNotFound(id) };
    }, alongside);
  }

  private commit<T>(change: () => Promise<T>, alongside?: Alongside<T>): Promise<T> {
    return this.transactions.run(async () => {
      const result = await change();
      await alongside?.(result);
      return result;
    });
  }

  private async lockedOrNotFound(id: string): Promise<PaymentAnomaly> {
    const anomaly = await this.resolutions.locked(id);
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
