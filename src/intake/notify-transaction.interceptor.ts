import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { from, lastValueFrom, Observable } from 'rxjs';
import { DeliveryOutcome } from '../settlement/settlement.service';
import { NotificationIntake, NotifyRequest } from './notification-intake';

/**
 * The notify route's transactional interceptor: NotificationIntake.receive opens ONE transaction
 * around the route handler, commits it, records the delivery and only then acks. Known repeats
 * never get here (NotificationIntake.answerKnownRepeat acked them before Nest's pipeline).
 */
@Injectable()
export class NotifyTransactionInterceptor implements NestInterceptor {
  constructor(private readonly intake: NotificationIntake) {}

  intercept(context: ExecutionContext, next: CallHandler<DeliveryOutcome>): Observable<void> {
    const http = context.switchToHttp();
    const handler = () => lastValueFrom(next.handle());
    return from(this.intake.receive(http.getRequest<NotifyRequest>(), http.getResponse<FastifyReply>(), handler));
  }
}
