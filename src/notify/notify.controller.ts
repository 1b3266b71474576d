import { Controller, Post, Res, UseInterceptors } from '@nestjs/common';
import { Notification, ReceivesNotifications } from '../signature/notification.guard';
import { VerifiedNotification } from '../domain/notification';
import { SpoolFallbackInterceptor } from '../spool/spool-fallback.interceptor';
import { TransactionInterceptor } from '../transaction/transaction.interceptor';
import { AckInterceptor } from './ack.interceptor';
import { DeliveryRecordingInterceptor } from './delivery-recording.interceptor';
import { DeliveryOutcome, PaymentNotificationService } from './payment-notification.service';

/**
 * The platforms' callback endpoints, one per registered channel (POST /notify/wechatpay, /notify/alipay):
 * NotificationGuard verifies, TransactionInterceptor makes the work atomic, DeliveryRecordingInterceptor
 * records each delivery after commit (and answers repeats of committed payments without a
 * transaction), SpoolFallbackInterceptor spools a notification the database cannot take (with
 * SPOOL_DIR), AckInterceptor sends the channel's ack; HttpErrorFilter answers failures in each
 * channel's format.
 */
@Controller('notify')
@UseInterceptors(AckInterceptor, SpoolFallbackInterceptor, DeliveryRecordingInterceptor, TransactionInterceptor)
export class NotifyController {
  constructor(private readonly notifications: PaymentNotificationService) {}

  /** `@Res()` leaves the reply to AckInterceptor: each channel has its own ack. */
  @Post(':channel')
  @ReceivesNotifications()
  receive(@Notification() notification: VerifiedNotification, @Res() _reply: unknown): Promise<DeliveryOutcome> {
    return this.notifications.apply(notification);
  }
}
