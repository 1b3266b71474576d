import { Module } from '@nestjs/common';
import { ConfigModule, ConfigType, registerAs } from '@nestjs/config';
import { Clock, CLOCK } from '../domain/notification';
import { ChannelBuild, CHANNEL_BUILDS } from './channel-builds';
import { AddedSubMerchant } from './channel-registration';
import { channelCallsConfig } from './channel-calls.config';
import { credentialFilesOf, withDirectoryKeys, withFileReplaced } from './credential-files';
import { PAYMENT_CHANNELS } from './payment-channel';
import { PaymentChannels } from './payment-channels';
import { verificationClock } from './verification-clock';
import { CHANNEL_REGISTRATIONS } from './registered-channels';

const channelOptions = CHANNEL_REGISTRATIONS.map((r) =>
  registerAs(`channel.${r.channel}`, () => r.loadOptions(process.env) as object),
);

/** The options with the merchant directory's accounts after the configured ones (every channel's options list its `accounts`). */
function withAccounts(options: unknown, accounts: readonly object[]): unknown {
  if (accounts.length === 0) return options;
  const base = options as { accounts: unknown[] };
  return { ...base, accounts: [...base.accounts, ...accounts] };
}

/**
 * Builds every registered channel's adapter from its own options, under one token; and keeps how
 * to build it again (CHANNEL_BUILDS), for when its key files change.
 */
@Module({
  imports: [ConfigModule.forFeature(channelCallsConfig), ...channelOptions.map((c) => ConfigModule.forFeature(c))],
  providers: [
    { provide: CLOCK, useValue: verificationClock },
    {
      provide: CHANNEL_BUILDS,
      inject: [channelCallsConfig.KEY, CLOCK, ...channelOptions.map((c) => c.KEY)],
      useFactory: (calls: ConfigType<typeof channelCallsConfig>, clock: Clock, ...options: unknown[]) =>
        CHANNEL_REGISTRATIONS.map((r, i): ChannelBuild => {
          const withAdded = (base: unknown, added: readonly AddedSubMerchant[]) =>
            added.length > 0 && r.withSubMerchants ? r.withSubMerchants(base, added) : base;
          return {
            channel: r.channel,
            section: r.accounts,
            files: credentialFilesOf(options[i], r.accounts.idField),
            takesSubMerchants: r.withSubMerchants !== undefined,
            build: (added = [], keys = [], accounts = []) =>
              r.create(
                withAdded(withDirectoryKeys(withAccounts(options[i], accounts), r.accounts.idField, keys), added),
                calls,
                clock,
              ),
            trial: (trialClock, added, replaced, keys = [], accounts = []) => {
              const inForce = withDirectoryKeys(withAccounts(options[i], accounts), r.accounts.idField, keys);
              const base = replaced ? withFileReplaced(inForce, r.accounts.idField, replaced) : inForce;
              return r.create(withAdded(base, added), calls, trialClock);
            },
          };
        }),
    },
    {
      provide: PAYMENT_CHANNELS,
      inject: [CHANNEL_BUILDS],
      useFactory: (builds: ChannelBuild[]) => builds.map((b) => b.build()),
    },
    PaymentChannels,
  ],
  exports: [PaymentChannels, CHANNEL_BUILDS],
})
export class ChannelsModule {}
