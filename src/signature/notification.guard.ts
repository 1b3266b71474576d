import {
  applyDecorators,
  CanActivate,
  createParamDecorator,
  ExecutionContext,
  Inject,
  Injectable,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { FastifyRequest } from 'fastify';
import { DomainError } from '../domain/domain-error';
import { Channel, NOTIFICATION_VERIFIERS, NotificationVerifier, VerifiedNotification } from '../domain/notification';

const CHANNEL_KEY = 'notification-channel';
type RequestWithNotification = FastifyRequest & { rawBody?: Buffer; notification?: VerifiedNotification };

/**
 * Verifies the platform's signature before anything else runs (guards precede interceptors, so
 * no transaction is opened for a forged request) and hands the verified notification to the handler.
 */
@Injectable()
export class NotificationGuard implements CanActivate {
  private readonly verifiers: Map<Channel, NotificationVerifier>;

  constructor(
    @Inject(NOTIFICATION_VERIFIERS) verifiers: NotificationVerifier[],
    private readonly reflector: Reflector,
  ) {
    this.verifiers = new Map(verifiers.map((v) => [v.channel, v]));
  }

  canActivate(context: ExecutionContext): boolean {
    const channel = this.reflector.get<Channel>(CHANNEL_KEY, context.getHandler());
    const verifier = this.verifiers.get(channel);
    if (!verifier?.enabled) {
      throw new DomainError(
        'ChannelDisabled',
        `${channel} notifications are disabled: no keys are configured for this channel`,
      );
    }
    const request = context.switchToHttp().getRequest<RequestWithNotification>();
    // rawBody is captured for JSON and form bodies only; other content types never reach a verifier.
    if (!request.rawBody) {
      throw new DomainError(
        'MalformedRequest',
        `unsupported Content-Type ${request.headers['content-type'] ?? '(none)'}`,
      );
    }
    if (request.rawBody.length === 0) throw new DomainError('MalformedRequest', 'empty request body');
    request.notification = verifier.verify({ body: request.rawBody, headers: request.headers });
    return true;
  }
}

/** Route decorator: this handler receives `channel` notifications, verified by NotificationGuard. */
export const ReceivesNotifications = (channel: Channel) =>
  applyDecorators(SetMetadata(CHANNEL_KEY, channel), UseGuards(NotificationGuard));

/** Handler parameter: the notification NotificationGuard verified. */
export const Notification = createParamDecorator(
  (_data: unknown, context: ExecutionContext) =>
    context.switchToHttp().getRequest<RequestWithNotification>().notification!,
);
