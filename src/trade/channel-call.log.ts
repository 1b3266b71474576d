import { Injectable } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter } from 'prom-client';
import { DataSource } from 'typeorm';
import { CHANNEL_CALLS_TOTAL } from '../metrics/metrics.module';
import { TradeTarget } from './trade-targets';

export type ChannelRequest = 'QUERY' | 'CLOSE';

/** Every trade query and close, with its answer: the order view shows them, the metric counts them. */
@Injectable()
export class ChannelCallLog {
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
}
