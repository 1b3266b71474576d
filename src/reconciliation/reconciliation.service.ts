import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { Propagation, Transactional } from '@nestjs-cls/transactional';
import { PaymentChannel } from '../channels/payment-channel';
import { PaymentChannels } from '../channels/payment-channels';
import { reconciliationConfig } from './reconciliation.config';
import { BillEntry, BillLine, billDayRange, shiftBillDate } from '../domain/bill';
import { DomainError } from '../domain/domain-error';
import { TradeQueryService } from '../trade/trade-query.service';
import { TransactionRunner } from '../platform/transaction/transaction.runner';
import { RefundStatus } from '../refund/refund.entity';
import { RefundSettlement } from '../refund/refund-settlement';
import { DISCREPANCIES, ItemOutcome } from './reconciliation-item.entity';
import { RunStatus } from './reconciliation-run.entity';
import { LocalRecord, NewItem, ReconciliationRepository, RunClaim } from './reconciliation.repository';

/** Bill lines per multi-row INSERT, and how many batches between lease renewals. */
const LINE_BATCH = 1000;
const BATCHES_PER_RENEWAL = 50;
const MISSING_PAGE = 200;
/** Warn lines per run; the rest are counted in the summary line and listed in the admin API. */
const MAX_WARN_LINES = 50;

export type Progress = (message: string) => void;

/** An operator's run of one account's bill, as started: whether it was claimed here. */
export interface StartedRun {
  channel: string;
  merchantId: string;
  subMerchantId?: string;
  date: string;
  started: boolean;
}

export interface RunReport {
  channel: string;
  merchantId: string;
  /** The sub-merchant whose bill it was; '' for the account's own. */
  subMerchantId: string;
  billDate: string;
  status: RunStatus;
  counts?: Record<string, number>;
  detail?: string;
}

/**
 * Reconciles one account's bill of one day with our payments and refunds:
 * download (through the channel port) → load the lines → compare by set-based joins → confirm and
 * apply what we lost (trade query, same pipeline as a notification) → look for what the channel
 * does not have → counts, warnings. The run is claimed first, so one instance runs it.
 */
@Injectable()
export class ReconciliationService {
  private readonly logger = new Logger(ReconciliationService.name);

  constructor(
    @Inject(reconciliationConfig.KEY) private readonly config: ConfigType<typeof reconciliationConfig>,
    private readonly channels: PaymentChannels,
    private readonly runs: ReconciliationRepository,
    private readonly transactions: TransactionRunner,
    private readonly queries: TradeQueryService,
    private readonly refunds: RefundSettlement,
  ) {}

  /**
   * The bills to reconcile: of each account whose API can be called, optionally narrowed; a service
   * provider's account has one bill per sub-merchant ('' names the account's own bill).
   */
  targets(
    channel?: string,
    merchantId?: string,
  ): Array<{ channel: PaymentChannel; merchantId: string; subMerchantId: string }> {
    return this.channels
      .apiTargets()
      .filter((t) => t.channel.enabled)
      .filter((t) => !channel || t.channel.channel === channel)
      .filter((t) => !merchantId || t.merchantId === merchantId)
      .flatMap((t) => {
        const subs = t.channel.subMerchantIds(t.merchantId);
        return (subs.length > 0 ? subs : ['']).map((subMerchantId) => ({ ...t, subMerchantId }));
      });
  }

  /** Claims and runs; undefined when another instance holds the run (or, scheduled, it is not due). */
  async run(
    channel: string,
    merchantId: string,
    billDate: string,
    mode: 'SCHEDULED' | 'MANUAL',
    progress: Progress = () => undefined,
    subMerchantId = '',
  ): Promise<RunReport | undefined> {
    const now = new Date();
    await this.runs.ensureRun(channel, merchantId, billDate, now, subMerchantId);
    const claim = await this.transactions.run(() =>
      this.runs.claim(channel, merchantId, billDate, now, mode, subMerchantId),
    );
    return claim ? this.execute(claim, progress) : undefined;
  }

