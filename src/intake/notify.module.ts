import { Module } from '@nestjs/common';
import { AnomalyModule } from '../anomaly/anomaly.module';
import { EventsModule } from '../events/events.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { OrderModule } from '../order/order.module';
import { RefundModule } from '../refund/refund.module';
import { SignatureModule } from '../signature/signature.module';
import { SpoolModule } from '../spool/spool.module';
import { NotificationPipeline } from './notification-pipeline';
import { NotificationInterceptor } from './notification.interceptor';
import { NotifyController } from './notify.controller';
import { PaymentNotificationService } from '../settlement/settlement.service';

@Module({
  imports: [SignatureModule, IdempotencyModule, OrderModule, AnomalyModule, EventsModule, RefundModule, SpoolModule],
  controllers: [NotifyController],
  providers: [PaymentNotificationService, NotificationPipeline, NotificationInterceptor],
  exports: [PaymentNotificationService],
})
export class NotifyModule {}
