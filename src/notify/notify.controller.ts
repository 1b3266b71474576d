import { Controller, Header, HttpCode, Post, UseInterceptors } from '@nestjs/common';
import { Notification, ReceivesNotifications } from '../signature/notification.guard';
import { Channel, VerifiedNotification } from '../domain/notification';
import { TransactionInterceptor } from '../transaction/transaction.interceptor';
import { AckInterceptor } from './ack.interceptor';
import { DeliveryRecordingInterceptor } from './delivery-recording.interceptor';
import { DeliveryOutcome, PaymentNotificationService } from './payment-notification.service';

/**
 * The platforms' callback endpoints: NotificationGuard verifies, TransactionInterceptor makes the
 * work atomic, DeliveryRecordingInterceptor records each delivery after commit (and answers repeats
 * of committed payments without a transaction), AckInterceptor acks; HttpErrorFilter answers
 * failures in each platform's format.
 */
@Controller('notify')
@UseInterceptors(AckInterceptor, DeliveryRecordingInterceptor, TransactionInterceptor)
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
