import { Channel } from '../domain/notification';
import { readAccountsFile } from './accounts-file';
import { alipayChannel } from './alipay/alipay.registration';
import { loadChannelCallsConfig } from './channel-calls.config';
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

/** Each check validateConfiguration runs at start for the channels; each throws a ConfigurationError. */
export const CHANNEL_CONFIGURATION: ReadonlyArray<(env: NodeJS.ProcessEnv) => unknown> = [
  loadChannelCallsConfig,
  (env) =>
    readAccountsFile(
      env,
      CHANNEL_REGISTRATIONS.map((r) => r.accounts),
    ),
  ...CHANNEL_REGISTRATIONS.map((r) => (env: NodeJS.ProcessEnv) => r.loadOptions(env)),
];
