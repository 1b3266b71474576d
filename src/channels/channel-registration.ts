import { Channel, Clock } from '../domain/notification';
import { AnyAccountsSection } from './accounts-file';
import { ChannelCallsConfig } from './channel-calls.config';
import { PaymentChannel } from './payment-channel';

/**
 * Everything the service needs to know of a channel, declared in the channel's own folder; the
 * registration list (registered-channels.ts) holds one of these per channel.
 */
export interface ChannelRegistration<Options = unknown> {
  readonly channel: Channel;
  /** Its environment variables and accounts-file section, validated; throws a ConfigurationError naming each bad one. */
  loadOptions(env: NodeJS.ProcessEnv): Options;
  /** Its section of PAYMENT_ACCOUNTS_FILE. */
  readonly accounts: AnyAccountsSection;
  /** The adapter, built once at start from its options. */
  create(options: Options, calls: ChannelCallsConfig, clock: Clock): PaymentChannel;
}
