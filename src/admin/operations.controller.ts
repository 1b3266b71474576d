import { FastifyRequest } from 'fastify';
import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { PaymentAnomaly } from '../payments/anomaly/anomaly.entity';
import { ApiErrors } from '../platform/http/error.view';
import { AdminRole } from '../operators/admin.config';
import { DomainError } from '../domain/domain-error';
import { listDeadLetters } from '../events/dead-letters.queries';
import { PaymentCallback } from '../payments/idempotency/payment-callback.entity';
import { AdminAccess, AuthenticatedOperator, CurrentOperator } from '../operators/admin-auth.guard';
import { AuditLog } from '../operators/audit/audit-log';
import { AuditedWrite } from '../operators/audit/audited-write';
import { DeadLetterReplay, Replayed } from './dead-letter-replay';
import { AnomalyView, toAnomalyView } from './dto/admin-views';
import { OperationsOverview, OperationsOverviewQuery } from './operations-overview.queries';

const ID = /^[1-9]\d{0,18}$/;
const TRANSACTION_ID = /^[\x21-\x7e]{1,64}$/;

/** What the operator console needs beside the admin lists: who is signed in, the overview, look-ups and dead letters. */
@ApiTags('admin')
@ApiBearerAuth('admin')
@ApiErrors(
  [401, 'missing or unknown operator token (ADMIN_TOKENS)'],
  [503, 'ADMIN_TOKENS is not configured, or the database is unavailable (retry)'],
)
@Controller('admin')
export class OperationsController {
  constructor(
    private readonly db: DataSource,
    private readonly overviewQuery: OperationsOverviewQuery,
    private readonly replays: DeadLetterReplay,
    private readonly audit: AuditLog,
  ) {}

  @Get('me')
  @ApiOperation({ summary: 'The operator the token belongs to, and their role (viewer)' })
  @AdminAccess(AdminRole.Viewer)
  me(@CurrentOperator() operator: AuthenticatedOperator): AuthenticatedOperator {
    return { operatorId: operator.operatorId, role: operator.role };
  }

  @Get('overview')
  @ApiOperation({
    summary:
      'Latency, open anomalies, refunds to approve or settle, dead letters, spool, last reconciliations, certificates that expire first (viewer)',
  })
  @AdminAccess(AdminRole.Viewer)
  overview(): Promise<OperationsOverview> {
    return this.overviewQuery.read();
  }

  @Get('anomalies/:id')
  @ApiOperation({ summary: 'One anomaly (viewer)' })
  @ApiOkResponse({ type: AnomalyView })
  @ApiErrors([404, 'unknown anomaly'])
  @AdminAccess(AdminRole.Viewer)
  async anomaly(@Param('id') id: string): Promise<AnomalyView> {
    const anomaly = ID.test(id) ? await this.db.getRepository(PaymentAnomaly).findOneBy({ id }) : null;
    if (!anomaly) throw new DomainError('NotFound', `anomaly ${id.slice(0, 32)} not found`);
    return toAnomalyView(anomaly);
  }

  @Get('transactions/:transactionId')
  @ApiOperation({ summary: 'The order a channel transaction paid, or tried to pay (viewer)' })
  @ApiErrors([404, 'no payment or anomaly with that transaction id'])
  @AdminAccess(AdminRole.Viewer)
  async transaction(@Param('transactionId') transactionId: string): Promise<{ orderNo: string; channel: string }> {
    const found = TRANSACTION_ID.test(transactionId)
      ? ((await this.db.getRepository(PaymentCallback).findOneBy({ transactionId })) ??
        (await this.db.getRepository(PaymentAnomaly).findOneBy({ transactionId })))
      : null;
    if (!found) throw new DomainError('NotFound', `transaction ${transactionId.slice(0, 64)} not found`);
    return { orderNo: found.orderNo, channel: found.channel };
  }

  @Get('dead-letters')
  @ApiOperation({ summary: 'Dead-lettered events, outbox and handlers alike, oldest first (viewer)' })
  @AdminAccess(AdminRole.Viewer)
  async deadLetters() {
    return { items: await listDeadLetters(this.db) };
  }

  /** Puts one dead-lettered event back in line; consumers deduplicate by eventId, so a second replay is harmless. */
  @Post('dead-letters/:eventId/replay')
  @HttpCode(200)
  @ApiOperation({ summary: 'Replay one dead-lettered event; audited (admin)' })
  @ApiErrors([403, 'a viewer token'], [404, 'no dead letter with that event id'])
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('DEAD_LETTER_REPLAY', eventTarget)
  replayDeadLetter(
    @Param('eventId') eventId: string,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<Replayed> {
    return this.replays.replay(eventId, ({ replayed }) =>
      this.audit.record({
        operatorId: operator.operatorId,
        action: 'DEAD_LETTER_REPLAYED',
        target: `event:${eventId}`,
        requestBody: null,
        result: { replayed },
      }),
    );
  }
}

function eventTarget(request: FastifyRequest): string {
  return `event:${(request.params as { eventId?: string }).eventId ?? ''}`;
}
