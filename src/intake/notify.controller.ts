import { Controller, Post, Res, UseInterceptors } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { VerifiedNotification } from '../domain/notification';
import { NotificationInterceptor, VerifiedNotificationParam } from './notification.interceptor';
import { BODY_AS_BYTES } from './notify-body';
import { DeliveryOutcome, PaymentNotificationService } from '../settlement/settlement.service';

/**
 * The platforms' callback endpoints, one per registered channel (POST /notify/wechatpay, /notify/alipay).
 * NotificationInterceptor verifies, runs this handler in ONE transaction, records the delivery and
 * acks after the commit (NotificationPipeline lists the steps); HttpErrorFilter answers failures in
 * each channel's format.
 */
@Controller('notify')
@UseInterceptors(NotificationInterceptor)
export class NotifyController {
  constructor(private readonly notifications: PaymentNotificationService) {}

  /** `@Res()` leaves the reply to the interceptor: each channel has its own ack. */
  @Post(':channel')
  @RouteConfig(BODY_AS_BYTES)
  receive(
    @VerifiedNotificationParam() notification: VerifiedNotification,
    @Res() _reply: unknown,
  ): Promise<DeliveryOutcome> {
    return this.notifications.apply(notification);
  }
}
