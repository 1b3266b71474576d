import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter } from 'prom-client';
import { retryDelayMs } from '../config/events.config';
import { refundConfig } from '../config/refund.config';
import { REFUND_CALLS_TOTAL } from '../metrics/metrics.module';
import { ChannelRefundResult, REFUND_CHANNELS, RefundChannel } from '../channels/payment-channel';
import { Refund, RefundStatus } from './refund.entity';
import { RefundRepository } from './refund.repository';
import { RefundSettlement } from './refund-settlement';

/**
 * Sends a PENDING refund to its channel and records the answer. Only the caller that wins the
 * refund's compare-and-set claim calls the channel, so concurrent triggers on any replica make one
 * call; a transient failure leaves the refund PENDING with a backoff, for RefundRetryWorker, which
 * also asks the channel about PROCESSING refunds whose notification is late.
 */
@Injectable()
export class RefundExecutor {
  private readonly logger = new Logger(RefundExecutor.name);
  private readonly channels: Map<string, RefundChannel>;

  constructor(
    @Inject(REFUND_CHANNELS) channels: RefundChannel[],
    @Inject(refundConfig.KEY) private readonly config: ConfigType<typeof refundConfig>,
    @InjectMetric(REFUND_CALLS_TOTAL) private readonly calls: Counter<string>,
    private readonly refunds: RefundRepository,
    private readonly settlement: RefundSettlement,
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
  ) {
    this.channels = new Map(channels.map((c) => [c.channel, c]));
  }

  channel(name: string): RefundChannel | undefined {
    return this.channels.get(name);
  }

  /** Fire and forget, for a refund just committed; the retry worker covers whatever this misses. */
  start(refundNo: string): void {
    this.attempt(refundNo).catch((error: Error) =>
      this.logger.error(`refund ${refundNo}: attempt failed: ${error.message}`),
    );
  }

  /** One channel call about a refund: the refund request when PENDING, a query when PROCESSING. */
  async attempt(refundNo: string, status: RefundStatus = RefundStatus.Pending): Promise<void> {
    const now = new Date();
    // A crashed attempt's lease runs out after the call's timeout, and the call is made again.
    const leaseUntil = new Date(now.getTime() + 2 * this.config.requestTimeoutMs + 5000);
    if (!(await this.refunds.claimAttempt(refundNo, status, now, leaseUntil))) return;
    const refund = (await this.refunds.findByRefundNo(refundNo))!;
    const channel = this.channels.get(refund.channel)!;
    const request = status === RefundStatus.Pending ? 'refund' : 'query';
    const result: ChannelRefundResult = channel.unavailableReason
      ? { outcome: 'RETRY', detail: channel.unavailableReason }
      : await channel[request](refund);
    this.calls.inc({ channel: refund.channel, request, outcome: result.outcome });
    await this.record(refund, result);
  }

  private async record(refund: Refund, result: ChannelRefundResult): Promise<void> {
    const nextAttemptAt = new Date(Date.now() + retryDelayMs(this.config, refund.attempts));
    const { outcome, channelRefundId, detail } = result;
    if (outcome === 'PROCESSING' && refund.status === RefundStatus.Pending) {
      await this.refunds.markAccepted(refund.id, channelRefundId, nextAttemptAt);
    } else if (outcome === 'PROCESSING' || outcome === 'RETRY') {
      if (detail) this.logger.warn(`refund ${refund.refundNo}: ${detail}; next call at ${nextAttemptAt.toISOString()}`);
      await this.refunds.deferAttempt(refund.id, refund.status, nextAttemptAt, detail ?? null);
    } else {
      if (detail) this.logger.warn(`refund ${refund.refundNo}: ${detail}`);
      await this.txHost.withTransaction(() =>
        this.settlement.settle(refund.refundNo, FINAL_STATUS[outcome], channelRefundId, detail),
      );
    }
  }
}

const FINAL_STATUS = {
  SUCCEEDED: RefundStatus.Succeeded,
  CLOSED: RefundStatus.Closed,
  ABNORMAL: RefundStatus.Abnormal,
} as const;
