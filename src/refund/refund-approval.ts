import { Injectable } from '@nestjs/common';
import { Propagation, Transactional } from '@nestjs-cls/transactional';
import { DomainError } from '../domain/domain-error';
import { Refund, RefundStatus } from './refund.entity';
import { RefundRepository } from './refund.repository';
import { RefundSettlement } from './refund-settlement';

/**
 * Four eyes on large refunds: one admin requests, another approves (the channel is called after
 * the commit, by Refunds) or any admin rejects (the requester may withdraw their own). Both are compare-and-set
 * from AWAITING_APPROVAL, so of concurrent approvals and rejections exactly one applies.
 */
@Injectable()
export class RefundApproval {
  constructor(
    private readonly refunds: RefundRepository,
    private readonly settlement: RefundSettlement,
  ) {}

  @Transactional(Propagation.Mandatory)
  async approve(refundNo: string, operatorId: string): Promise<Refund> {
    if (await this.refunds.approve(refundNo, operatorId)) return (await this.refunds.findByRefundNo(refundNo))!;
    const refund = await this.refunds.findByRefundNo(refundNo);
    if (refund?.requestedBy === operatorId) {
      throw new DomainError(
        'Forbidden',
        `operator ${operatorId} requested refund ${refundNo} and cannot approve it; another admin must`,
      );
    }
    throw await this.settlement.notIn(refundNo, RefundStatus.AwaitingApproval, 'approved');
  }

  /** Cancels the refund before any channel call; the amount it reserved is free again. */
  @Transactional(Propagation.Mandatory)
  async reject(refundNo: string, operatorId: string, reason: string): Promise<Refund> {
    return this.settlement.reject(refundNo, operatorId, reason);
  }
}
