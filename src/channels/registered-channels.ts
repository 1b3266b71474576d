import { getConfigToken } from '@nestjs/config';
import { Channel } from '../domain/notification';
import { ConfigurationPart } from '../platform/config/env-validation';
import { readAccountsFile } from './accounts-file';
import { alipayChannel } from './alipay/alipay.registration';
import { channelCallsConfig, loadChannelCallsConfig } from './channel-calls.config';
import { ChannelRegistration } from './channel-registration';
import { unionpayChannel } from './unionpay/unionpay.registration';
import { wechatpayChannel } from './wechatpay/wechatpay.registration';

/** Every payment channel the service speaks: adding one is a folder of its own and a line here. */
export const CHANNEL_REGISTRATIONS: readonly ChannelRegistration[] = [wechatpayChannel, alipayChannel, unionpayChannel];

/** The channel ids the API accepts and documents (DTO enums, views, the OpenAPI document). */
export const REGISTERED_CHANNELS: readonly Channel[] = CHANNEL_REGISTRATIONS.map((r) => r.channel);

/** Every channel's payment methods (POST /payment-orders `method`), each name once. */
export const PAYMENT_METHODS: readonly string[] = [
  ...new Set(CHANNEL_REGISTRATIONS.flatMap((r) => r.paymentMethods ?? [])),
];

/** The channels' part of the configuration validateConfiguration checks at start; each load throws a ConfigurationError. */
export const CHANNEL_CONFIGURATION: readonly ConfigurationPart[] = [
  { token: channelCallsConfig.KEY, load: loadChannelCallsConfig },
  {
    load: (env) =>
      readAccountsFile(
        env,
        CHANNEL_REGISTRATIONS.map((r) => r.accounts),
      ),
  },
  ...CHANNEL_REGISTRATIONS.map((r) => ({
    token: getConfigToken(`channel.${r.channel}`),
    load: (env: NodeJS.ProcessEnv) => r.loadOptions(env),
  })),
];
