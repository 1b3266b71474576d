import { Injectable, Logger } from '@nestjs/common';
import { TradeQueryResult } from '../domain/channel-api';
import { Settlement } from '../settlement/settlement.service';
import { ChannelCallRepository } from './channel-call.repository';
import { TradeTarget } from './trade-targets';

/** What one query found, and, for a paid trade, what the payment pipeline made of it. */
export interface TradeQueryReport {
  target: TradeTarget;
  result: TradeQueryResult;
  /** PAID, DUPLICATE or an anomaly type, when the answer was a payment. */
  applied?: string;
}

/**
 * Asks a channel whether an order's trade was paid. A paid answer goes through the same settlement
 * use case as a notification, in one transaction: the same claim on (channel, transaction id), the same
 * compare-and-set, outbox and anomaly rules. So a query racing a notification applies once, and
 * a notification arriving later is a duplicate.
 */
@Injectable()
export class TradeQueryService {
  private readonly logger = new Logger(TradeQueryService.name);

  constructor(
    private readonly settlement: Settlement,
    private readonly calls: ChannelCallRepository,
  ) {}

  async queryTrade(orderNo: string, target: TradeTarget): Promise<TradeQueryReport> {
    const result = await target.channel.queryTrade({
      orderNo,
      merchantId: target.merchantId,
      subMerchantId: target.subMerchantId,
      channelOrderTime: target.channelOrderTime,
    });
    if (result.outcome !== 'PAID') {
      if (result.outcome === 'FOREIGN') {
        this.logger.warn(
          `order ${orderNo}: ${target.channel.channel} answered about another account: ${result.detail}`,
        );
      }
      await this.calls.record(orderNo, target, 'QUERY', result.outcome, result.detail);
      return { target, result };
    }
    let applied: string;
    try {
      applied = await this.settlement.settle(result.payment, { source: 'QUERY', receivedAt: new Date() });
    } catch (error) {
      await this.calls.record(
        orderNo,
        target,
        'QUERY',
        'FAILED',
        `applying the payment failed: ${(error as Error).message}`,
      );
      throw error;
    }
    await this.calls.record(orderNo, target, 'QUERY', 'PAID', applied, result.payment.transactionId);
    return { target, result, applied };
  }
}
