import { Injectable, Logger } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { ChannelCallOutcome } from '../domain/channel-api';
import { DomainError } from '../domain/domain-error';
import { PaymentOrderView } from '../order/dto/payment-order.view';
import { OrderStatus } from '../order/order-status';
import { PaymentOrder } from '../order/payment-order.entity';
import { PaymentOrderRepository } from '../order/payment-order.repository';
import { PaymentOrderService } from '../order/payment-order.service';
import { TransactionRunner } from '../platform/transaction/transaction.runner';
import { ChannelCallRepository } from './channel-call.repository';
import { TradeQueryService } from './trade-query.service';
import { TradeTarget, TradeTargets } from './trade-targets';

export class ChannelCloseView {
  @ApiProperty()
  channel: string;

  @ApiProperty()
  merchantId: string;

  @ApiProperty({ enum: ['CLOSED', 'NOT_FOUND', 'UNAVAILABLE', 'NOT_APPLICABLE'] })
  outcome: 'CLOSED' | 'NOT_FOUND' | 'UNAVAILABLE' | 'NOT_APPLICABLE';
}

export class ClosedOrderView extends PaymentOrderView {
  @ApiProperty({ type: [ChannelCloseView], description: 'What each account of the channel answered the close' })
  channelClose: ChannelCloseView[];
}

/**
 * Closes an order at its channel before closing it here, so that the buyer can no longer pay the
 * open trade: a local close alone is what turns a late payment into a PAID_AFTER_CLOSE refund.
 */
@Injectable()
export class TradeCloseService {
  private readonly logger = new Logger(TradeCloseService.name);

  constructor(
    private readonly orders: PaymentOrderService,
    private readonly orderRows: PaymentOrderRepository,
    private readonly transactions: TransactionRunner,
    private readonly targets: TradeTargets,
    private readonly queries: TradeQueryService,
    private readonly calls: ChannelCallRepository,
  ) {}

  async close(orderNo: string): Promise<{ order: PaymentOrder; channelClose: ChannelCloseView[] }> {
    const order = await this.orders.get(orderNo);
    if (order.status !== OrderStatus.WaitPay) return this.alreadyClosed(order);
    const channelClose: ChannelCloseView[] = [];
    for (const target of this.targets.of(order)) {
      channelClose.push({ ...describeTarget(target), outcome: await this.closeAt(orderNo, target) });
    }
    if (!(await this.transactions.run(() => this.orderRows.closeIfWaiting(orderNo)))) {
      // Paid (or closed) here while the channel was being asked: the order row has the last word.
      return this.alreadyClosed(await this.orders.get(orderNo));
    }
    return { order: await this.orders.get(orderNo), channelClose };
  }

  /** Closes the trade at one account; throws what must stop the local close (paid there, or no answer). */
  private async closeAt(orderNo: string, target: TradeTarget): Promise<ChannelCloseView['outcome']> {
    if (target.unavailable) {
      this.logger.warn(`order ${orderNo}: closed here only, not at ${target.channel.channel}: ${target.unavailable}`);
      await this.calls.record(orderNo, target, 'CLOSE', ChannelCallOutcome.Unavailable, target.unavailable);
      return 'UNAVAILABLE';
    }
    const result = await target.channel.closeTrade({
      orderNo,
      merchantId: target.merchantId,
      subMerchantId: target.subMerchantId,
      channelOrderTime: target.channelOrderTime,
    });
    await this.calls.record(orderNo, target, 'CLOSE', result.outcome, result.detail);
    if (result.outcome === 'FAILED') throw unreachable(target, result.detail);
    if (result.outcome !== 'PAID') return result.outcome;
    return this.applyPaidTrade(orderNo, target);
  }

  /** The channel would not close a trade it says is no longer open: ask it what happened. */
  private async applyPaidTrade(orderNo: string, target: TradeTarget): Promise<'CLOSED' | 'NOT_FOUND'> {
    const report = await this.queries.queryTrade(orderNo, target);
    if (report.result.outcome === 'FAILED' || report.result.outcome === 'FOREIGN') {
      throw unreachable(target, report.result.detail);
    }
    if (report.applied) {
      throw new DomainError(
        'OrderConflict',
        `order ${orderNo} was paid at the channel (${target.channel.channel} transaction ` +
          `${report.result.outcome === 'PAID' ? report.result.payment.transactionId : ''}: ${report.applied}); it was not closed`,
      );
    }
    // Closed at the channel already: a channel may answer a closed trade as one it cannot close.
    return report.result.outcome === 'NOT_FOUND' ? 'NOT_FOUND' : 'CLOSED';
  }

  /** Closing a closed order again changes nothing and answers as the close did; other statuses cannot close. */
  private async alreadyClosed(order: PaymentOrder): Promise<{ order: PaymentOrder; channelClose: ChannelCloseView[] }> {
    if (order.status !== OrderStatus.Closed) {
      throw new DomainError('OrderConflict', `order ${order.orderNo} is ${order.status} and cannot be closed`);
    }
    const closes = await this.calls.closesOf(order.orderNo);
    return {
      order,
      channelClose: closes.map(
        (c) => ({ ...c, outcome: c.outcome === 'PAID' ? 'CLOSED' : c.outcome }) as ChannelCloseView,
      ),
    };
  }
}

function describeTarget(target: TradeTarget): Omit<ChannelCloseView, 'outcome'> {
  return { channel: target.channel.channel, merchantId: target.merchantId };
}

function unreachable(target: TradeTarget, detail: string | undefined): DomainError {
  return new DomainError(
    'ChannelUnavailable',
    `the order was not closed: ${target.channel.channel} (${target.merchantId}) could not confirm the close ` +
      `(${detail ?? 'no answer'}); retry later`,
  );
}
