import { FastifyReply, FastifyRequest } from 'fastify';
import { Body, Controller, Get, HttpCode, Param, Post, Query, Res, UseInterceptors } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import { ApiErrors } from '../platform/http/error.view';
import { AdminRole } from '../operators/admin.config';
import { Refunds } from '../refund/refunds';
import { AdminAccess, AuthenticatedOperator, CurrentOperator } from '../operators/admin-auth.guard';
import { AdminQueries, CallbackStatsView } from './admin.queries';
import { AuditLog } from '../operators/audit/audit-log';
import { AuditedWrite } from '../operators/audit/audited-write';
import { ordersCsv } from './orders-csv';
import { OperatorReadLimit } from '../operators/operator-read-limit.interceptor';
import {
  AnomalyQueryDto,
  CallbackStatsQueryDto,
  EmergencyRefundDto,
  MAX_CSV_ROWS,
  OrderExportQueryDto,
  OrderQueryDto,
  RefundQueryDto,
  ReasonDto,
} from './dto/admin-queries.dto';
import {
  AnomalyPageView,
  DecryptedContentView,
  DeliveryView,
  OrderPageView,
  EmergencyRefundView,
  OrderDetailView,
  RefundPageView,
  RefundView,
  toRefundView,
} from './dto/admin-views';

