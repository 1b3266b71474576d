import { Injectable } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter } from 'prom-client';
import { DataSource } from 'typeorm';
import { CHANNEL_CALLS_TOTAL } from '../platform/metrics/metrics.module';
import { TradeTarget } from './trade-targets';

export type ChannelRequest = 'QUERY' | 'CLOSE';

/** Every trade query and close, with its answer: the order view shows them, the metric counts them. */
@Injectable()
export class ChannelCallRepository {
  constructor(
    private readonly db: DataSource,
    @InjectMetric(CHANNEL_CALLS_TOTAL) private readonly calls: Counter<string>,
  ) {}

  async record(
    orderNo: string,
    target: TradeTarget,
    request: ChannelRequest,
    outcome: string,
    detail?: string,
    transactionId?: string,
  ): Promise<void> {
    this.calls.inc({ channel: target.channel.channel, request, outcome });
    await this.db.query(
      `INSERT INTO payment_channel_call
         (order_no, channel, merchant_id, request, outcome, transaction_id, detail, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        orderNo,
        target.channel.channel,
        target.merchantId,
        request,
        outcome,
        transactionId ?? null,
        detail?.slice(0, 500) ?? null,
        new Date(),
      ],
    );
  }

  /** The closes that let an order close here, as first answered: a second close answers the same. */
  async closesOf(orderNo: string): Promise<Array<{ channel: string; merchantId: string; outcome: string }>> {
    const rows: Array<{ channel: string; merchant_id: string; outcome: string }> = await this.db.query(
      `SELECT channel, merchant_id, outcome FROM payment_channel_call
       WHERE order_no = ? AND request = 'CLOSE' AND outcome IN ('CLOSED', 'NOT_FOUND', 'UNAVAILABLE', 'NOT_APPLICABLE', 'PAID')
       ORDER BY id`,
      [orderNo],
    );
    const latest = new Map(rows.map((r) => [`${r.channel}\n${r.merchant_id}`, r]));
    return [...latest.values()].map((r) => ({ channel: r.channel, merchantId: r.merchant_id, outcome: r.outcome }));
  }
}
