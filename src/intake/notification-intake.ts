import { Inject, Injectable } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { FastifyReply, FastifyRequest } from 'fastify';
import { Histogram } from 'prom-client';
import { databaseConfig } from '../platform/config/database.config';
import { isPayment, VerifiedNotification } from '../domain/notification';
import { NOTIFICATION_SECONDS } from '../platform/metrics/metrics.module';
import { CommittedPayments } from '../payments/idempotency/committed-payments';
import { Arrival, DeliveryOutcome, Settlement } from '../settlement/settlement.service';
import { NotificationVerifier, VerifiedDelivery } from './signature/notification-verifier';
import { SpoolFallback } from './spool/spool-fallback';
import { TransactionRunner } from '../platform/transaction/transaction.runner';
import { CommittedRepeatFastPath } from './committed-repeat.fast-path';
import { keepArrival, keepFailure, keepVerified, verifiedEarlier } from './verified-notification.param';

export type NotifyRequest = FastifyRequest<{ Params: { channel?: string } }>;
export type TransactionalHandler = () => Promise<DeliveryOutcome>;

/**
 * A delivery at the notify route, from its bytes to the channel's ack, in this order:
 *   verify, once per request →
 *   `answerKnownRepeat` (a Fastify preHandler, before Nest's request pipeline): a repeat of a payment
 *     this replica saw commit is recorded and acked without a transaction. Two thirds of all
 *     deliveries are such repeats, and none of them needs Nest's router, interceptors or rxjs →
 *   everything else goes on to NotifyController, whose NotifyTransactionInterceptor calls `receive`:
 *     CommittedRepeatFastPath (in flight here, or known through Redis), else ONE transaction around
 *     the route handler (TransactionRunner), committed → after the commit (Settlement.afterCommit):
 *     mark committed, delivery log, count and log →
 *   the channel's ack.
 * The ack goes out strictly after the commit and the delivery-log write. When the database is
 * unavailable, or the delivery log cannot be written before the answer's deadline (the query
 * timeout plus the acquire timeout after arrival), the notification is spooled (SpoolFallback) and
 * acked once fsynced. Nothing here answers a failure: before Nest it is kept for the interceptor to
 * throw, and HttpErrorFilter answers it in the channel's format.
 */
@Injectable()
export class NotificationIntake {
  private readonly answerWithinMs: number;

  constructor(
    private readonly verifier: NotificationVerifier,
    private readonly committed: CommittedPayments,
    private readonly fastPath: CommittedRepeatFastPath,
    private readonly transactions: TransactionRunner,
    private readonly settlement: Settlement,
    private readonly spool: SpoolFallback,
    @InjectMetric(NOTIFICATION_SECONDS) private readonly duration: Histogram<string>,
    @Inject(databaseConfig.KEY) database: ConfigType<typeof databaseConfig>,
  ) {
    this.answerWithinMs = database.queryTimeoutMs + database.acquireTimeoutMs;
  }

  /**
   * Before Nest: true when it acked the request, a verified repeat of a payment this replica saw
   * commit. Never rejects: a failure (a forgery, a database down and no spool) is kept for Nest's
   * pipeline to answer.
   */
  async answerKnownRepeat(request: NotifyRequest, reply: FastifyReply): Promise<boolean> {
    try {
      const delivery = this.verifier.verify(request);
      const { notification } = delivery;
      if (!isPayment(notification) || !this.committed.isKnownHere(notification)) {
        keepVerified(request, delivery);
        return false;
      }
      await this.answer(delivery, request, reply, (arrival) => this.settlement.afterKnownRepeat(notification, arrival));
      return true;
    } catch (failure) {
      keepFailure(request, failure);
      return false;
    }
  }

  /** From NotifyTransactionInterceptor: the route handler runs in ONE transaction, unless the fast path spares it. */
  async receive(request: NotifyRequest, reply: FastifyReply, handler: TransactionalHandler): Promise<void> {
    const delivery = verifiedEarlier(request) ?? this.verify(request);
    await this.answer(delivery, request, reply, (arrival) => this.commitOnce(delivery.notification, arrival, handler));
  }

  private verify(request: NotifyRequest): VerifiedDelivery {
    const delivery = this.verifier.verify(request);
    keepVerified(request, delivery);
    return delivery;
  }

  private async answer(
    { channel, notification }: VerifiedDelivery,
    request: NotifyRequest,
    reply: FastifyReply,
    settle: (arrival: Arrival) => Promise<unknown>,
  ): Promise<void> {
    const stopTimer = this.duration.startTimer({ channel: channel.channel });
    try {
      const receivedAt = new Date();
      const arrival: Arrival = {
        source: 'ROUTE',
        receivedAt,
        answerBy: receivedAt.getTime() + this.answerWithinMs,
        requestId: String(request.id),
      };
      keepArrival(request, arrival);
      await settle(arrival).catch((error: unknown) => this.spoolOrRethrow(error, notification, arrival));
      const ack = channel.successReply();
      void reply.status(ack.status).headers(ack.headers).send(ack.body);
    } finally {
      stopTimer();
    }
  }

  private commitOnce(
    notification: VerifiedNotification,
    arrival: Arrival,
    handler: TransactionalHandler,
  ): Promise<DeliveryOutcome> {
    const commit = () => this.commit(notification, arrival, handler);
    if (!isPayment(notification)) return commit();
    return this.fastPath.skipTransactionIfCommitted(notification, commit, () =>
      this.settlement.afterKnownRepeat(notification, arrival),
    );
  }

  private async commit(
    notification: VerifiedNotification,
    arrival: Arrival,
    handler: TransactionalHandler,
  ): Promise<DeliveryOutcome> {
    const outcome = await this.transactions.run(handler);
    await this.settlement.afterCommit(notification, outcome, arrival);
    return outcome;
  }

  private async spoolOrRethrow(error: unknown, notification: VerifiedNotification, arrival: Arrival): Promise<void> {
    const spooled = await this.spool.spoolOrRethrow(error, notification, arrival.receivedAt);
    this.settlement.count(notification, spooled, arrival);
  }
}
