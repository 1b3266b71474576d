import { FastifyRequest } from 'fastify';
import { Controller, Get, HttpCode, Param, Post, Query, UseInterceptors } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminRole } from '../../operators/admin.config';
import { ApiErrors } from '../../platform/http/error.view';
import { AdminAccess, AuthenticatedOperator, CurrentOperator } from '../../operators/admin-auth.guard';
import { AuditLog } from '../../operators/audit/audit-log';
import { AuditedWrite } from '../../operators/audit/audited-write';
import { OperatorReadLimit } from '../../operators/operator-read-limit.interceptor';
import {
  RefusedHoursQueryDto,
  RefusedHoursView,
  RefusedNotificationPageView,
  RefusedNotificationQueryDto,
  RefusedNotificationView,
  ReverificationView,
} from './refused-notification.dto';
import { RefusedNotificationQueries } from './refused-notification.queries';
import { RefusedNotificationReverification } from './refused-notification-reverification';

/**
 * Notifications refused for their signature, key, merchant, decryption or an unknown order, as
 * kept (bounded per channel and hour): read by viewers, re-verified by admins, audited.
 */
@ApiTags('admin')
@ApiBearerAuth('admin')
@ApiErrors(
  [401, 'missing or unknown operator token (ADMIN_TOKENS)'],
  [503, 'ADMIN_TOKENS is not configured, or the database is unavailable (retry)'],
)
@Controller('admin/refused-notifications')
export class RefusedNotificationsController {
  constructor(
    private readonly queries: RefusedNotificationQueries,
    private readonly reverification: RefusedNotificationReverification,
    private readonly audit: AuditLog,
  ) {}

  @Get()
  @ApiOperation({ summary: 'Refused notifications kept, newest first, a page at a time (viewer)' })
  @ApiOkResponse({ type: RefusedNotificationPageView })
  @ApiErrors([400, 'a malformed filter, limit or cursor'])
  @AdminAccess(AdminRole.Viewer)
  @UseInterceptors(OperatorReadLimit)
  @ApiErrors([429, 'this operator has ADMIN_READS_PER_OPERATOR reads running already'])
  list(@Query() query: RefusedNotificationQueryDto): Promise<RefusedNotificationPageView> {
    return this.queries.list(query);
  }

  @Get('hours')
  @ApiOperation({ summary: 'Per channel and UTC hour: refused notifications kept, and dropped over the cap (viewer)' })
  @ApiOkResponse({ type: RefusedHoursView })
  @ApiErrors([400, 'a malformed range'])
  @AdminAccess(AdminRole.Viewer)
  @UseInterceptors(OperatorReadLimit)
  @ApiErrors([429, 'this operator has ADMIN_READS_PER_OPERATOR reads running already'])
  hours(@Query() query: RefusedHoursQueryDto): Promise<RefusedHoursView> {
    return this.queries.hours(query);
  }

  @Get(':id')
  @ApiOperation({
    summary:
      'One refused notification with its headers and bytes: exact for an admin (audited), ' +
      "the payer's identifiers masked for a viewer (viewer)",
  })
  @ApiOkResponse({ type: RefusedNotificationView })
  @ApiErrors([400, 'an id that is no positive integer'], [404, 'unknown refused notification'])
  @AdminAccess(AdminRole.Viewer)
  @UseInterceptors(OperatorReadLimit)
  @ApiErrors([429, 'this operator has ADMIN_READS_PER_OPERATOR reads running already'])
  async one(
    @Param('id') id: string,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<RefusedNotificationView> {
    const view = await this.queries.one(id, operator.role);
    if (operator.role === AdminRole.Admin) {
      await this.audit.recordAlone({
        operatorId: operator.operatorId,
        action: 'PAYLOAD_READ_UNMASKED',
        target: `refused-notification:${id}`,
        requestBody: null,
        result: { reason: 'an admin reads the raw payload with the payer unmasked' },
      });
    }
    return view;
  }

  /** The settlement and its effects commit in the notify use case's transaction; the row's outcome and the audit row, after it. */
  @Post(':id/reverify')
  @ApiOperation({
    summary:
      'Verify a kept notification again (after fixing a key, or registering its order) and settle it through ' +
      'the notify use case; its time window is judged at when it was received, its signature in full (admin)',
  })
  @ApiOkResponse({ type: ReverificationView, description: 'accepted, or refused again with its reason' })
  @ApiErrors([400, 'an id that is no positive integer'], [403, 'a viewer token'], [404, 'unknown refused notification'])
  @HttpCode(200)
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('REFUSED_NOTIFICATION_REVERIFY', refusedTarget)
  reverify(@Param('id') id: string, @CurrentOperator() operator: AuthenticatedOperator): Promise<ReverificationView> {
    return this.reverification.reverify(id, operator.operatorId);
  }
}

function refusedTarget(request: FastifyRequest): string {
  return `refused-notification:${(request.params as { id?: string }).id ?? ''}`;
}
