import { Injectable } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { FastifyReply, FastifyRequest } from 'fastify';
import { Counter, Histogram } from 'prom-client';
import { PaymentChannel } from '../channels/payment-channel';
import { isPayment, PaymentNotification, VerifiedNotification } from '../domain/notification';
import { CommittedPayments } from '../idempotency/committed-payments';
import { DeliveryLog } from '../idempotency/delivery-log';
import { NOTIFICATION_SECONDS, NOTIFICATIONS_TOTAL } from '../metrics/metrics.module';
import { NotificationVerifier } from '../signature/notification-verifier';
import { SpoolFallback } from '../spool/spool-fallback';
import { TransactionRunner } from '../transaction/transaction.runner';
import { NotificationOutcomeLog } from '../settlement/notification-outcome.log';
import { DeliveryOutcome } from '../settlement/settlement.service';

/** The notify route's request once verified: the handler reads its notification from here. */
export type NotifyRequest = FastifyRequest<{ Params: { channel?: string } }> & { notification?: VerifiedNotification };

/** The route handler: the business work of one verified notification, run inside the transaction. */
export type ApplyNotification = () => Promise<DeliveryOutcome>;

/**
 * One notification, start to finish, in this order (NotificationInterceptor runs it around the route handler):
 *   verify → (a repeat of a payment known committed: no transaction) → ONE transaction
 *   (TransactionRunner) → delivery log → count, log and ack.
 * The ack goes out strictly after the commit and the delivery-log write; when the database is
 * unavailable the notification is spooled instead (SpoolFallback) and acked once fsynced. A failure
 * propagates to HttpErrorFilter, which answers in the channel's format.
 *
 * Two thirds of all deliveries repeat a payment that this instance (or, with REDIS_URL, any
 * replica) has already seen commit: those skip the transaction. A repeat arriving while its first
 * delivery is in flight here, or on another replica, waits for it instead of queueing on the
 * database's lock; everything CommittedPayments does not know falls through to the database, which
 * alone decides.
 */
@Injectable()
export class NotificationPipeline {
  private readonly log = new NotificationOutcomeLog();
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(
    private readonly verifier: NotificationVerifier,
    private readonly transactions: TransactionRunner,
    private readonly committed: CommittedPayments,
    private readonly deliveries: DeliveryLog,
    private readonly spool: SpoolFallback,
    @InjectMetric(NOTIFICATIONS_TOTAL) private readonly outcomes: Counter<string>,
    @InjectMetric(NOTIFICATION_SECONDS) private readonly duration: Histogram<string>,
  ) {}

  async receive(request: NotifyRequest, reply: FastifyReply, apply: ApplyNotification): Promise<void> {
    const { channel, notification } = this.verifier.verify(request);
    request.notification = notification;
    const stopTimer = this.duration.startTimer({ channel: channel.channel });
    try {
      const receivedAt = new Date();
      const outcome = await this.applyAndRecord(notification, receivedAt, apply).catch((error: unknown) =>
        this.spool.spoolOrRethrow(error, notification, receivedAt),
      );
      this.acknowledge(channel, notification, outcome, reply);
    } finally {
      stopTimer();
    }
  }

  private async applyAndRecord(
    notification: VerifiedNotification,
    receivedAt: Date,
    apply: ApplyNotification,
  ): Promise<DeliveryOutcome> {
    const outcome = isPayment(notification)
      ? await this.applyPaymentOnce(notification, apply)
      : await this.transactions.run(apply);
    await this.deliveries.record(notification, outcome, receivedAt);
    return outcome;
  }

  private async applyPaymentOnce(payment: PaymentNotification, apply: ApplyNotification): Promise<DeliveryOutcome> {
    const key = CommittedPayments.keyOf(payment);
    await this.inFlight.get(key)?.catch(() => undefined);
    if (await this.committed.isCommitted(payment)) return DeliveryOutcome.Duplicate;
    // Another delivery of it got ahead here while Redis answered: wait for that one instead.
    if (this.inFlight.has(key)) return this.applyPaymentOnce(payment, apply);
    const applied = this.applyPayment(payment, apply);
    this.inFlight.set(key, applied);
    try {
      return await applied;
    } finally {
      if (this.inFlight.get(key) === applied) this.inFlight.delete(key);
    }
  }

  private async applyPayment(payment: PaymentNotification, apply: ApplyNotification): Promise<DeliveryOutcome> {
    const claim = await this.committed.claimFirst(payment);
    if (claim.heldElsewhere && (await this.committed.waitForFirst(payment))) return DeliveryOutcome.Duplicate;
    try {
      const outcome = await this.transactions.run(apply);
      // Every outcome of a payment (paid, duplicate, anomaly) means its dedup record has committed.
      await this.committed.markCommitted(payment);
      return outcome;
    } finally {
      await claim.release();
    }
  }

  private acknowledge(
    channel: PaymentChannel,
    notification: VerifiedNotification,
    outcome: string,
    reply: FastifyReply,
  ): void {
    this.outcomes.inc({ channel: channel.channel, outcome, reason: '' });
    this.log.committed(notification, outcome);
    const ack = channel.successReply();
    void reply.status(ack.status).headers(ack.headers).send(ack.body);
  }
}
