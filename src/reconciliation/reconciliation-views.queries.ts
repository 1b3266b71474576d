import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ReconciliationItem } from './reconciliation-item.entity';
import { ReconciliationRun } from './reconciliation-run.entity';

/** Items listed per run in the day view; the counts are always complete. */
export const MAX_ITEMS = 1000;

export interface RunView {
  channel: string;
  merchantId: string;
  /** The sub-merchant whose bill it is (a service provider's account); absent for the account's own. */
  subMerchantId?: string;
  date: string;
  status: string;
  attempts: number;
  billLines: number;
  counts: Record<string, number> | null;
  detail: string | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  nextAttemptAt: Date | null;
}

export interface ItemView {
  outcome: string;
  kind: string;
  transactionId: string | null;
  orderNo: string | null;
  refundNo: string | null;
  channelAmount: number | null;
  localAmount: number | null;
  billLine: number | null;
  resolution: string | null;
  detail: string | null;
}

/** The admin API's reads of runs and their items. */
@Injectable()
export class ReconciliationViews {
  constructor(private readonly db: DataSource) {}

  async list(from: string, to: string): Promise<RunView[]> {
    const runs = await this.db
      .getRepository(ReconciliationRun)
      .createQueryBuilder('r')
      .where('r.billDate BETWEEN :from AND :to', { from, to })
      .orderBy('r.billDate', 'DESC')
      .addOrderBy('r.channel')
      .addOrderBy('r.merchantId')
      .addOrderBy('r.subMerchantId')
      .limit(1000)
      .getMany();
    return runs.map(toRunView);
  }

  async day(channel: string, date: string, merchantId?: string): Promise<Array<RunView & { items: ItemView[] }>> {
    const runs = await this.db
      .getRepository(ReconciliationRun)
      .findBy({ channel, billDate: date, ...(merchantId ? { merchantId } : {}) });
    return Promise.all(
      runs.map(async (run) => {
        const items = await this.db
          .getRepository(ReconciliationItem)
          .find({ where: { runId: run.id }, order: { id: 'ASC' }, take: MAX_ITEMS });
        return { ...toRunView(run), items: items.map(toItemView) };
      }),
    );
  }
}

function toRunView(run: ReconciliationRun): RunView {
  return {
    channel: run.channel,
    merchantId: run.merchantId,
    ...(run.subMerchantId ? { subMerchantId: run.subMerchantId } : {}),
    date: run.billDate,
    status: run.status,
    attempts: run.attempts,
    billLines: run.billLines,
    counts: run.counts ? (JSON.parse(run.counts) as Record<string, number>) : null,
    detail: run.detail,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    nextAttemptAt: run.nextAttemptAt,
  };
}

function toItemView(item: ReconciliationItem): ItemView {
  const { outcome, kind, transactionId, orderNo, refundNo, channelAmount, localAmount, billLine, resolution, detail } =
    item;
  return { outcome, kind, transactionId, orderNo, refundNo, channelAmount, localAmount, billLine, resolution, detail };
}
