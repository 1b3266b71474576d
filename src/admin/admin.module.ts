import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { ChannelsModule } from '../channels/channels.module';
import { adminConfig } from '../platform/config/admin.config';
import { refundConfig } from '../platform/config/refund.config';
import { RefundModule } from '../refund/refund.module';
import { AnomalyModule } from '../payments/anomaly/anomaly.module';
import { SpoolModule } from '../intake/spool/spool.module';
import { WebhooksModule } from '../events/webhooks/webhooks.module';
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
    RefundModule,
    AnomalyModule,
    SpoolModule,
    ChannelsModule,
    WebhooksModule,
  ],
  controllers: [
    AdminController,
    OperationsController,
    WebhookEndpointsController,
    AnomalyResolutionController,
    VocabularyController,
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
  ],
  exports: [AdminAuthGuard, OperatorDirectory, AuditLog, ConfigModule],
})
export class AdminModule {}