  /**
   * An operator's run of every account of the channel (or the one named): claimed in ONE
   * transaction of its own (Propagation.Never) with the caller's audit row (alongside), then run in
   * the background after the commit; `started: false` where another instance holds the run.
   */
  @Transactional(Propagation.Never)
  async startForOperator(
    channel: string,
    billDate: string,
    request: { merchantId?: string },
    alongside?: (started: StartedRun[]) => Promise<void>,
  ): Promise<StartedRun[]> {
    const targets = this.targets(channel, request.merchantId);
    if (targets.length === 0) {
      const account = request.merchantId ? ` ${request.merchantId}` : '';
      throw new DomainError('NotFound', `${channel} has no account${account} with API credentials`);
    }
    const now = new Date();
    for (const { merchantId, subMerchantId } of targets) {
      await this.runs.ensureRun(channel, merchantId, billDate, now, subMerchantId);
    }
    const claims = await this.transactions.run(async () => {
      const taken: Array<{ merchantId: string; subMerchantId: string; claim?: RunClaim }> = [];
      for (const { merchantId, subMerchantId } of targets) {
        const claim = await this.runs.claim(channel, merchantId, billDate, now, 'MANUAL', subMerchantId);
        taken.push({ merchantId, subMerchantId, claim });
      }
      await alongside?.(
        taken.map(({ merchantId, subMerchantId, claim }) =>
          startedRun(channel, billDate, merchantId, subMerchantId, claim),
        ),
      );
      return taken;
    });
    for (const { claim } of claims) {
      // Runs on after the answer: its outcome is on the run (GET /admin/reconciliations/…) and in the log.
      if (claim) void this.execute(claim).catch((error: Error) => this.logger.error(`run failed: ${error.message}`));
    }
    return claims.map(({ merchantId, subMerchantId, claim }) =>
      startedRun(channel, billDate, merchantId, subMerchantId, claim),
    );
  }

  async execute(claim: RunClaim, progress: Progress = () => undefined): Promise<RunReport> {
    const channel = this.channels.get(claim.channel);
    const say = (message: string) => {
      progress(message);
      this.logger.log(`${describeRun(claim)}: ${message}`);
    };
    try {
      if (!channel?.enabled) throw new Error(`channel ${claim.channel} is not configured`);
      await this.runs.clear(claim.runId);
      say('downloading the bill');
      const bill = await channel.downloadBill(claim.merchantId, claim.billDate, claim.subMerchantId || undefined);
      if (bill.outcome !== 'READY') {
        say(`${bill.outcome === 'NOT_READY' ? 'no bill yet' : 'download failed'}: ${bill.detail}`);
        return await this.retryLater(
          claim,
          bill.outcome === 'NOT_READY' ? RunStatus.NotReady : RunStatus.Failed,
          bill.detail,
        );
      }
      const loaded = await this.loadLines(claim, bill.entries);
      say(`loaded ${loaded.lines} bill lines (${loaded.malformed} malformed); comparing`);
      await this.runs.insertAmountAndRefundDifferences(claim.runId, claim.channel);
      await this.settleRefundsTheBillShowsMade(claim, say);
      const matched = await this.runs.countMatched(claim.runId, claim.channel);
      const recovered = await this.confirmMissingLocally(claim, channel);
      say(
        `${matched} matched; ${recovered} missing here, confirmed by trade query and applied; looking for ours the bill lacks`,
      );
      const missingAtChannel = await this.findMissingAtChannel(claim, channel);
      const counts = this.countsOf(matched, await this.runs.itemCounts(claim.runId));
      await this.runs.finish(claim, { status: RunStatus.Completed, billLines: loaded.lines, counts });
      this.warnDiscrepancies(claim, counts, missingAtChannel);
      say(`done: ${describeCounts(counts)}`);
      return { ...report(claim, RunStatus.Completed), counts };
    } catch (error) {
      const detail = (error as Error).message;
      say(`failed: ${detail}`);
      return await this.retryLater(claim, RunStatus.Failed, detail);
    } finally {
      // Best effort: a re-run clears whatever a failed drop left.
      await this.runs.dropLines(claim).catch(() => undefined);
    }
  }

  /** The bill's word that a refund recorded CLOSED or REJECTED left wins: it is settled SUCCEEDED, with a refund anomaly. */
  private async settleRefundsTheBillShowsMade(claim: RunClaim, say: (message: string) => void): Promise<void> {
    for (const refundNo of await this.runs.refundsMadeButRecordedClosed(claim.runId, claim.channel)) {
      await this.transactions.run(() => this.refunds.settle(refundNo, RefundStatus.Succeeded));
      say(
        `the bill shows refund ${refundNo} made, which was recorded closed: settled SUCCEEDED, refund anomaly opened`,
      );
    }
  }

