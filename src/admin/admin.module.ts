import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { ChannelsModule } from '../channels/channels.module';
import { adminConfig } from '../platform/config/admin.config';
import { refundConfig } from '../platform/config/refund.config';
import { RefundModule } from '../refund/refund.module';
import { AnomalyModule } from '../payments/anomaly/anomaly.module';
import { SpoolModule } from '../intake/spool/spool.module';
import { WebhooksModule } from '../events/webhooks/webhooks.module';
import { NotifyModule } from '../intake/notify.module';
import { RefusedNotificationModule } from '../payments/refused-notification/refused-notification.module';
import { refusedNotificationsConfig } from '../payments/refused-notification/refused-notifications.config';
import { RefusedNotificationsController } from './refused-notifications/refused-notifications.controller';
import { RefusedNotificationQueries } from './refused-notifications/refused-notification-queries';
import { RefusedNotificationReverification } from './refused-notifications/refused-notification-reverification';
import { WebhookEndpointsController } from './webhook-endpoints.controller';
import { OperationsController } from './operations.controller';
import { OperationsOverviewQuery } from './operations-overview';
import { AdminAuthGuard } from './admin-auth.guard';
import { OperatorDirectory } from './operator-directory';
import { AdminController } from './admin.controller';
import { AnomalyResolutionController } from './anomaly-resolution.controller';
import { AdminQueries } from './admin-queries';
import { AuditLog } from './audit/audit-log';
import { AuditRefusals } from './audit/audited-write';
import { DatabaseGauges } from './database-gauges';
import { OperatorReadLimit } from './operator-read-limit.interceptor';
import { VocabularyController } from './vocabulary.controller';

@Module({
  imports: [
    ConfigModule.forFeature(adminConfig),
    ConfigModule.forFeature(refundConfig),
    ConfigModule.forFeature(refusedNotificationsConfig),
    RefundModule,
    AnomalyModule,
    SpoolModule,
    ChannelsModule,
    WebhooksModule,
    NotifyModule,
    RefusedNotificationModule,
  ],
  controllers: [
    AdminController,
    OperationsController,
    WebhookEndpointsController,
    AnomalyResolutionController,
    VocabularyController,
    RefusedNotificationsController,
  ],
  providers: [
    AdminAuthGuard,
    OperatorDirectory,
    AdminQueries,
    OperationsOverviewQuery,
    AuditLog,
    AuditRefusals,
    OperatorReadLimit,
    DatabaseGauges,
    RefusedNotificationQueries,
    RefusedNotificationReverification,
  ],
  exports: [AdminAuthGuard, OperatorDirectory, AuditLog, ConfigModule],
})
export class AdminModule {}
