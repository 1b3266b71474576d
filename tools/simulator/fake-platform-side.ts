/**
 * A channel's side of `simulate platform` on the shared fake platform (FakePlatform, which serves WeChat Pay and
 * Alipay): the trades `simulate pay` tells it about, the trades the service created, the refunds it asked for.
 */
import type { ChannelPlatform, SimulatedChannel, ToldTrade } from './channel-simulator';
import type { FakeChannel, FakePlatform, FakeTrade } from './fake-platform';

interface KnownTrade {
  orderNo: string;
  transactionId: string;
  amount: number;
}

export interface FakePlatformSideOptions {
  name: SimulatedChannel;
  /** The channel's id at the fake platform. */
  id: FakeChannel;
  description: string;
  /** The channel's id of a trade that the service created, when it has one before the payment (Alipay's trade_no). */
  createdTransactionId?(trade: FakeTrade): string | undefined;
  /** The channel's id of a refund it made (WeChat's refund_id). */
  refundId?(fake: FakePlatform, refundNo: string): string | undefined;
  settle?: ChannelPlatform['settle'];
}

export function fakePlatformSide(fake: FakePlatform, options: FakePlatformSideOptions): ChannelPlatform {
  const trades = new Map<string, KnownTrade>();
  return {
    description: options.description,
    recordTrade(trade: ToldTrade): boolean {
      const { orderNo, transactionId, amount } = trade;
      if (typeof orderNo !== 'string' || !orderNo || typeof transactionId !== 'string' || !transactionId) return false;
      if (!Number.isSafeInteger(amount)) return false;
      const subMchid = typeof trade.subMchid === 'string' ? trade.subMchid : undefined;
      trades.set(transactionId, { orderNo, transactionId, amount: amount as number });
      fake.payTrade({
        channel: options.id,
        outTradeNo: orderNo,
        amount: amount as number,
        transactionId,
        subMerchantId: subMchid,
      });
      return true;
    },
    describeCreated(orderNo: string): object | undefined {
      const trade = fake.trade(options.id, orderNo);
      if (!trade?.created) return undefined;
      return {
        orderNo,
        amount: trade.amount,
        state: trade.state,
        merchantId: trade.merchantId,
        subMchid: trade.subMerchantId,
        tradeType: trade.created.tradeType,
        notifyUrl: trade.created.notifyUrl,
        transactionId: options.createdTransactionId?.(trade),
      };
    },
    describeRefund(refundNo: string): object | undefined {
      const call = fake.calls
        .filter((c) => c.channel === options.id && c.refundNo === refundNo && !c.behaviour.startsWith('reject'))
        .pop();
      if (!call) return undefined;
      const trade = trades.get(call.transactionId);
      return {
        channel: options.name,
        refundNo,
        transactionId: call.transactionId,
        amount: call.amount,
        orderNo: trade?.orderNo,
        total: trade?.amount,
        channelRefundId: options.refundId?.(fake, refundNo),
        subMchid: call.subMerchantId,
      };
    },
    settle: options.settle,
  };
}
