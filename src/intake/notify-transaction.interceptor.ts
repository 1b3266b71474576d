import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { FastifyReply, FastifyRequest } from 'fastify';
import { Histogram } from 'prom-client';
import { from, lastValueFrom, Observable } from 'rxjs';
import { databaseConfig } from '../platform/config/database.config';
import { isPayment, VerifiedNotification } from '../domain/notification';
import { NOTIFICATION_SECONDS } from '../platform/metrics/metrics.module';
import { Arrival, DeliveryOutcome, Settlement } from '../settlement/settlement.service';
import { NotificationVerifier } from './signature/notification-verifier';
import { SpoolFallback } from './spool/spool-fallback';
import { TransactionRunner } from '../platform/transaction/transaction.runner';
import { CommittedRepeatFastPath } from './committed-repeat.fast-path';
import { handOver } from './verified-notification.param';

type NotifyRequest = FastifyRequest<{ Params: { channel?: string } }>;
type RouteHandler = () => Promise<DeliveryOutcome>;

/**
 * The notify route's transactional interceptor. In this order:
 *   verify → (a repeat of a payment known committed: no transaction, CommittedRepeatFastPath)
 *   → ONE transaction around the route handler (TransactionRunner), committed here
 *   → after the commit (Settlement.afterCommit): mark committed, delivery log, count and log
 *   → the channel's ack.
 * The ack goes out strictly after the commit and the delivery-log write. When the database is
 * unavailable, or the delivery log cannot be written before the answer's deadline (the query
 * timeout plus the acquire timeout after arrival), the notification is spooled (SpoolFallback) and
 * acked once fsynced, or else answered 503. A failure propagates to HttpErrorFilter, which answers
 * in the channel's format.
 */
@Injectable()
export class NotifyTransactionInterceptor implements NestInterceptor {
  private readonly answerWithinMs: number;

  constructor(
    private readonly verifier: NotificationVerifier,
    private readonly fastPath: CommittedRepeatFastPath,
    private readonly transactions: TransactionRunner,
    private readonly settlement: Settlement,
    private readonly spool: SpoolFallback,
    @InjectMetric(NOTIFICATION_SECONDS) private readonly duration: Histogram<string>,
    @Inject(databaseConfig.KEY) database: ConfigType<typeof databaseConfig>,
  ) {
    this.answerWithinMs = database.queryTimeoutMs + database.acquireTimeoutMs;
  }

  intercept(context: ExecutionContext, next: CallHandler<DeliveryOutcome>): Observable<void> {
    const http = context.switchToHttp();
    const handler = () => lastValueFrom(next.handle());
    return from(this.receive(http.getRequest<NotifyRequest>(), http.getResponse<FastifyReply>(), handler));
  }

  private async receive(request: NotifyRequest, reply: FastifyReply, handler: RouteHandler): Promise<void> {
    const { channel, notification } = this.verifier.verify(request);
    handOver(request, notification);
    const stopTimer = this.duration.startTimer({ channel: channel.channel });
    try {
      const receivedAt = new Date();
      const arrival: Arrival = { source: 'ROUTE', receivedAt, answerBy: receivedAt.getTime() + this.answerWithinMs };
      await this.commitOnce(notification, arrival, handler).catch((error: unknown) =>
        this.spoolOrRethrow(error, notification, arrival),
      );
      const ack = channel.successReply();
      void reply.status(ack.status).headers(ack.headers).send(ack.body);
    } finally {
      stopTimer();
    }
  }

  private commitOnce(
    notification: VerifiedNotification,
    arrival: Arrival,
    handler: RouteHandler,
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
    handler: RouteHandler,
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
