import { FastifyRequest } from 'fastify';
import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminAccess, AuthenticatedOperator, CurrentOperator } from '../operators/admin-auth.guard';
import { AuditLog } from '../operators/audit/audit-log';
import { AuditedWrite } from '../operators/audit/audited-write';
import { ApiErrors } from '../platform/http/error.view';
import { AdminRole } from '../operators/admin.config';
import { billDateOf, isBillDate, shiftBillDate } from '../domain/bill';
import { DomainError } from '../domain/domain-error';
import { PaymentChannels } from '../channels/payment-channels';
import { ReconciliationAccountDto, ReconciliationListQueryDto } from './dto/reconciliation-queries.dto';
import { ReconciliationService } from './reconciliation.service';
import { ReconciliationViews } from './reconciliation-views.queries';

/** At most this many days listed at once. */
const MAX_LIST_DAYS = 366;

/** Reconciliation runs for operators: read by viewers, started by admins (audited). */
@ApiTags('admin')
@ApiBearerAuth('admin')
@ApiErrors(
  [401, 'missing or unknown operator token (ADMIN_TOKENS)'],
  [503, 'ADMIN_TOKENS is not configured, or the database is unavailable (retry)'],
)
@Controller('admin/reconciliations')
export class ReconciliationController {
  constructor(
    private readonly views: ReconciliationViews,
    private readonly reconciliation: ReconciliationService,
    private readonly channels: PaymentChannels,
    private readonly audit: AuditLog,
  ) {}

  /** Runs with their counts per outcome; default the last 7 days. */
  @Get()
  @AdminAccess(AdminRole.Viewer)
  @ApiOperation({ summary: 'Reconciliation runs of a range of bill dates, with their counts per outcome (viewer)' })
  @ApiOkResponse({ description: '{from, to, runs}' })
  @ApiErrors([400, 'a malformed date, from after to, or more than 366 days'])
  async list(@Query() query: ReconciliationListQueryDto) {
    const to = checkDate(query.to ?? shiftBillDate(billDateOf(new Date()), -1), 'to');
    const from = checkDate(query.from ?? shiftBillDate(to, -6), 'from');
    if (from > to) throw new DomainError('MalformedRequest', 'from must not be after to');
    if (shiftBillDate(from, MAX_LIST_DAYS) <= to) {
      throw new DomainError('MalformedRequest', `at most ${MAX_LIST_DAYS} days at once`);
    }
    return { from, to, runs: await this.views.list(from, to) };
  }

  @Get(':channel/:date')
  @AdminAccess(AdminRole.Viewer)
  @ApiOperation({ summary: "One day's reconciliation runs of a channel, with their discrepancies (viewer)" })
  @ApiOkResponse({ description: '{runs}: each run with its counts and items' })
  @ApiErrors([400, 'a malformed date'], [404, 'unknown channel, or no run of that day'])
  async day(@Param('channel') channel: string, @Param('date') date: string, @Query() query: ReconciliationAccountDto) {
    const runs = await this.views.day(this.channelId(channel), checkDate(date, 'date'), query.merchantId);
    if (runs.length === 0) throw new DomainError('NotFound', `no reconciliation of ${channel} for ${date}`);
    return { runs };
  }

  /**
   * 202: the run is claimed (and audited) in one transaction, then runs in the background; an
   * account whose run is in progress on any instance answers `started: false`.
   */
  @Post(':channel/:date/run')
  @HttpCode(202)
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('RECONCILE', runTarget)
  @ApiOperation({ summary: 'Reconcile a day now, in the background; audited (admin)' })
  @ApiAcceptedResponse({ description: '{runs: [{channel, merchantId, date, started}]}' })
  @ApiErrors(
    [400, 'a malformed date, a day whose bill cannot exist yet, or an unknown field'],
    [403, 'a viewer token'],
    [404, 'unknown channel, or no such account with API credentials'],
  )
  async run(
    @Param('channel') channelParam: string,
    @Param('date') dateParam: string,
    @Body() dto: ReconciliationAccountDto,
    @CurrentOperator() operator: AuthenticatedOperator,
  ) {
    const channel = this.channelId(channelParam);
    const date = checkDate(dateParam, 'date');
    if (date >= billDateOf(new Date())) {
      throw new DomainError(
        'MalformedRequest',
        `the bill of ${date} does not exist before the next day (Beijing time)`,
      );
    }
    const runs = await this.reconciliation.startForOperator(channel, date, dto, (started) =>
      this.audit.record({
        operatorId: operator.operatorId,
        action: 'RECONCILE',
        target: `reconciliation:${channel}:${date}`,
        requestBody: dto,
        result: started.map(({ merchantId, subMerchantId, started }) => ({
          merchantId,
          ...(subMerchantId ? { subMerchantId } : {}),
          started,
        })),
      }),
    );
    return { runs };
  }

  private channelId(param: string): string {
    const channel = this.channels.get(param.toUpperCase());
    if (!channel) throw new DomainError('NotFound', `unknown channel ${param.slice(0, 32)}`);
    return channel.channel;
  }
}

function checkDate(value: string, name: string): string {
  if (!isBillDate(value)) throw new DomainError('MalformedRequest', `${name} must be a date YYYY-MM-DD`);
  return value;
}

/** The target the run's audit row names: `reconciliation:<CHANNEL>:<date>`, as asked. */
function runTarget(request: FastifyRequest): string {
  const { channel, date } = request.params as { channel?: string; date?: string };
  return `reconciliation:${(channel ?? '').toUpperCase()}:${date ?? ''}`;
}
