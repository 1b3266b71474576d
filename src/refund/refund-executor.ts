import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter } from 'prom-client';
import { retryDelayMs } from '../events/events.config';
import { refundConfig } from './refund.config';
import { REFUND_CALLS_TOTAL } from '../platform/metrics/metrics.module';
import { PaymentChannel } from '../channels/payment-channel';
import { PaymentChannels } from '../channels/payment-channels';
import { ChannelRefundResult, RefundRequest } from '../domain/channel-api';
import { CallbackRecordRepository } from '../payments/idempotency/callback-record.repository';
import { Refund, RefundStatus, UnconfirmedSend } from './refund.entity';
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

  /**
   * One attempt at a refund: a PENDING one is sent, or, when an earlier send settled nothing, asked
   * about first and sent again only if the channel has no such refund; a PROCESSING or ABNORMAL one
   * is asked about.
   */
  async attempt(refundNo: string, status: RefundStatus = RefundStatus.Pending): Promise<void> {
    const now = new Date();
    // A crashed attempt's lease runs out after its calls' timeouts (a query, then a send), and it is made again.
    const leaseUntil = new Date(now.getTime() + 2 * this.channels.callTimeoutMs + 5000);
    if (!(await this.refunds.claimAttempt(refundNo, status, now, leaseUntil))) return;
    const refund = (await this.refunds.findByRefundNo(refundNo))!;
    const channel = this.channels.get(refund.channel)!;
    const request = await this.refundRequest(refund);
    const unavailable = channel.apiUnavailableReason(request.merchantId);
    if (unavailable) {
      this.calls.inc({
        channel: refund.channel,
        request: status === RefundStatus.Pending ? 'refund' : 'query',
        outcome: 'RETRY',
      });
      return this.record(refund, { outcome: 'RETRY', detail: unavailable });
    }
    if (status !== RefundStatus.Pending) return this.record(refund, await this.queryChannel(channel, request));
    if (refund.unconfirmedSend) return this.askBeforeSendingAgain(refund, channel, request);
    return this.send(refund, channel, request);
  }

  /**
   * An earlier send got no definite answer (or a re-send was refused): the channel may have made the
   * refund. Its word about this refund settles it; only when it has no such refund is it sent again,
   * under the same refund number. A refused re-send with no refund at the channel was refused for good.
   */
  private async askBeforeSendingAgain(refund: Refund, channel: PaymentChannel, request: RefundRequest): Promise<void> {
    const answer = await this.queryChannel(channel, request);
    if (answer.outcome !== 'NOT_REFUNDED') return this.record(refund, answer);
    if (refund.unconfirmedSend === UnconfirmedSend.Refused) {
      return this.record(refund, { outcome: 'CLOSED', detail: refund.lastError ?? 'the channel refused it' });
    }
    return this.send(refund, channel, request);
  }

  /** Sends the refund, its send time recorded first: a lost answer leaves it to be asked about. */
  private async send(refund: Refund, channel: PaymentChannel, request: RefundRequest): Promise<void> {
    const sentAt = new Date();
    if (!(await this.refunds.recordSend(refund.id, sentAt))) return this.giveUpSending(refund);
    const sendTimes = [...refund.sendTimes, sentAt];
    const answer = await channel.refund({ ...request, sendTimes });
    this.calls.inc({ channel: refund.channel, request: 'refund', outcome: answer.outcome });
    const resent = refund.sendTimes.length > 0;
    if (resent && answer.outcome === 'CLOSED') return this.askAfterRefusal(refund, answer.detail);
    return this.record(refund, answer);
  }

  private async queryChannel(channel: PaymentChannel, request: RefundRequest): Promise<ChannelRefundResult> {
    const answer = await channel.queryRefund(request);
    this.calls.inc({ channel: channel.channel, request: 'query', outcome: answer.outcome });
    return answer;
  }

  /** A refusal of a re-send says nothing about the earlier sends: the channel is asked about the refund next. */
  private async askAfterRefusal(refund: Refund, detail: string | undefined): Promise<void> {
    const nextAttemptAt = new Date(Date.now() + retryDelayMs(this.config, refund.attempts));
    const note = `re-send refused: ${detail ?? 'no reason given'}`;
    this.logger.warn(`refund ${refund.refundNo}: ${note}; the channel is asked about the refund`);
    await this.refunds.markResendRefused(refund.id, nextAttemptAt, note);
  }

  /** Sent as often as can be kept track of, never with a definite answer: a person must look at the channel. */
  private async giveUpSending(refund: Refund): Promise<void> {
    const detail = `sent ${refund.sendTimes.length} times without a definite answer; check it at the channel`;
    this.logger.error(`refund ${refund.refundNo}: ${detail}`);
    await this.record(refund, { outcome: 'ABNORMAL', detail });
  }

  /** What the channel needs: the refund as plain values, with the account that took the payment. */
  private async refundRequest(refund: Refund): Promise<RefundRequest> {
    const { merchantId, subMerchantId } = await this.payments.accountOf(refund.channel, refund.transactionId);
    return {
      refundNo: refund.refundNo,
      transactionId: refund.transactionId,
      sendTimes: refund.sendTimes,
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