/**
 * The operators' API: every read for viewers and admins (on the reporting pool, a few at a time per
 * operator), every change for admins only, audited.
 */
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
    private readonly refunds: Refunds,
    private readonly audit: AuditLog,
  ) {}

  @Get('anomalies')
  @ApiOperation({ summary: 'Anomalies, newest first, a page at a time (viewer)' })
  @ApiOkResponse({ type: AnomalyPageView })
  @ApiErrors([400, 'a malformed filter, limit or cursor'])
  @AdminAccess(AdminRole.Viewer)
  @UseInterceptors(OperatorReadLimit)
  @ApiErrors([429, 'this operator has ADMIN_READS_PER_OPERATOR reads running already'])
  anomalies(@Query() query: AnomalyQueryDto): Promise<AnomalyPageView> {
    return this.queries.anomalies(query);
  }

  @Get('refunds')
  @ApiOperation({ summary: 'Refunds, newest first, a page at a time; filter by status, channel and time (viewer)' })
  @ApiOkResponse({ type: RefundPageView })
  @ApiErrors([400, 'a malformed filter, limit or cursor'])
  @AdminAccess(AdminRole.Viewer)
  @UseInterceptors(OperatorReadLimit)
  @ApiErrors([429, 'this operator has ADMIN_READS_PER_OPERATOR reads running already'])
  refundList(@Query() query: RefundQueryDto): Promise<RefundPageView> {
    return this.queries.refunds(query);
  }

  @Get('orders')
  @ApiOperation({ summary: 'Orders, newest first, a page at a time; filter by status, channel and time (viewer)' })
  @ApiOkResponse({ type: OrderPageView })
  @ApiErrors([400, 'a malformed filter, limit or cursor'])
  @AdminAccess(AdminRole.Viewer)
  @UseInterceptors(OperatorReadLimit)
  @ApiErrors([429, 'this operator has ADMIN_READS_PER_OPERATOR reads running already'])
  orderList(@Query() query: OrderQueryDto): Promise<OrderPageView> {
    return this.queries.orders(query);
  }

  /** The list's filters as a file, at most MAX_CSV_ROWS rows; X-Next-Cursor names where the next file starts. */
  @Get('orders.csv')
  @ApiOperation({
    summary:
      `The orders the filters select as CSV, newest first, at most ${MAX_CSV_ROWS.toLocaleString('en')} rows; ` +
      'X-Next-Cursor when there are more (viewer)',
  })
  @ApiProduces('text/csv')
  @ApiResponse({
    status: 200,
    description:
      'UTF-8 with a byte order mark, CRLF lines (RFC 4180); amount_minor in integer minor units, amount formatted; ' +
      "fields a spreadsheet would run as a formula (= + - @) start with '",
    content: { 'text/csv': { schema: { type: 'string' } } },
    headers: { 'X-Next-Cursor': { description: 'Present when more orders match: pass it as cursor' } },
  })
  @ApiErrors([400, 'a malformed filter, limit or cursor'])
  @AdminAccess(AdminRole.Viewer)
  @UseInterceptors(OperatorReadLimit)
  @ApiErrors([429, 'this operator has ADMIN_READS_PER_OPERATOR reads running already'])
  async orderExport(
    @Query() query: OrderExportQueryDto,
    @CurrentOperator() operator: AuthenticatedOperator,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    const page = await this.queries.orders(query, MAX_CSV_ROWS);
    // A bulk export of orders is kept in the audit log: who took which rows out.
    await this.audit.recordAlone({
      operatorId: operator.operatorId,
      action: 'ORDERS_EXPORTED',
      target: 'orders',
      requestBody: query,
      result: { rows: page.items.length, nextCursor: page.nextCursor },
    });
    // Set here, not by @Header: those are set before validation, and a 400 must stay JSON.
    const stamp = new Date().toISOString().replace(/[-:]/g, '').slice(0, 15);
    void reply.header('content-type', 'text/csv; charset=utf-8').header('cache-control', 'no-store');
    void reply.header('content-disposition', `attachment; filename="orders-${stamp}Z.csv"`);
    if (page.nextCursor) void reply.header('x-next-cursor', page.nextCursor);
    return ordersCsv(page.items);
  }

  @Get('orders/:orderNo')
  @ApiOperation({ summary: 'An order with its history, payments, deliveries, anomalies and refunds (viewer)' })
  @ApiOkResponse({ type: OrderDetailView })
  @ApiErrors([404, 'unknown order'])
  @AdminAccess(AdminRole.Viewer)
  @UseInterceptors(OperatorReadLimit)
  @ApiErrors([429, 'this operator has ADMIN_READS_PER_OPERATOR reads running already'])
  order(@Param('orderNo') orderNo: string): Promise<OrderDetailView> {
    return this.queries.order(orderNo);
  }

  @Get('deliveries/:id')
  @ApiOperation({
    summary:
      'One delivery with its signature headers and the exact bytes received; ' +
      "for a viewer, the payer's identifiers masked by the channel (viewer)",
  })
  @ApiOkResponse({ type: DeliveryView })
  @ApiErrors([404, 'unknown delivery'])
  @AdminAccess(AdminRole.Viewer)
  @UseInterceptors(OperatorReadLimit)
  @ApiErrors([429, 'this operator has ADMIN_READS_PER_OPERATOR reads running already'])
  async delivery(@Param('id') id: string, @CurrentOperator() operator: AuthenticatedOperator): Promise<DeliveryView> {
    const view = await this.queries.delivery(id, operator.role);
    if (operator.role === AdminRole.Admin) {
      // An admin sees the payer's identifiers unmasked: who read which payload is kept.
      await this.audit.recordAlone({
        operatorId: operator.operatorId,
        action: 'PAYLOAD_READ_UNMASKED',
        target: `delivery:${id}`,
        requestBody: null,
        result: { reason: 'an admin reads the raw payload with the payer unmasked' },
      });
    }
    return view;
  }

  @Get('deliveries/:id/decrypted')
  @ApiOperation({
    summary:
      "A delivery's encrypted part (the resource of a channel that encrypts one) decrypted with its account's key; " +
      "for an admin exact and audited (RESOURCE_READ_DECRYPTED), for a viewer with the payer's identifiers masked (viewer)",
  })
  @ApiOkResponse({ type: DecryptedContentView })
  @ApiErrors(
    [400, "no key of the delivery's account decrypts it (Undecryptable)"],
    [404, 'unknown delivery, its bytes pruned, or nothing encrypted in it (its channel encrypts nothing)'],
  )
  @AdminAccess(AdminRole.Viewer)
  @UseInterceptors(OperatorReadLimit)
  @ApiErrors([429, 'this operator has ADMIN_READS_PER_OPERATOR reads running already'])
  async decryptedContent(
    @Param('id') id: string,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<DecryptedContentView> {
    const view = await this.queries.decryptedContent(id, operator.role);
    if (!view.masked) {
      // The plaintext holds the payer: who read which one is kept (the content itself is not).
      await this.audit.recordAlone({
        operatorId: operator.operatorId,
        action: 'RESOURCE_READ_DECRYPTED',
        target: `delivery:${id}`,
        requestBody: null,
        result: { channel: view.channel, reason: 'an admin reads the decrypted resource with the payer unmasked' },
      });
    }
    return view;
  }

  @Get('stats/callbacks')
  @ApiOperation({ summary: 'Deliveries, payments and duplicates per UTC bucket and channel (viewer)' })
  @ApiOkResponse({ type: CallbackStatsView })
  @ApiErrors([400, 'a malformed range, or more than 2,000 buckets'])
  @AdminAccess(AdminRole.Viewer)
  @UseInterceptors(OperatorReadLimit)
  @ApiErrors([429, 'this operator has ADMIN_READS_PER_OPERATOR reads running already'])
  callbackStats(@Query() query: CallbackStatsQueryDto): Promise<CallbackStatsView> {
    return this.queries.callbackStats(query);
  }

  /**
   * 202: the refund is recorded with its audit row in one transaction; the channel is called after
   * the commit, and retried until it answers.
   */
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
  @AuditedWrite('EMERGENCY_REFUND', (request) => `order:${bodyField(request, 'orderNo')}`)
  async emergencyRefund(
    @Body() dto: EmergencyRefundDto,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<EmergencyRefundView> {
    const { refund, created } = await this.refunds.request(dto, operator.operatorId, ({ refund, created }) =>
      this.audit.record({
        operatorId: operator.operatorId,
        action: 'EMERGENCY_REFUND',
        target: `order:${dto.orderNo}`,
        requestBody: dto,
        result: { refundNo: refund.refundNo, status: refund.status, amount: refund.amount, created },
      }),
    );
    return { ...toRefundView(refund), created };
  }

  /** The money of an ABNORMAL refund went back outside the channel: settles it as refunded. */
  @Post('refunds/:refundNo/resolve-offline')
  @ApiOperation({ summary: 'Settle an ABNORMAL refund whose money went back outside the channel (admin)' })
  @ApiOkResponse({ type: RefundView })
  @ApiErrors([400, 'no reason'], [403, 'a viewer token'], [404, 'unknown refund'], [409, 'the refund is not ABNORMAL'])
  @HttpCode(200)
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('REFUND_RESOLVE_OFFLINE', refundTarget)
  async resolveOffline(
    @Param('refundNo') refundNo: string,
    @Body() dto: ReasonDto,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<RefundView> {
    const refund = await this.refunds.resolveOffline(refundNo, dto.reason, (refund) =>
      this.audit.record({
        operatorId: operator.operatorId,
        action: 'REFUND_RESOLVED_OFFLINE',
        target: `refund:${refundNo}`,
        requestBody: dto,
        result: { refundNo, status: refund.status, amount: refund.amount },
      }),
    );
    return toRefundView(refund);
  }

  /** A second admin lets a refund at or above REFUND_APPROVAL_THRESHOLD go to the channel (after the commit). */
  @Post('refunds/:refundNo/approve')
  @ApiOperation({ summary: 'Approve a refund awaiting approval; not by the admin who asked for it (admin)' })
  @ApiOkResponse({ type: RefundView })
  @ApiErrors([403, 'a viewer token, or the requester'], [404, 'unknown refund'], [409, 'not awaiting approval'])
  @HttpCode(200)
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('REFUND_APPROVE', refundTarget)
  async approve(
    @Param('refundNo') refundNo: string,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<RefundView> {
    const refund = await this.refunds.approve(refundNo, operator.operatorId, (refund) =>
      this.audit.record({
        operatorId: operator.operatorId,
        action: 'REFUND_APPROVED',
        target: `refund:${refundNo}`,
        requestBody: null,
        result: { refundNo, status: refund.status, amount: refund.amount, requestedBy: refund.requestedBy },
      }),
    );
    return toRefundView(refund);
  }

  /** Cancels a refund awaiting approval; its amount can be refunded again. */
  @Post('refunds/:refundNo/reject')
  @ApiOperation({ summary: 'Reject a refund awaiting approval; its amount can be refunded again (admin)' })
  @ApiOkResponse({ type: RefundView })
  @ApiErrors([400, 'no reason'], [403, 'a viewer token'], [404, 'unknown refund'], [409, 'not awaiting approval'])
  @HttpCode(200)
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('REFUND_REJECT', refundTarget)
  async reject(
    @Param('refundNo') refundNo: string,
    @Body() dto: ReasonDto,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<RefundView> {
    const refund = await this.refunds.reject(refundNo, operator.operatorId, dto.reason, (refund) =>
      this.audit.record({
        operatorId: operator.operatorId,
        action: 'REFUND_REJECTED',
        target: `refund:${refundNo}`,
        requestBody: dto,
        result: { refundNo, status: refund.status, amount: refund.amount, requestedBy: refund.requestedBy },
      }),
    );
    return toRefundView(refund);
  }
}

function refundTarget(request: FastifyRequest): string {
  return `refund:${(request.params as { refundNo?: string }).refundNo ?? ''}`;
}

function bodyField(request: FastifyRequest, name: string): string {
  const value = (request.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '(none)';
}
