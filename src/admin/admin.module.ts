import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { ChannelsModule } from '../channels/channels.module';
import { OperatorsModule } from '../operators/operators.module';
import { fourEyesConfig } from '../operators/four-eyes.config';
import { RefundModule } from '../refund/refund.module';
import { AnomalyModule } from '../payments/anomaly/anomaly.module';
import { SpoolModule } from '../intake/spool/spool.module';
import { WebhooksModule } from '../events/webhooks/webhooks.module';
import { NotifyModule } from '../intake/notify.module';
import { RefusedNotificationModule } from '../payments/refused-notification/refused-notification.module';
import { refusedNotificationsConfig } from '../payments/refused-notification/refused-notifications.config';
import { RefusedNotificationsController } from './refused-notifications/refused-notifications.controller';
import { RefusedNotificationQueries } from './refused-notifications/refused-notification.queries';
import { RefusedNotificationReverification } from './refused-notifications/refused-notification-reverification';
import { WebhookEndpointsController } from './webhook-endpoints.controller';
import { OperationsController } from './operations.controller';
import { OperationsOverviewQuery } from './operations-overview.queries';
import { AdminController } from './admin.controller';
import { AnomalyResolutionController } from './anomaly-resolution.controller';
import { AdminQueries } from './admin.queries';
import { DatabaseGauges } from './database-gauges';
import { DeadLetterReplay } from './dead-letter-replay';
import { VocabularyController } from './vocabulary.controller';
import { CredentialsModule } from '../payments/credentials/credentials.module';
import { MerchantsModule } from '../payments/merchants/merchants.module';
import { MerchantsController } from './merchants.controller';

@Module({
  imports: [
    OperatorsModule,
    ConfigModule.forFeature(fourEyesConfig),
    ConfigModule.forFeature(refusedNotificationsConfig),
    RefundModule,
    AnomalyModule,
    SpoolModule,
    ChannelsModule,
    WebhooksModule,
    NotifyModule,
    RefusedNotificationModule,
    CredentialsModule,
    MerchantsModule,
  ],
  controllers: [
    AdminController,
    OperationsController,
    WebhookEndpointsController,
    AnomalyResolutionController,
    VocabularyController,
    RefusedNotificationsController,
    MerchantsController,
  ],
  providers: [
    AdminQueries,
    OperationsOverviewQuery,
    DatabaseGauges,
    DeadLetterReplay,
    RefusedNotificationQueries,
    RefusedNotificationReverification,
  ],
})
export class AdminModule {}
