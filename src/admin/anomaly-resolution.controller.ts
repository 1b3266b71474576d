import { FastifyRequest } from 'fastify';
import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { DomainError } from '../domain/domain-error';
import { AnomalyResolution } from '../payments/anomaly/anomaly-resolution';
import { AdminRole } from '../operators/admin.config';
import { ApiErrors } from '../platform/http/error.view';
import { AdminAccess, AuthenticatedOperator, CurrentOperator } from '../operators/admin-auth.guard';
import { AuditLog } from '../operators/audit/audit-log';
import { AuditedWrite } from '../operators/audit/audited-write';
import { anomalyDecisions, AuditRow } from './anomaly-history.queries';
import { ReasonDto, ResolveAnomalyDto } from './dto/admin-queries.dto';
import { AnomalyView, toAnomalyView } from './dto/admin-views';

const ID = /^[1-9]\d{0,18}$/;
const HISTORY_LIMIT = 500;

class ResolvedAnomalyView extends AnomalyView {
  @ApiProperty({ description: 'false when the same resolution was asked for already (nothing changed)' })
  created: boolean;
}

class AnomalyDecisionView {
  @ApiProperty()
  id: string;

  @ApiProperty()
  operatorId: string;

  @ApiProperty({ description: 'e.g. ANOMALY_RESOLVED, ANOMALY_RESOLUTION_APPROVED, EMERGENCY_REFUND, *_REFUSED' })
  action: string;

  @ApiProperty()
  target: string;

  @ApiProperty({ description: 'The request as received' })
  requestBody: unknown;

  @ApiProperty({ description: 'What it did, or why it was refused' })
  result: unknown;

  @ApiProperty({ type: String, format: 'date-time' })
  createdAt: string;
}

class AnomalyHistoryView {
  @ApiProperty({ type: [AnomalyDecisionView], description: 'Oldest first, at most 500' })
  items: AnomalyDecisionView[];
}

/**
 * Closing an anomaly without a refund (accepted as paid, refunded outside, a duplicate of another…),
 * with four eyes at or above REFUND_APPROVAL_THRESHOLD, and the anomaly's decisions.
 */
@ApiTags('admin')
@ApiBearerAuth('admin')
@ApiErrors(
  [401, 'missing or unknown operator token (ADMIN_TOKENS)'],
  [503, 'ADMIN_TOKENS is not configured, or the database is unavailable (retry)'],
)
@Controller('admin/anomalies')
export class AnomalyResolutionController {
  constructor(
    private readonly resolution: AnomalyResolution,
    private readonly audit: AuditLog,
    private readonly db: DataSource,
  ) {}

  @Post(':id/resolve')
  @ApiOperation({
    summary:
      'Close an OPEN anomaly without a refund; at or above REFUND_APPROVAL_THRESHOLD it waits for ' +
      "another admin's approval; idempotent (admin)",
  })
  @ApiOkResponse({ type: ResolvedAnomalyView })
  @ApiErrors(
    [400, 'malformed body'],
    [403, 'a viewer token'],
    [404, 'unknown anomaly'],
    [409, 'a refund in flight, already resolved, or another resolution asked for'],
  )
  @HttpCode(200)
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('ANOMALY_RESOLVE', anomalyTarget)
  async resolve(
    @Param('id') id: string,
    @Body() dto: ResolveAnomalyDto,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<ResolvedAnomalyView> {
    const { anomaly, created } = await this.resolution.request(knownId(id), dto, operator.operatorId, (done) =>
      this.audit.record({
        operatorId: operator.operatorId,
        action: done.anomaly.status === 'RESOLVED' ? 'ANOMALY_RESOLVED' : 'ANOMALY_RESOLUTION_REQUESTED',
        target: `anomaly:${id}`,
        requestBody: dto,
        result: {
          status: done.anomaly.status,
          resolution: done.anomaly.resolutionStatus,
          paidAmount: done.anomaly.paidAmount,
          created: done.created,
        },
      }),
    );
    return { ...toAnomalyView(anomaly), created };
  }

  @Post(':id/resolution/approve')
  @ApiOperation({ summary: 'Apply a resolution awaiting approval; not by the admin who asked for it (admin)' })
  @ApiOkResponse({ type: AnomalyView })
  @ApiErrors([403, 'a viewer token, or the requester'], [404, 'unknown anomaly'], [409, 'no resolution awaiting'])
  @HttpCode(200)
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('ANOMALY_RESOLUTION_APPROVE', anomalyTarget)
  async approve(@Param('id') id: string, @CurrentOperator() operator: AuthenticatedOperator): Promise<AnomalyView> {
    const anomaly = await this.resolution.approve(knownId(id), operator.operatorId, (approved) =>
      this.audit.record({
        operatorId: operator.operatorId,
        action: 'ANOMALY_RESOLUTION_APPROVED',
        target: `anomaly:${id}`,
        requestBody: null,
        result: {
          status: approved.status,
          reason: approved.resolutionReason,
          requestedBy: approved.resolutionRequestedBy,
        },
      }),
    );
    return toAnomalyView(anomaly);
  }

  @Post(':id/resolution/reject')
  @ApiOperation({ summary: 'Withdraw a resolution awaiting approval; the anomaly is open to a refund again (admin)' })
  @ApiOkResponse({ type: AnomalyView })
  @ApiErrors([400, 'no reason'], [403, 'a viewer token'], [404, 'unknown anomaly'], [409, 'no resolution awaiting'])
  @HttpCode(200)
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('ANOMALY_RESOLUTION_REJECT', anomalyTarget)
  async reject(
    @Param('id') id: string,
    @Body() dto: ReasonDto,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<AnomalyView> {
    const { anomaly } = await this.resolution.reject(knownId(id), ({ withdrawn }) =>
      this.audit.record({
        operatorId: operator.operatorId,
        action: 'ANOMALY_RESOLUTION_REJECTED',
        target: `anomaly:${id}`,
        requestBody: dto,
        result: { reason: withdrawn.resolutionReason, requestedBy: withdrawn.resolutionRequestedBy },
      }),
    );
    return toAnomalyView(anomaly);
  }

  /** Every decision on the anomaly: its resolution's, and its refunds' (requested, approved, rejected, refused). */
  @Get(':id/history')
  @ApiOperation({ summary: "The anomaly's decisions, audited, oldest first (viewer)" })
  @ApiOkResponse({ type: AnomalyHistoryView })
  @ApiErrors([404, 'unknown anomaly'])
  @AdminAccess(AdminRole.Viewer)
  async history(@Param('id') id: string): Promise<AnomalyHistoryView> {
    const rows = await anomalyDecisions(this.db, knownId(id), HISTORY_LIMIT);
    if (!rows) throw new DomainError('NotFound', `anomaly ${id} not found`);
    return { items: rows.map(toDecision) };
  }
}

function toDecision(row: AuditRow): AnomalyDecisionView {
  return {
    id: String(row.id),
    operatorId: row.operator_id,
    action: row.action,
    target: row.target,
    requestBody: parsed(row.request_body),
    result: parsed(row.result),
    createdAt: new Date(row.created_at).toISOString(),
  };
}

/** MariaDB's JSON is LONGTEXT: the driver hands it over as text. */
function parsed(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/** Ids are positive integers: anything else is an unknown anomaly, without a query. */
function knownId(id: string): string {
  if (!ID.test(id)) throw new DomainError('NotFound', `anomaly ${id.slice(0, 32)} not found`);
  return id;
}

function anomalyTarget(request: FastifyRequest): string {
  return `anomaly:${(request.params as { id?: string }).id ?? ''}`;
}
