import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { FastifyRequest } from 'fastify';
import { VerifiedNotification } from '../domain/notification';
import { Arrival } from '../settlement/settlement.service';
import { VerifiedDelivery } from './signature/notification-verifier';

type Verdict = { delivery: VerifiedDelivery } | { failure: unknown };

/**
 * What NotificationIntake concluded for a request before Nest's pipeline: its verified delivery, or
 * the failure Nest must answer (in the channel's format). The request itself stays untouched.
 */
const verdicts = new WeakMap<FastifyRequest, Verdict>();
/** When and how the request arrived, set as NotificationIntake starts to settle it. */
const arrivals = new WeakMap<FastifyRequest, Arrival>();

export function keepVerified(request: FastifyRequest, delivery: VerifiedDelivery): void {
  verdicts.set(request, { delivery });
}

export function keepFailure(request: FastifyRequest, failure: unknown): void {
  verdicts.set(request, { failure });
}

export function keepArrival(request: FastifyRequest, arrival: Arrival): void {
  arrivals.set(request, arrival);
}

/** The delivery verified earlier for this request; throws the failure kept for it; undefined when none was. */
export function verifiedEarlier(request: FastifyRequest): VerifiedDelivery | undefined {
  const verdict = verdicts.get(request);
  if (verdict && 'failure' in verdict) throw verdict.failure;
  return verdict?.delivery;
}

/** The route handler's argument: the notification NotificationIntake verified for this request. */
export const Verified = createParamDecorator((_data: unknown, context: ExecutionContext): VerifiedNotification => {
  const delivery = verifiedEarlier(context.switchToHttp().getRequest<FastifyRequest>());
  if (!delivery) throw new Error('no verified notification: the route runs without NotifyTransactionInterceptor');
  return delivery.notification;
});

/** The route handler's argument: when and how the request arrived (the paying delivery's record needs it). */
export const Arrived = createParamDecorator((_data: unknown, context: ExecutionContext): Arrival => {
  const arrival = arrivals.get(context.switchToHttp().getRequest<FastifyRequest>());
  if (!arrival) throw new Error('no arrival: the route runs without NotifyTransactionInterceptor');
  return arrival;
});
