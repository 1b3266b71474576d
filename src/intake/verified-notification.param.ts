import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { FastifyRequest } from 'fastify';
import { VerifiedNotification } from '../domain/notification';

/** Requests NotifyTransactionInterceptor has verified, and what they said; the request itself stays untouched. */
const verified = new WeakMap<FastifyRequest, VerifiedNotification>();

/** Hands a verified notification to the route handler of its request. */
export function handOver(request: FastifyRequest, notification: VerifiedNotification): void {
  verified.set(request, notification);
}

/** The route handler's argument: the notification NotifyTransactionInterceptor verified for this request. */
export const Verified = createParamDecorator((_data: unknown, context: ExecutionContext): VerifiedNotification => {
  const notification = verified.get(context.switchToHttp().getRequest<FastifyRequest>());
  if (!notification) throw new Error('no verified notification: the route runs without NotifyTransactionInterceptor');
  return notification;
});
