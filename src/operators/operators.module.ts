import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { adminConfig } from './admin.config';
import { AdminAuthGuard } from './admin-auth.guard';
import { AdminAuditRepository } from './audit/admin-audit.repository';
import { AuditLog } from './audit/audit-log';
import { AuditRefusals } from './audit/audited-write';
import { OperatorDirectory } from './operator-directory';
import { OperatorReadLimit } from './operator-read-limit.interceptor';

/**
 * Who may act and what they did, for every feature with operator routes (admin, reconciliation):
 * the token guard and roles, the per-operator read limit, and the audit log.
 */
@Module({
  imports: [ConfigModule.forFeature(adminConfig)],
  providers: [AdminAuthGuard, OperatorDirectory, OperatorReadLimit, AdminAuditRepository, AuditLog, AuditRefusals],
  exports: [AdminAuthGuard, OperatorDirectory, OperatorReadLimit, AuditLog, AuditRefusals, ConfigModule],
})
export class OperatorsModule {}
