import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter, Histogram } from 'prom-client';
import { Observable, tap } from 'rxjs';
import { map } from 'rxjs/operators';
import { NOTIFICATION_SECONDS, NOTIFICATIONS_TOTAL } from '../metrics/metrics.module';
import { Channel } from '../domain/notification';
import { DeliveryOutcome } from './payment-notification.service';

const SUCCESS_ACK: Record<Channel, string | undefined> = {
  [Channel.Wechatpay]: undefined, // HTTP 204, no body
  [Channel.Alipay]: 'success',
};

/**
 * Sits outside TransactionInterceptor, so it sees the handler's outcome only once the transaction
 * has committed: that is when the platform gets its success ack, and when the outcome is counted.
 */
@Injectable()
export class AckInterceptor implements NestInterceptor {
  constructor(
    @InjectMetric(NOTIFICATIONS_TOTAL) private readonly outcomes: Counter<string>,
    @InjectMetric(NOTIFICATION_SECONDS) private readonly duration: Histogram<string>,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler<DeliveryOutcome>): Observable<string | undefined> {
    const channel = context.switchToHttp().getRequest<{ notification?: { channel: Channel } }>().notification!.channel;
    const stopTimer = this.duration.startTimer({ channel });
    return next.handle().pipe(
      tap({
        next: (outcome) => this.outcomes.inc({ channel, outcome }),
        error: () => this.outcomes.inc({ channel, outcome: 'FAILED' }),
        finalize: () => stopTimer(),
      }),
      map(() => SUCCESS_ACK[channel]),
    );
  }
}
