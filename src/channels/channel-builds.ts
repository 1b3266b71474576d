import { Channel, Clock } from '../domain/notification';
import { AnyAccountsSection } from './accounts-file';
import { AddedSubMerchant } from './channel-registration';
import { CredentialFile, DirectoryKeyFile, ReplacedFile } from './credential-files';
import { PaymentChannel } from './payment-channel';

/** How a channel's adapter is built from its options, again whenever its key files or its sub-merchants change. */
export interface ChannelBuild {
  readonly channel: Channel;
  /** The keys, certificates and chains its options name. */
  readonly files: readonly CredentialFile[];
  /** Its section of PAYMENT_ACCOUNTS_FILE: what an account added through the merchant directory is checked against. */
  readonly section: AnyAccountsSection;
  /** Whether it takes sub-merchants from the merchant directory (a service provider's). */
  readonly takesSubMerchants: boolean;
  /**
   * A new adapter, every file read and checked again, with the sub-merchants the directory added
   * and the platform keys it activated (in place of an account's key file, or beside the key in
   * force during an overlap window), and the accounts it added (each its section's account, its
   * files written by the directory), beside the configured ones; throws a ConfigurationError
   * naming the file and what is wrong.
   */
  build(
    added?: readonly AddedSubMerchant[],
    keys?: readonly DirectoryKeyFile[],
    accounts?: readonly object[],
  ): PaymentChannel;
  /**
   * An adapter for a dry run, never put in place: verifying at `clock`'s time (a stored delivery's),
   * with the directory's keys and accounts in force, and one key file replaced when told (a candidate key).
   */
  trial(
    clock: Clock,
    added: readonly AddedSubMerchant[],
    replaced?: ReplacedFile,
    keys?: readonly DirectoryKeyFile[],
    accounts?: readonly object[],
  ): PaymentChannel;
}

export const CHANNEL_BUILDS = Symbol('CHANNEL_BUILDS');
