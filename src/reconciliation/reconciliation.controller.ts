import { Body, Controller, Get, HttpCode, Logger, Param, Post, Query } from '@nestjs/common';
import { AdminAccess, AuthenticatedOperator, CurrentOperator } from '../admin/admin-auth.guard';
import { AuditLog } from '../admin/audit/audit-log';
import { AdminRole } from '../config/admin.config';
import { billDateOf, isBillDate, shiftBillDate } from '../domain/bill';
import { DomainError } from '../domain/domain-error';
import { PaymentChannels } from '../channels/payment-channels';
import { TransactionRunner } from '../transaction/transaction.runner';
import { ReconciliationAccountDto, ReconciliationListQueryDto } from './dto/reconciliation-queries.dto';
import { ReconciliationRepository } from './reconciliation.repository';
import { ReconciliationService } from './reconciliation.service';
import { ReconciliationViews } from './reconciliation.views';

/** At most this many days listed at once. */
const MAX_LIST_DAYS = 366;

/** Reconciliation runs for operators: read by viewers, started by admins (audited). */
@Controller('admin/reconciliations')
export class ReconciliationController {
  private readonly logger = new Logger(ReconciliationController.name);

  constructor(
    private readonly views: ReconciliationViews,
    private readonly reconciliation: ReconciliationService,
    private readonly runs: ReconciliationRepository,
    private readonly channels: PaymentChannels,
    private readonly audit: AuditLog,
    private readonly transactions: TransactionRunner,
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
    const targets = this.reconciliation.targets(channel, dto.merchantId);
    if (targets.length === 0) {
      throw new DomainError(
        'NotFound',
        `${channel} has no account${dto.merchantId ? ` ${dto.merchantId}` : ''} with API credentials`,
      );
    }
    const now = new Date();
    for (const { merchantId } of targets) await this.runs.ensureRun(channel, merchantId, date, now);
    const claims = await this.transactions.run(async () => {
      const taken = [];
      for (const { merchantId } of targets) {
        taken.push({ merchantId, claim: await this.runs.claim(channel, merchantId, date, now, 'MANUAL') });
      }
      await this.audit.record({
        operatorId: operator.operatorId,
        action: 'RECONCILE',
        target: `reconciliation:${channel}:${date}`,
        requestBody: dto,
        result: taken.map(({ merchantId, claim }) => ({ merchantId, started: claim !== undefined })),
      });
      return taken;
    });
    for (const { claim } of claims) {
      if (!claim) continue;
      // Runs on after the answer; its outcome is on the run (GET …/:channel/:date) and in the log.
      void this.reconciliation
        .execute(claim)
        .catch((error: Error) => this.logger.error(`reconciliation failed: ${error.message}`));
    }
    return {
      runs: claims.map(({ merchantId, claim }) => ({ channel, merchantId, date, started: claim !== undefined })),
    };
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
