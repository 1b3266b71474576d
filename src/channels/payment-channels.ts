import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { channelCallsConfig } from './channel-calls.config';
import { NotifyEndpoint, PAYMENT_CHANNELS, PaymentChannel } from './payment-channel';

/**
 * The registered channels, looked up by id or by their notification path. An adapter is replaced
 * as a whole when its key files change (replace): a delivery or call that already holds the old one
 * ends with it, the next one gets the new one.
 */
@Injectable()
export class PaymentChannels implements OnModuleInit {
  private readonly logger = new Logger(PaymentChannels.name);

  private adapters: readonly PaymentChannel[];
  private endpointsByPath: ReadonlyMap<string, NotifyEndpoint>;

  constructor(
    @Inject(PAYMENT_CHANNELS) adapters: PaymentChannel[],
    @Inject(channelCallsConfig.KEY) private readonly calls: ConfigType<typeof channelCallsConfig>,
  ) {
    this.adapters = adapters;
    this.endpointsByPath = endpointsOf(adapters);
  }

  get all(): readonly PaymentChannel[] {
    return this.adapters;
  }

  /** Puts a newly built adapter in the place of its channel's (synchronously: no lookup sees half of it). */
  replace(adapter: PaymentChannel): void {
    const adapters = this.adapters.map((c) => (c.channel === adapter.channel ? adapter : c));
    const endpoints = endpointsOf(adapters);
    this.adapters = adapters;
    this.endpointsByPath = endpoints;
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

function endpointsOf(adapters: readonly PaymentChannel[]): ReadonlyMap<string, NotifyEndpoint> {
  const byPath = new Map<string, NotifyEndpoint>();
  for (const endpoint of adapters.flatMap((c) => [c, ...(c.otherNotifyEndpoints ?? [])])) {
    if (!byPath.has(endpoint.notifyPath)) byPath.set(endpoint.notifyPath, endpoint);
  }
  return byPath;
}
