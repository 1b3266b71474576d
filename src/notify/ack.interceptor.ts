import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { FastifyReply } from 'fastify';
import { Counter, Histogram } from 'prom-client';
import { Observable, tap } from 'rxjs';
import { NOTIFICATION_SECONDS, NOTIFICATIONS_TOTAL } from '../metrics/metrics.module';
import { RequestWithNotification } from '../signature/notification.guard';
import { NotificationOutcomeLog } from './notification-outcome.log';

/**
 * Sits outside TransactionInterceptor, so it sees the handler's outcome only once the transaction
 * has committed (or the notification is fsynced in the spool: SPOOLED): that is when the platform
 * gets its channel's success ack, and when the outcome is counted and logged (HttpErrorFilter
 * counts the failures).
 */
@Injectable()
export class AckInterceptor implements NestInterceptor {
  private readonly log = new NotificationOutcomeLog();

  constructor(
    @InjectMetric(NOTIFICATIONS_TOTAL) private readonly outcomes: Counter<string>,
    @InjectMetric(NOTIFICATION_SECONDS) private readonly duration: Histogram<string>,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler<string>): Observable<string> {
    const http = context.switchToHttp();
    const request = http.getRequest<RequestWithNotification>();
    const channel = request.paymentChannel!;
    const reply = http.getResponse<FastifyReply>();
    const stopTimer = this.duration.startTimer({ channel: channel.channel });
    return next.handle().pipe(
      tap({
        next: (outcome) => {
          this.outcomes.inc({ channel: channel.channel, outcome, reason: '' });
          this.log.committed(request.notification!, outcome);
          const ack = channel.successReply();
          void reply.status(ack.status).headers(ack.headers).send(ack.body);
        },
        finalize: () => stopTimer(),
      }),
    );
  }
}
