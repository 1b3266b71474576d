import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { AdminAccess, AuthenticatedOperator, CurrentOperator } from '../admin/admin-auth.guard';
import { AdminRole } from '../config/admin.config';
import { billDateOf, isBillDate, shiftBillDate } from '../domain/bill';
import { DomainError } from '../domain/domain-error';
import { PaymentChannels } from '../channels/payment-channels';
import { ReconciliationAccountDto, ReconciliationListQueryDto } from './dto/reconciliation-queries.dto';
import { ReconciliationService } from './reconciliation.service';
import { ReconciliationViews } from './reconciliation.views';

/** At most this many days listed at once. */
const MAX_LIST_DAYS = 366;

/** Reconciliation runs for operators: read by viewers, started by admins (audited). */
@Controller('admin/reconciliations')
export class ReconciliationController {
  constructor(
    private readonly views: ReconciliationViews,
    private readonly reconciliation: ReconciliationService,
    private readonly channels: PaymentChannels,
  ) {}

  /** Runs with their counts per outcome; default the last 7 days. */
  @Get()
  @AdminAccess(AdminRole.Viewer)
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
    return { runs: await this.reconciliation.startForOperator(channel, date, dto, operator.operatorId) };
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
