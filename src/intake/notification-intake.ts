import { Inject, Injectable } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Histogram } from 'prom-client';
import { PlatformReply } from '../channels/payment-channel';
import { databaseConfig } from '../platform/config/database.config';
import { isPayment, VerifiedNotification } from '../domain/notification';
import { RefusedNotifications } from '../payments/refused-notification/refused-notifications';
import { NOTIFICATION_SECONDS } from '../platform/metrics/metrics.module';
import { Arrival, DeliveryOutcome, Settlement } from '../settlement/settlement.service';
import { IncomingDelivery, NotificationVerifier } from './signature/notification-verifier';
import { SpoolFallback } from './spool/spool-fallback';
import { CommittedRepeatFastPath } from './committed-repeat.fast-path';
import { NotifyRefusals } from './notify-refusals';

/**
 * A delivery at the notify route, from its bytes to the platform's reply (`receive`), in this order:
 *   verify, before anything else →
 *   CommittedRepeatFastPath: a repeat of a payment known to have committed (here, or through Redis)
 *     is recorded and acked without a transaction; two thirds of all deliveries are such repeats →
 *   otherwise Settlement.settle: ONE transaction (for a payment, the payment procedure, committed in
 *   one round trip), then after the commit: mark committed, delivery log, count and log →
 *   the platform's ack.
 * The ack goes out strictly after the commit and the delivery-log write. When the database is
 * unavailable, or the delivery log cannot be written before the answer's deadline (the query
 * timeout plus the acquire timeout after arrival), the notification is spooled (SpoolFallback) and
 * acked once fsynced. Any failure is answered by NotifyRefusals in the platform's format, so that
 * the platform delivers again; a refusal an operator can act on is kept (RefusedNotifications).
 */
@Injectable()
export class NotificationIntake {
  private readonly answerWithinMs: number;

  constructor(
    private readonly verifier: NotificationVerifier,
    private readonly fastPath: CommittedRepeatFastPath,
    private readonly settlement: Settlement,
    private readonly spool: SpoolFallback,
    private readonly refusals: NotifyRefusals,
    private readonly refused: RefusedNotifications,
    @InjectMetric(NOTIFICATION_SECONDS) private readonly duration: Histogram<string>,
    @Inject(databaseConfig.KEY) database: ConfigType<typeof databaseConfig>,
  ) {
    this.answerWithinMs = database.queryTimeoutMs + database.acquireTimeoutMs;
  }

  /** Never rejects: every failure becomes the platform's failure reply. */
  async receive(incoming: IncomingDelivery): Promise<PlatformReply> {
    try {
      const { channel, notification } = this.verifier.verify(incoming);
      const stopTimer = this.duration.startTimer({ channel: channel.channel });
      try {
        await this.settle(notification, this.arrivalOf(incoming));
        return channel.successReply();
      } finally {
        stopTimer();
      }
    } catch (failure) {
      const reply = this.refusals.answer(failure, incoming.notifyPath, incoming.requestId);
      // Refusals an operator can act on are kept (bounded wait, never changes the reply).
      await this.refused.keepIfRefused(failure, incoming);
      return reply;
    }
  }

  private arrivalOf({ requestId }: IncomingDelivery): Arrival {
    const receivedAt = new Date();
    return { source: 'ROUTE', receivedAt, answerBy: receivedAt.getTime() + this.answerWithinMs, requestId };
  }

  /** Settles the delivery, or spools it when the database is unavailable; rejects for anything else. */
  private async settle(notification: VerifiedNotification, arrival: Arrival): Promise<void> {
    try {
      await this.commitOnce(notification, arrival);
    } catch (error) {
      const spooled = await this.spool.spoolOrRethrow(error, notification, arrival.receivedAt);
      this.settlement.count(notification, spooled, arrival);
    }
  }

  private commitOnce(notification: VerifiedNotification, arrival: Arrival): Promise<DeliveryOutcome> {
    const commit = () => this.settlement.settle(notification, arrival);
    if (!isPayment(notification)) return commit();
    return this.fastPath.skipTransactionIfCommitted(notification, commit, () =>
      this.settlement.afterKnownRepeat(notification, arrival),
    );
  }
}
