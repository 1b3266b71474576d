import { Body, Controller, Get, HttpCode, Param, Post, Query, UseInterceptors } from '@nestjs/common';
import { AdminRole } from '../config/admin.config';
import { EmergencyRefundService } from '../refund/emergency-refund.service';
import { RefundApproval } from '../refund/refund-approval';
import { RefundSettlement } from '../refund/refund-settlement';
import { TransactionInterceptor } from '../transaction/transaction.interceptor';
import { AdminAccess, AuthenticatedOperator, CurrentOperator } from './admin-auth.guard';
import { AdminQueries } from './admin-queries';
import { AuditLog } from './audit/audit-log';
import {
  AnomalyQueryDto,
  CallbackStatsQueryDto,
  EmergencyRefundDto,
  RefundQueryDto,
  ReasonDto,
} from './dto/admin-queries.dto';
import { RefundView, toRefundView } from './dto/admin-views';
import { StartRefundAfterCommit } from './start-refund-after-commit.interceptor';

/** The operators' API: every read for viewers and admins, every change for admins only, audited. */
@Controller('admin')
export class AdminController {
  constructor(
    private readonly queries: AdminQueries,
    private readonly refunds: EmergencyRefundService,
    private readonly settlement: RefundSettlement,
    private readonly approval: RefundApproval,
    private readonly audit: AuditLog,
  ) {}

  @Get('anomalies')
  @AdminAccess(AdminRole.Viewer)
  anomalies(@Query() query: AnomalyQueryDto) {
    return this.queries.anomalies(query);
  }

  @Get('refunds')
  @AdminAccess(AdminRole.Viewer)
  refundList(@Query() query: RefundQueryDto) {
    return this.queries.refunds(query);
  }

  @Get('orders/:orderNo')
  @AdminAccess(AdminRole.Viewer)
  order(@Param('orderNo') orderNo: string) {
    return this.queries.order(orderNo);
  }

  @Get('deliveries/:id')
  @AdminAccess(AdminRole.Viewer)
  delivery(@Param('id') id: string) {
    return this.queries.delivery(id);
  }

  @Get('stats/callbacks')
  @AdminAccess(AdminRole.Viewer)
  callbackStats(@Query() query: CallbackStatsQueryDto) {
    return this.queries.callbackStats(query);
  }

  /** 202: the refund is recorded; the channel is called after the commit, and retried until it answers. */
  @Post('refunds/emergency')
  @HttpCode(202)
  @AdminAccess(AdminRole.Admin)
  @UseInterceptors(StartRefundAfterCommit, TransactionInterceptor)
  async emergencyRefund(
    @Body() dto: EmergencyRefundDto,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<RefundView & { created: boolean }> {
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

  /** The money of an ABNORMAL refund went back outside the channel: settles it as refunded. */
  @Post('refunds/:refundNo/resolve-offline')
  @HttpCode(200)
  @AdminAccess(AdminRole.Admin)
  @UseInterceptors(TransactionInterceptor)
  async resolveOffline(
    @Param('refundNo') refundNo: string,
    @Body() dto: ReasonDto,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<RefundView> {
    const refund = await this.settlement.resolveOffline(refundNo, dto.reason);
    await this.audit.record({
      operatorId: operator.operatorId,
      action: 'REFUND_RESOLVED_OFFLINE',
      target: `refund:${refundNo}`,
      requestBody: dto,
      result: { refundNo, status: refund.status, amount: refund.amount },
    });
    return toRefundView(refund);
  }

  /** A second admin lets a refund at or above REFUND_APPROVAL_THRESHOLD go to the channel (after the commit). */
  @Post('refunds/:refundNo/approve')
  @HttpCode(200)
  @AdminAccess(AdminRole.Admin)
  @UseInterceptors(StartRefundAfterCommit, TransactionInterceptor)
  async approve(
    @Param('refundNo') refundNo: string,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<RefundView> {
    const refund = await this.approval.approve(refundNo, operator.operatorId);
    await this.audit.record({
      operatorId: operator.operatorId,
      action: 'REFUND_APPROVED',
      target: `refund:${refundNo}`,
      requestBody: null,
      result: { refundNo, status: refund.status, amount: refund.amount, requestedBy: refund.requestedBy },
    });
    return toRefundView(refund);
  }

  /** Cancels a refund awaiting approval; its amount can be refunded again. */
  @Post('refunds/:refundNo/reject')
  @HttpCode(200)
  @AdminAccess(AdminRole.Admin)
  @UseInterceptors(TransactionInterceptor)
  async reject(
    @Param('refundNo') refundNo: string,
    @Body() dto: ReasonDto,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<RefundView> {
    const refund = await this.approval.reject(refundNo, operator.operatorId, dto.reason);
    await this.audit.record({
      operatorId: operator.operatorId,
      action: 'REFUND_REJECTED',
      target: `refund:${refundNo}`,
      requestBody: dto,
      result: { refundNo, status: refund.status, amount: refund.amount, requestedBy: refund.requestedBy },
    });
    return toRefundView(refund);
  }
}
