import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { channelCallsConfig } from './channel-calls.config';
import { NotifyEndpoint, PAYMENT_CHANNELS, PaymentChannel } from './payment-channel';

/** The registered channels, looked up by id or by their notification path. */
@Injectable()
export class PaymentChannels implements OnModuleInit {
  private readonly logger = new Logger(PaymentChannels.name);

  private readonly endpointsByPath: ReadonlyMap<string, NotifyEndpoint>;

  constructor(
    @Inject(PAYMENT_CHANNELS) readonly all: PaymentChannel[],
    @Inject(channelCallsConfig.KEY) private readonly calls: ConfigType<typeof channelCallsConfig>,
  ) {
    const byPath = new Map<string, NotifyEndpoint>();
    for (const endpoint of all.flatMap((c) => [c, ...(c.otherNotifyEndpoints ?? [])])) {
      if (!byPath.has(endpoint.notifyPath)) byPath.set(endpoint.notifyPath, endpoint);
    }
    this.endpointsByPath = byPath;
  }

  /** The longest one channel API call may take. */
  get callTimeoutMs(): number {
    return this.calls.requestTimeoutMs;
  }

  onModuleInit(): void {
    for (const channel of this.all.filter((c) => !c.enabled)) {
      this.logger.warn(`${channel.channel} notifications are disabled: ${channel.disabledHint}`);
    }
  }

  /** A Channel's adapter, or a name from outside (a URL, a row) looked up: any string may be asked. */
  get(channel: string): PaymentChannel | undefined {
    return this.all.find((c) => c.channel === channel);
  }

  /** The endpoint (a channel, or another dialect of one) whose notifications arrive at POST /notify/<notifyPath>. */
  byNotifyPath(notifyPath: string): NotifyEndpoint | undefined {
    return this.endpointsByPath.get(notifyPath);
  }

  /** Every (channel, account) whose API can be called: where an order of unknown channel is asked. */
  apiTargets(): Array<{ channel: PaymentChannel; merchantId: string }> {
    return this.all.flatMap((channel) => channel.apiAccounts().map((merchantId) => ({ channel, merchantId })));
  }
}
