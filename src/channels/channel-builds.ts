import { Channel } from '../domain/notification';
import { CredentialFile } from './credential-files';
import { PaymentChannel } from './payment-channel';

/** How a channel's adapter is built from its options, again whenever its key files change. */
export interface ChannelBuild {
  readonly channel: Channel;
  /** The keys, certificates and chains its options name. */
  readonly files: readonly CredentialFile[];
  /** A new adapter, every file read and checked again; throws a ConfigurationError naming the file and what is wrong. */
  build(): PaymentChannel;
}

export const CHANNEL_BUILDS = Symbol('CHANNEL_BUILDS');