  private async retryLater(claim: RunClaim, status: RunStatus, detail: string): Promise<RunReport> {
    const retryAt = new Date(Date.now() + this.config.retrySeconds * 1000);
    await this.runs.finish(claim, { status, detail, retryAt });
    return { ...report(claim, status), detail };
  }

  /** Multi-row inserts of LINE_BATCH lines; malformed lines become items. The lease is renewed as it goes. */
  private async loadLines(
    claim: RunClaim,
    entries: AsyncIterable<BillEntry>,
  ): Promise<{ lines: number; malformed: number }> {
    let batch: BillLine[] = [];
    let malformed: NewItem[] = [];
    let lines = 0;
    let batches = 0;
    let malformedCount = 0;
    const flush = async () => {
      await this.runs.insertLines(claim.runId, batch);
      await this.runs.insertItems(claim.runId, malformed);
      batch = [];
      malformed = [];
      if (++batches % BATCHES_PER_RENEWAL === 0 && !(await this.runs.renew(claim))) {
        throw new Error('the run was taken over by another instance (lease expired)');
      }
    };
    for await (const entry of entries) {
      if (entry.kind === 'MALFORMED') {
        malformed.push(this.runs.malformedItem(entry));
        malformedCount++;
      } else {
        batch.push(entry);
        lines++;
      }
      if (batch.length + malformed.length >= LINE_BATCH) await flush();
    }
    await flush();
    return { lines, malformed: malformedCount };
  }

  /**
   * A payment the channel took that we never recorded: asked about by trade query and, when the
   * channel confirms it, applied through the notification pipeline (claim, compare-and-set,
   * outbox or anomaly), so it takes effect once whatever else delivers it.
   */
  private async confirmMissingLocally(claim: RunClaim, channel: PaymentChannel): Promise<number> {
    let afterLine = 0;
    let applied = 0;
    for (;;) {
      const page = await this.runs.missingLocally(claim.runId, claim.channel, afterLine, MISSING_PAGE);
      if (page.length === 0) return applied;
      const items: NewItem[] = [];
      for (const line of page) {
        const item = await this.confirm(claim, channel, line);
        if (item.resolution === 'PAID') applied++;
        items.push(item);
      }
      await this.runs.insertItems(claim.runId, items);
      afterLine = page[page.length - 1].line;
      if (!(await this.runs.renew(claim)))
        throw new Error('the run was taken over by another instance (lease expired)');
    }
  }

  private async confirm(claim: RunClaim, channel: PaymentChannel, line: BillLine): Promise<NewItem> {
    const item: NewItem = {
      outcome: ItemOutcome.MissingLocal,
      kind: 'PAYMENT',
      transactionId: line.transactionId,
      orderNo: line.orderNo,
      channelAmount: line.amount,
      billLine: line.line,
    };
    try {
      const channelOrderTime = await this.runs.channelOrderTimeOf(line.orderNo);
      const target = {
        channel,
        merchantId: claim.merchantId,
        ...(claim.subMerchantId ? { subMerchantId: claim.subMerchantId } : {}),
        ...(channelOrderTime ? { channelOrderTime } : {}),
        unavailable: channel.apiUnavailableReason(claim.merchantId),
      };
      const { result, applied } = await this.queries.queryTrade(line.orderNo, target);
      if (result.outcome !== 'PAID' || !applied) {
        return {
          ...item,
          resolution: 'NOT_CONFIRMED',
          detail: `trade query: ${result.outcome} ${result.detail ?? ''}`.trim(),
        };
      }
      const other = result.payment.transactionId !== line.transactionId;
      return {
        ...item,
        resolution: applied,
        localAmount: result.payment.amount,
        detail: other ? `the trade query names another transaction: ${result.payment.transactionId}` : undefined,
      };
    } catch (error) {
      return { ...item, resolution: 'FAILED', detail: (error as Error).message };
    }
  }

