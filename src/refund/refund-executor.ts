import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter } from 'prom-client';
import { retryDelayMs } from '../platform/config/events.config';
import { refundConfig } from '../platform/config/refund.config';
import { REFUND_CALLS_TOTAL } from '../platform/metrics/metrics.module';
import { PaymentChannel } from '../channels/payment-channel';
import { PaymentChannels } from '../channels/payment-channels';
import { ChannelRefundResult, RefundRequest } from '../domain/channel-api';
import { CallbackRecordRepository } from '../payments/idempotency/callback-record.repository';
import { Refund, RefundStatus } from './refund.entity';
import { RefundRepository } from './refund.repository';
import { RefundSettlement } from './refund-settlement';

/**
 * Sends a PENDING refund to its channel and records the answer. Only the caller that wins the
 * refund's compare-and-set claim calls the channel, so concurrent triggers on any replica make one
 * call; a transient failure leaves the refund PENDING with a backoff, for RefundRetryWorker, which
 * also asks the channel about PROCESSING and ABNORMAL refunds whose notification is late.
 */
@Injectable()
export class RefundExecutor {
  private readonly logger = new Logger(RefundExecutor.name);
  constructor(
    private readonly channels: PaymentChannels,
    private readonly payments: CallbackRecordRepository,
    @Inject(refundConfig.KEY) private readonly config: ConfigType<typeof refundConfig>,
    @InjectMetric(REFUND_CALLS_TOTAL) private readonly calls: Counter<string>,
    private readonly refunds: RefundRepository,
    private readonly settlement: RefundSettlement,
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
  ) {}

  channel(name: string): PaymentChannel | undefined {
    return this.channels.get(name);
  }

  /** Fire and forget, for a refund just committed; the retry worker covers whatever this misses. */
  start(refundNo: string): void {
    this.attempt(refundNo).catch((error: Error) =>
      this.logger.error(`refund ${refundNo}: attempt failed: ${error.message}`),
    );
  }

  /** One channel call about a refund: the refund request when PENDING, a query when PROCESSING or ABNORMAL. */
  async attempt(refundNo: string, status: RefundStatus = RefundStatus.Pending): Promise<void> {
    const now = new Date();
    // A crashed attempt's lease runs out after the call's timeout, and the call is made again.
    const leaseUntil = new Date(now.getTime() + 2 * this.channels.callTimeoutMs + 5000);
    if (!(await this.refunds.claimAttempt(refundNo, status, now, leaseUntil))) return;
    const refund = (await this.refunds.findByRefundNo(refundNo))!;
    const channel = this.channels.get(refund.channel)!;
    const request = status === RefundStatus.Pending ? 'refund' : 'query';
    const refundRequest = await this.refundRequest(refund);
    const unavailable = channel.apiUnavailableReason(refundRequest.merchantId);
    const result: ChannelRefundResult = unavailable
      ? { outcome: 'RETRY', detail: unavailable }
      : request === 'refund'
        ? await channel.refund(refundRequest)
        : await channel.queryRefund(refundRequest);
    this.calls.inc({ channel: refund.channel, request, outcome: result.outcome });
    await this.record(refund, result);
  }

  /** What the channel needs: the refund as plain values, with the account that took the payment. */
  private async refundRequest(refund: Refund): Promise<RefundRequest> {
    const { merchantId, subMerchantId } = await this.payments.accountOf(refund.channel, refund.transactionId);
    return {
      refundNo: refund.refundNo,
      transactionId: refund.transactionId,
      merchantId,
      ...(subMerchantId === undefined ? {} : { subMerchantId }),
      amount: refund.amount,
      transactionAmount: refund.transactionAmount,
      currency: refund.currency,
      reason: refund.reason,
    };
  }

  private async record(refund: Refund, result: ChannelRefundResult): Promise<void> {
    const nextAttemptAt = new Date(Date.now() + retryDelayMs(this.config, refund.attempts));
    const { outcome, channelRefundId, detail } = result;
    switch (outcome) {
      case 'PROCESSING':
        if (refund.status === RefundStatus.Pending) {
          return this.refunds.markAccepted(refund.id, channelRefundId, nextAttemptAt);
        }
        return this.defer(refund, nextAttemptAt, detail);
      case 'RETRY':
        return this.defer(refund, nextAttemptAt, detail);
      case 'NOT_REFUNDED':
        return this.resendIfUnconfirmed(refund, nextAttemptAt);
      case 'SUCCEEDED':
      case 'CLOSED':
      case 'ABNORMAL': {
        if (detail) this.logger.warn(`refund ${refund.refundNo}: ${detail}`);
        const settled = await this.txHost.withTransaction(() =>
          this.settlement.settle(refund.refundNo, VERDICT[outcome], channelRefundId, detail),
        );
        // Still ABNORMAL when asked again: ask again later. Settled meanwhile: this changes nothing.
        if (!settled) await this.refunds.deferAttempt(refund.id, refund.status, nextAttemptAt, detail ?? null);
      }
    }
  }

  private async defer(refund: Refund, nextAttemptAt: Date, detail: string | undefined): Promise<void> {
    if (detail) this.logger.warn(`refund ${refund.refundNo}: ${detail}; next call at ${nextAttemptAt.toISOString()}`);
    await this.refunds.deferAttempt(refund.id, refund.status, nextAttemptAt, detail ?? null);
  }

  /**
   * The channel has no successful refund under this number. Soon after it accepted the request
   * that may only mean it is not done yet; REFUND_PROCESSING_MAX_AGE_SECONDS after, it means the
   * refund did not happen (as channels document it), so it is sent again under the same number, which the
   * channel refunds at most once.
   */
  private async resendIfUnconfirmed(refund: Refund, nextAttemptAt: Date): Promise<void> {
    const acceptedAt = refund.acceptedAt ?? refund.createdAt;
    const ageSeconds = Math.floor((Date.now() - acceptedAt.getTime()) / 1000);
    if (refund.status !== RefundStatus.Processing || ageSeconds < this.config.processingMaxAgeSeconds) {
      return this.defer(refund, nextAttemptAt, undefined);
    }
    const note = `${refund.channel} has no successful refund ${refund.refundNo} ${ageSeconds} s after accepting it; sent again`;
    if (await this.refunds.markForResend(refund.id, note)) this.logger.warn(`refund ${refund.refundNo}: ${note}`);
  }
}

const VERDICT = {
  SUCCEEDED: RefundStatus.Succeeded,
  CLOSED: RefundStatus.Closed,
  ABNORMAL: RefundStatus.Abnormal,
} as const;
