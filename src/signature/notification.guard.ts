import {
  applyDecorators,
  CanActivate,
  createParamDecorator,
  ExecutionContext,
  Injectable,
  UseGuards,
} from '@nestjs/common';
import { FastifyRequest } from 'fastify';
import { PaymentChannel } from '../channels/payment-channel';
import { PaymentChannels } from '../channels/payment-channels';
import { DomainError } from '../domain/domain-error';
import { VerifiedNotification } from '../domain/notification';

export type RequestWithNotification = FastifyRequest & {
  rawBody?: Buffer;
  params: { channel?: string };
  paymentChannel?: PaymentChannel;
  notification?: VerifiedNotification;
};

/**
 * Verifies the platform's signature before anything else runs (guards precede interceptors, so
 * no transaction is opened for a forged request) and hands the verified notification, and the
 * channel that verified it, to what follows.
 */
@Injectable()
export class NotificationGuard implements CanActivate {
  constructor(private readonly channels: PaymentChannels) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<RequestWithNotification>();
    const channel = this.channels.byNotifyPath(request.params.channel ?? '');
    if (!channel) throw new DomainError('NotFound', `no payment channel at ${request.url.split('?')[0]}`);
    request.paymentChannel = channel;
    if (!channel.enabled) {
      throw new DomainError(
        'ChannelDisabled',
        `${channel.channel} notifications are disabled: no keys are configured for this channel`,
      );
    }
    // rawBody is captured for JSON and form bodies only; other content types never reach a verifier.
    if (!request.rawBody) {
      throw new DomainError(
        'MalformedRequest',
        `unsupported Content-Type ${request.headers['content-type'] ?? '(none)'}`,
      );
    }
    if (request.rawBody.length === 0) throw new DomainError('MalformedRequest', 'empty request body');
    request.notification = channel.verify({ body: request.rawBody, headers: request.headers });
    return true;
  }
}

/** Route decorator: this handler receives notifications of the channel its `:channel` names, verified. */
export const ReceivesNotifications = () => applyDecorators(UseGuards(NotificationGuard));

/** Handler parameter: the notification NotificationGuard verified. */
export const Notification = createParamDecorator(
  (_data: unknown, context: ExecutionContext) =>
    context.switchToHttp().getRequest<RequestWithNotification>().notification!,
);
