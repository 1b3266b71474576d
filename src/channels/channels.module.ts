import { Module } from '@nestjs/common';
import { ConfigModule, ConfigType, registerAs } from '@nestjs/config';
import { Clock, CLOCK } from '../domain/notification';
import { channelCallsConfig } from './channel-calls.config';
import { PAYMENT_CHANNELS } from './payment-channel';
import { PaymentChannels } from './payment-channels';
import { verificationClock } from './verification-clock';
import { CHANNEL_REGISTRATIONS } from './registered-channels';

const channelOptions = CHANNEL_REGISTRATIONS.map((r) =>
  registerAs(`channel.${r.channel}`, () => r.loadOptions(process.env) as object),
);

/** Builds every registered channel's adapter from its own options, under one token. */
@Module({
  imports: [ConfigModule.forFeature(channelCallsConfig), ...channelOptions.map((c) => ConfigModule.forFeature(c))],
  providers: [
    { provide: CLOCK, useValue: verificationClock },
    {
      provide: PAYMENT_CHANNELS,
      inject: [channelCallsConfig.KEY, CLOCK, ...channelOptions.map((c) => c.KEY)],
      useFactory: (calls: ConfigType<typeof channelCallsConfig>, clock: Clock, ...options: unknown[]) =>
        CHANNEL_REGISTRATIONS.map((r, i) => r.create(options[i], calls, clock)),
    },
    PaymentChannels,
  ],
  exports: [PaymentChannels],
})
export class ChannelsModule {}
