import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter } from 'prom-client';
import { retryDelayMs } from '../config/events.config';
import { refundConfig } from '../config/refund.config';
import { REFUND_CALLS_TOTAL } from '../metrics/metrics.module';
import { ChannelRefundResult, REFUND_CHANNELS, RefundChannel } from './channels/refund-channel';
import { Refund, RefundStatus } from './refund.entity';
import { RefundRepository } from './refund.repository';
import { RefundSettlement } from './refund-settlement';

/**
 * Sends a PENDING refund to its channel and records the answer. Only the caller that wins the
 * refund's compare-and-set claim calls the channel, so concurrent triggers on any replica make one
 * call; a transient failure leaves the refund PENDING with a backoff, for RefundRetryWorker.
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

  async attempt(refundNo: string): Promise<void> {
    const now = new Date();
    // A crashed attempt's lease runs out after the call's timeout, and the refund is sent again.
    const leaseUntil = new Date(now.getTime() + 2 * this.config.requestTimeoutMs + 5000);
    if (!(await this.refunds.claimAttempt(refundNo, now, leaseUntil))) return;
    const refund = (await this.refunds.findByRefundNo(refundNo))!;
    const channel = this.channels.get(refund.channel);
    const result: ChannelRefundResult = channel?.unavailableReason
      ? { outcome: 'RETRY', detail: channel.unavailableReason }
      : await channel!.refund(refund);
    this.calls.inc({ channel: refund.channel, outcome: result.outcome });
    await this.record(refund, result);
  }

  private async record(refund: Refund, result: ChannelRefundResult): Promise<void> {
    switch (result.outcome) {
      case 'SUCCEEDED':
        await this.txHost.withTransaction(() =>
          this.settlement.settle(refund.refundNo, RefundStatus.Succeeded, result.channelRefundId),
        );
        return;
      case 'CLOSED':
      case 'ABNORMAL':
        this.logger.warn(`refund ${refund.refundNo}: ${result.detail}`);
        await this.txHost.withTransaction(() =>
          this.settlement.settle(
            refund.refundNo,
            RefundStatus[result.outcome === 'CLOSED' ? 'Closed' : 'Abnormal'],
            result.channelRefundId,
            result.detail,
          ),
        );
        return;
      case 'PROCESSING':
        await this.refunds.markAccepted(refund.id, result.channelRefundId);
        return;
      case 'RETRY': {
        const delay = retryDelayMs(this.config, refund.attempts + 1);
        this.logger.warn(`refund ${refund.refundNo}: ${result.detail}; retrying in ${delay} ms`);
        await this.refunds.deferAttempt(refund.id, new Date(Date.now() + delay), result.detail);
      }
    }
  }
}
