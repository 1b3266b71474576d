import { Controller, Header, HttpCode, Post, UseInterceptors } from '@nestjs/common';
import { Notification, ReceivesNotifications } from '../signature/notification.guard';
import { Channel, VerifiedNotification } from '../signature/verified-notification';
import { TransactionInterceptor } from '../transaction/transaction.interceptor';
import { AckInterceptor } from './ack.interceptor';
import { DuplicateShortcutInterceptor } from './duplicate-shortcut.interceptor';
import { DeliveryOutcome, PaymentNotificationService } from './payment-notification.service';

/**
 * The platforms' callback endpoints: NotificationGuard verifies, DuplicateShortcutInterceptor
 * answers repeats of committed payments, TransactionInterceptor makes the work atomic,
 * AckInterceptor acks after commit; HttpErrorFilter answers failures in each platform's format.
 */
@Controller('notify')
@UseInterceptors(AckInterceptor, DuplicateShortcutInterceptor, TransactionInterceptor)
export class NotifyController {
  constructor(private readonly notifications: PaymentNotificationService) {}

  @Post('wechatpay')
  @HttpCode(204)
  @ReceivesNotifications(Channel.Wechatpay)
  wechatpay(@Notification() notification: VerifiedNotification): Promise<DeliveryOutcome> {
    return this.notifications.apply(notification);
  }

  @Post('alipay')
  @HttpCode(200)
  @Header('Content-Type', 'text/plain; charset=utf-8')
  @ReceivesNotifications(Channel.Alipay)
  alipay(@Notification() notification: VerifiedNotification): Promise<DeliveryOutcome> {
    return this.notifications.apply(notification);
  }
}
