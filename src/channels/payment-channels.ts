import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { Channel } from '../domain/notification';
import { channelCallsConfig } from './channel-calls.config';
import { NotifyEndpoint, PAYMENT_CHANNELS, PaymentChannel } from './payment-channel';

/** The registered channels, looked up by id or by their notification path. */
@Injectable()
export class PaymentChannels implements OnModuleInit {
  private readonly logger = new Logger(PaymentChannels.name);

  constructor(
    @Inject(PAYMENT_CHANNELS) readonly all: PaymentChannel[],
    @Inject(channelCallsConfig.KEY) private readonly calls: ConfigType<typeof channelCallsConfig>,
  ) {}

  /** The longest one channel API call may take. */
  get callTimeoutMs(): number {
    return this.calls.requestTimeoutMs;
  }

  onModuleInit(): void {
    for (const channel of this.all.filter((c) => !c.enabled)) {
      this.logger.warn(`${channel.channel} notifications are disabled: ${channel.disabledHint}`);
    }
  }

  get(channel: Channel | string): PaymentChannel | undefined {
    return this.all.find((c) => c.channel === channel);
  }

  /** The endpoint (a channel, or another dialect of one) whose notifications arrive at POST /notify/<notifyPath>. */
  byNotifyPath(notifyPath: string): NotifyEndpoint | undefined {
    return this.all
      .flatMap((c): readonly NotifyEndpoint[] => [c, ...(c.otherNotifyEndpoints ?? [])])
      .find((e) => e.notifyPath === notifyPath);
  }

  /** Every (channel, account) whose API can be called: where an order of unknown channel is asked. */
  apiTargets(): Array<{ channel: PaymentChannel; merchantId: string }> {
    return this.all.flatMap((channel) => channel.apiAccounts().map((merchantId) => ({ channel, merchantId })));
  }
}
