import { Body, Controller, Get, HttpCode, Param, Post, Query, UseInterceptors } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../common/error.view';
import { AdminRole } from '../config/admin.config';
import { EmergencyRefundService } from '../refund/emergency-refund.service';
import { TransactionInterceptor } from '../transaction/transaction.interceptor';
import { AdminAccess, AuthenticatedOperator, CurrentOperator } from './admin-auth.guard';
import { AdminQueries, CallbackStatsView } from './admin-queries';
import { AuditLog } from './audit/audit-log';
import { AnomalyQueryDto, CallbackStatsQueryDto, EmergencyRefundDto } from './dto/admin-queries.dto';
import { AnomalyPageView, DeliveryView, EmergencyRefundView, OrderDetailView, toRefundView } from './dto/admin-views';
import { StartRefundAfterCommit } from './start-refund-after-commit.interceptor';

/** The operators' API: every read for viewers and admins, every change for admins only, audited. */
@ApiTags('admin')
@ApiBearerAuth('admin')
@ApiErrors(
  [401, 'missing or unknown operator token (ADMIN_TOKENS)'],
  [503, 'ADMIN_TOKENS is not configured, or the database is unavailable (retry)'],
)
@Controller('admin')
export class AdminController {
  constructor(
    private readonly queries: AdminQueries,
    private readonly refunds: EmergencyRefundService,
    private readonly audit: AuditLog,
  ) {}

  @Get('anomalies')
  @ApiOperation({ summary: 'Anomalies, newest first, a page at a time (viewer)' })
  @ApiOkResponse({ type: AnomalyPageView })
  @ApiErrors([400, 'a malformed filter, limit or cursor'])
  @AdminAccess(AdminRole.Viewer)
  anomalies(@Query() query: AnomalyQueryDto): Promise<AnomalyPageView> {
    return this.queries.anomalies(query);
  }

  @Get('orders/:orderNo')
  @ApiOperation({ summary: 'An order with its history, payments, deliveries, anomalies and refunds (viewer)' })
  @ApiOkResponse({ type: OrderDetailView })
  @ApiErrors([404, 'unknown order'])
  @AdminAccess(AdminRole.Viewer)
  order(@Param('orderNo') orderNo: string): Promise<OrderDetailView> {
    return this.queries.order(orderNo);
  }

  @Get('deliveries/:id')
  @ApiOperation({ summary: 'One delivery with its signature headers and the exact bytes received (viewer)' })
  @ApiOkResponse({ type: DeliveryView })
  @ApiErrors([404, 'unknown delivery'])
  @AdminAccess(AdminRole.Viewer)
  delivery(@Param('id') id: string): Promise<DeliveryView> {
    return this.queries.delivery(id);
  }

  @Get('stats/callbacks')
  @ApiOperation({ summary: 'Deliveries, payments and duplicates per UTC bucket and channel (viewer)' })
  @ApiOkResponse({ type: CallbackStatsView })
  @ApiErrors([400, 'a malformed range, or more than 2,000 buckets'])
  @AdminAccess(AdminRole.Viewer)
  callbackStats(@Query() query: CallbackStatsQueryDto): Promise<CallbackStatsView> {
    return this.queries.callbackStats(query);
  }

  /** 202: the refund is recorded; the channel is called after the commit, and retried until it answers. */
  @Post('refunds/emergency')
  @ApiOperation({ summary: 'Give back the money of one transaction; idempotent on refundNo (admin)' })
  @ApiAcceptedResponse({ type: EmergencyRefundView, description: 'recorded; the channel is called after the commit' })
  @ApiErrors(
    [400, 'malformed body, or an amount over what is left to refund'],
    [403, 'a viewer token'],
    [404, 'unknown order, or a transaction that did not pay it'],
    [409, 'the refundNo was used for a different refund, or the order cannot be refunded now'],
  )
  @HttpCode(202)
  @AdminAccess(AdminRole.Admin)
  @UseInterceptors(StartRefundAfterCommit, TransactionInterceptor)
  async emergencyRefund(
    @Body() dto: EmergencyRefundDto,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<EmergencyRefundView> {
    const { refund, created } = await this.refunds.request(dto, operator.operatorId);
    await this.audit.record({
      operatorId: operator.operatorId,
      action: 'EMERGENCY_REFUND',
      target: `order:${dto.orderNo}`,
      requestBody: dto,
      result: { refundNo: refund.refundNo, status: refund.status, amount: refund.amount, created },
    });
    return { ...toRefundView(refund), created };
  }
}