  /**
   * Our payments and refunds of the day that the bill does not have. The day is shifted back by
   * the boundary tolerance: the last seconds of a day are the next run's, and a record this close
   * to the start of the day is looked for in the previous day's bill before it is called missing.
   */
  private async findMissingAtChannel(claim: RunClaim, channel: PaymentChannel): Promise<LocalRecord[]> {
    const toleranceMs = this.config.boundarySeconds * 1000;
    const { start, end } = billDayRange(claim.billDate);
    const missing = await this.runs.missingAtChannel({
      runId: claim.runId,
      channel: claim.channel,
      merchantId: claim.merchantId,
      subMerchantId: claim.subMerchantId,
      includeUnattributed: channel.accountIds().length === 1,
      from: new Date(start.getTime() - toleranceMs),
      to: new Date(end.getTime() - toleranceMs),
    });
    const nearStart = missing.filter((r) => r.at.getTime() < start.getTime() + toleranceMs);
    const { found, note } = nearStart.length
      ? await this.lookInBill(channel, claim, shiftBillDate(claim.billDate, -1), nearStart)
      : { found: new Set<string>(), note: undefined };
    const reported = missing.filter((r) => !found.has(keyOf(r)));
    await this.runs.insertItems(
      claim.runId,
      reported.map((r) => ({
        outcome: r.kind === 'PAYMENT' ? ItemOutcome.MissingChannel : ItemOutcome.RefundMissingChannel,
        kind: r.kind,
        transactionId: r.transactionId,
        orderNo: r.orderNo,
        refundNo: r.refundNo,
        localAmount: r.amount,
        detail: nearStart.includes(r) ? note : undefined,
      })),
    );
    return reported;
  }

  /** Which of `records` the bill of `date` has (streamed; only the candidates' keys are held). */
  private async lookInBill(
    channel: PaymentChannel,
    claim: RunClaim,
    date: string,
    records: LocalRecord[],
  ): Promise<{ found: Set<string>; note?: string }> {
    const wanted = new Set(records.map(keyOf));
    const found = new Set<string>();
    const bill = await channel.downloadBill(claim.merchantId, date, claim.subMerchantId || undefined);
    if (bill.outcome !== 'READY') {
      return { found, note: `not in the bill of the day before either: it could not be read (${bill.detail})` };
    }
    for await (const entry of bill.entries) {
      if (entry.kind === 'MALFORMED') continue;
      const key = keyOf(entry);
      if (wanted.has(key)) found.add(key);
    }
    return { found, note: `not in the bill of ${date} either` };
  }

  private countsOf(matched: number, items: Record<string, number>): Record<string, number> {
    return Object.fromEntries<number>([
      [ItemOutcome.Matched, matched],
      ...DISCREPANCIES.map((outcome): [string, number] => [outcome, items[outcome] ?? 0]),
    ]);
  }

  /** A payment the channel does not know is a forged or misrouted notification: one warn line each. */
  private warnDiscrepancies(claim: RunClaim, counts: Record<string, number>, missing: LocalRecord[]): void {
    for (const record of missing.slice(0, MAX_WARN_LINES)) {
      this.logger.warn(
        `${describeRun(claim)}: ${record.kind === 'PAYMENT' ? 'MISSING_CHANNEL' : 'REFUND_MISSING_CHANNEL'} ` +
          `transaction ${record.transactionId} order ${record.orderNo}${record.refundNo ? ` refund ${record.refundNo}` : ''} ` +
          `amount ${record.amount}: we recorded it, the channel's bill does not have it`,
      );
    }
    const total = DISCREPANCIES.reduce((sum, outcome) => sum + counts[outcome], 0);
    if (total > 0) {
      this.logger.warn(`${describeRun(claim)}: ${total} discrepancies: ${describeCounts(counts)}`);
    }
  }
}

function keyOf(record: { kind: string; transactionId: string; refundNo?: string | null }): string {
  return record.kind === 'REFUND' ? `REFUND ${record.refundNo}` : `PAYMENT ${record.transactionId}`;
}

function report(claim: RunClaim, status: RunStatus): RunReport {
  const { channel, merchantId, subMerchantId, billDate } = claim;
  return { channel, merchantId, subMerchantId, billDate, status };
}

/** "<channel> <account> <date>", the account "<merchant>/<sub-merchant>" for a sub-merchant's bill. */
function describeRun(claim: RunClaim): string {
  const account = claim.subMerchantId ? `${claim.merchantId}/${claim.subMerchantId}` : claim.merchantId;
  return `${claim.channel} ${account} ${claim.billDate}`;
}

export function describeCounts(counts: Record<string, number>): string {
  return Object.entries(counts)
    .map(([outcome, n]) => `${outcome}=${n}`)
    .join(' ');
}

function startedRun(
  channel: string,
  date: string,
  merchantId: string,
  subMerchantId: string,
  claim: RunClaim | undefined,
): StartedRun {
  return { channel, merchantId, ...(subMerchantId ? { subMerchantId } : {}), date, started: claim !== undefined };
}
