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
  /** The methods POST /payment-orders can create a payment with (`method`); none when payments are not created here. */
  readonly paymentMethods?: readonly string[];
  /** Its environment variables and accounts-file section, validated; throws a ConfigurationError naming each bad one. */
  loadOptions(env: NodeJS.ProcessEnv): Options;
  /** Its section of PAYMENT_ACCOUNTS_FILE. */
  readonly accounts: AnyAccountsSection;
  /** The adapter, built at start from its options, and again when its key files or its sub-merchants change. */
  create(options: Options, calls: ChannelCallsConfig, clock: Clock): PaymentChannel;
  /**
   * Its options with the sub-merchants operators added at runtime (the merchant directory) beside a
   * service provider's own; absent for a channel without sub-merchants. Throws a ConfigurationError
   * for one it cannot take.
   */
  withSubMerchants?(options: Options, added: readonly AddedSubMerchant[]): Options;
}

/** A sub-merchant the merchant directory adds to a service provider's account. */
export interface AddedSubMerchant {
  account: string;
  subMerchantId: string;
  /** The sub-merchant's own app (sub_appid), which its notifications must then name. */
  subAppId?: string;
}
