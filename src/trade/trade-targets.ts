import { Injectable } from '@nestjs/common';
import { PaymentChannel } from '../channels/payment-channel';
import { PaymentChannels } from '../channels/payment-channels';

/** One account of one channel where an order's trade may live. */
export interface TradeTarget {
  channel: PaymentChannel;
  merchantId: string;
  /** The sub-merchant the order is for (a service provider's account), when it names one. */
  subMerchantId?: string;
  /** The time the order was sent to the channel, when it was registered with it. */
  channelOrderTime?: string;
  /** Why its API cannot be called (no merchant/app key), or undefined when it can. */
  unavailable?: string;
}

/**
 * Where to ask about an order: the channel (and account) it was registered with, or, when it
 * names none, every account of every enabled channel.
 */
@Injectable()
export class TradeTargets {
  constructor(private readonly channels: PaymentChannels) {}

  of(order: {
    channel: string | null;
    merchantId: string | null;
    subMerchantId?: string | null;
    channelOrderTime?: string | null;
  }): TradeTarget[] {
    const channels = order.channel ? [this.channels.get(order.channel)] : this.channels.all;
    return channels
      .filter((channel): channel is PaymentChannel => channel?.enabled === true)
      .flatMap((channel) =>
        (order.merchantId ? [order.merchantId] : channel.accountIds()).map((merchantId) => ({
          channel,
          merchantId,
          ...(order.subMerchantId ? { subMerchantId: order.subMerchantId } : {}),
          ...(order.channelOrderTime ? { channelOrderTime: order.channelOrderTime } : {}),
          unavailable: channel.apiUnavailableReason(merchantId),
        })),
      );
  }
}
