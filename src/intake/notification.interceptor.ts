import { CallHandler, createParamDecorator, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { from, lastValueFrom, Observable } from 'rxjs';
import { VerifiedNotification } from '../domain/notification';
import { NotificationPipeline, NotifyRequest } from './notification-pipeline';
import { DeliveryOutcome } from '../settlement/settlement.service';

/**
 * The notify route's one interceptor, and its transactional one: the route handler (the business
 * work) runs inside ONE database transaction that this interceptor opens and commits, and the
 * channel's ack goes out only after that commit. NotificationPipeline lists the steps around it.
 */
@Injectable()
export class NotificationInterceptor implements NestInterceptor {
  constructor(private readonly pipeline: NotificationPipeline) {}

  intercept(context: ExecutionContext, next: CallHandler<DeliveryOutcome>): Observable<void> {
    const http = context.switchToHttp();
    const handler = () => lastValueFrom(next.handle());
    return from(this.pipeline.receive(http.getRequest<NotifyRequest>(), http.getResponse<FastifyReply>(), handler));
  }
}

/** The notification NotificationInterceptor verified, for the route handler. */
export const VerifiedNotificationParam = createParamDecorator(
  (_data: unknown, context: ExecutionContext): VerifiedNotification =>
    context.switchToHttp().getRequest<NotifyRequest>().notification!,
);
