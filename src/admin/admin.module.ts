import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { ChannelsModule } from '../channels/channels.module';
import { adminConfig } from '../config/admin.config';
import { RefundModule } from '../refund/refund.module';
import { AdminAuthGuard } from './admin-auth.guard';
import { AdminController } from './admin.controller';
import { AdminQueries } from './admin-queries';
import { AuditLog } from './audit/audit-log';
import { StartRefundAfterCommit } from './start-refund-after-commit.interceptor';

@Module({
  imports: [ConfigModule.forFeature(adminConfig), RefundModule, ChannelsModule],
  controllers: [AdminController],
  providers: [AdminAuthGuard, AdminQueries, AuditLog, StartRefundAfterCommit],
  exports: [AdminAuthGuard, AuditLog, ConfigModule],
})
export class AdminModule {}
