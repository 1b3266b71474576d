import { Injectable, Logger } from '@nestjs/common';
import { Propagation, Transactional } from '@nestjs-cls/transactional';
import { AccountMaterial, accountIdOf, MaterialError } from '../../channels/account-material';
import { ChannelBuild } from '../../channels/channel-builds';
import { PaymentChannels } from '../../channels/payment-channels';
import { DomainError } from '../../domain/domain-error';
import { TransactionRunner } from '../../platform/transaction/transaction.runner';
import { DirectoryAccounts, factsOf } from './directory-accounts';
import { targetKey } from './directory-state';
import { MerchantAction, MerchantChange } from './merchant-change.entity';
import { MerchantChangeRepository } from './merchant-change.repository';
import { Alongside } from './merchant-changes';
import { MerchantDirectory } from './merchant-directory';
import { MerchantSecretKeys } from './merchant-secret-keys';
import { MerchantSecretRepository } from './merchant-secret.repository';
import { seal, SecretKeyRing, secretBinding, UnsealError, unseal } from './secret-sealing';

/** What a rewrap of the directory's secrets did: how many it sealed under the current key, and how many it could not open. */
export interface RewrapReport {
  keyId: string;
  rewrapped: number;
  /** Rewrapped by another rewrap at the same time (its compare-and-set won). */
  alreadyDone: number;
  /** Sealed under a key the file no longer holds, or not authentic: left as they are (the log names them). */
  failed: number;
}

/**
 * Accounts added and changed through the merchant directory. An account is its channel's
 * accounts-file entry with its files' content (AccountMaterial), checked as the file's entries are
 * and by building the channel with it; its secrets are sealed (AES-256-GCM, MERCHANT_SECRETS_KEYS_FILE)
 * into merchant_secret, and the merchant_change row keeps its public facts. Adding an account
 * stops no payment and applies at once; replacing a directory account's entry or files is a
 * proposal another admin approves (MerchantChanges.approve). The configuration's accounts are
 * changed in the configuration only.
 */
@Injectable()
export class MerchantAccountChanges {
  private readonly logger = new Logger(MerchantAccountChanges.name);

  constructor(
    private readonly changes: MerchantChangeRepository,
    private readonly secrets: MerchantSecretRepository,
    private readonly keys: MerchantSecretKeys,
    private readonly directory: MerchantDirectory,
    private readonly accounts: DirectoryAccounts,
    private readonly channels: PaymentChannels,
    private readonly transactions: TransactionRunner,
  ) {}

  /**
   * A new account of the channel, at once: its id must be in neither the configuration nor the
   * directory. Of concurrent adds of one id, on any replicas, one commits (merchant_added's key);
   * the others write nothing and are a 409 as well.
   */
  @Transactional(Propagation.Never)
  async add(
    channel: string,
    material: AccountMaterial,
    operatorId: string,
    alongside?: Alongside,
  ): Promise<MerchantChange> {
    await this.directory.refresh();
    const build = this.buildOf(channel);
    const ring = await this.keys.required();
    const account = this.tried(build, material, (named) => {
      if (this.inDirectory(channel, named) || this.channels.get(channel)?.accountIds().includes(named)) {
        throw new DomainError('MerchantConflict', `account ${named} of ${channel} exists already`);
      }
    });
    return this.write(ring, MerchantAction.AccountAdded, channel, account, material, operatorId, alongside);
  }

  /** A proposal to replace a directory account's entry and files: nothing changes until another admin approves it. */
  @Transactional(Propagation.Never)
  async proposeChange(
    target: { channel: string; account: string },
    material: AccountMaterial,
    operatorId: string,
    alongside?: Alongside,
  ): Promise<MerchantChange> {
    await this.directory.refresh();
    const { channel, account } = target;
    const build = this.buildOf(channel);
    if (!this.inDirectory(channel, account)) {
      if (this.channels.get(channel)?.accountIds().includes(account)) {
        throw new DomainError(
          'MerchantConflict',
          `account ${account} of ${channel} comes from the configuration (the environment or PAYMENT_ACCOUNTS_FILE): change it there, the directory changes only the accounts it added`,
        );
      }
      throw new DomainError('NotFound', `no account ${account} of channel ${channel}`);
    }
    const ring = await this.keys.required();
    this.tried(build, material, (named) => {
      if (named !== account) {
        throw new DomainError(
          'MalformedRequest',
          `entry.${build.section.idField} must be ${account}, the account changed`,
        );
      }
    });
    return this.write(ring, MerchantAction.AccountChangeProposed, channel, account, material, operatorId, alongside);
  }

  /**
   * Every secret not sealed under the keys file's first key sealed again under it, each under a
   * compare-and-set on its old key id, in one transaction with the audit row.
   */
  @Transactional(Propagation.Never)
  async rewrap(
    operatorId: string,
    expectedKeyId: string | undefined,
    alongside?: (report: RewrapReport) => Promise<void>,
  ): Promise<RewrapReport> {
    const ring = await this.keys.required();
    if (expectedKeyId !== undefined && expectedKeyId !== ring.current.id) {
      throw new DomainError(
        'MerchantConflict',
        `the first key of MERCHANT_SECRETS_KEYS_FILE is ${ring.current.id} on this replica, not ${expectedKeyId}: nothing rewrapped`,
      );
    }
    return this.transactions.run(async () => {
      const report: RewrapReport = { keyId: ring.current.id, rewrapped: 0, alreadyDone: 0, failed: 0 };
      for (const row of await this.secrets.notUnder(ring.current.id)) {
        const binding = secretBinding(row.channel, row.accountId);
        let plaintext: Buffer;
        try {
          plaintext = unseal(ring, row, binding);
        } catch (error) {
          if (!(error instanceof UnsealError)) throw error;
          this.logger.error(
            `merchant secret ${row.id} (${row.channel} ${row.accountId}) not rewrapped: ${error.message}`,
          );
          report.failed++;
          continue;
        }
        if (await this.secrets.replaceIfUnder(row.id, row.keyId, seal(ring, plaintext, binding))) report.rewrapped++;
        else report.alreadyDone++;
      }
      this.logger.log(
        `merchant secrets rewrapped under ${ring.current.id} by ${operatorId}: ${report.rewrapped} rewrapped, ${report.alreadyDone} by another, ${report.failed} failed`,
      );
      await alongside?.(report);
      return report;
    });
  }

  private async write(
    ring: SecretKeyRing,
    action: MerchantAction,
    channel: string,
    account: string,
    material: AccountMaterial,
    operatorId: string,
    alongside?: Alongside,
  ): Promise<MerchantChange> {
    const plaintext = Buffer.from(JSON.stringify({ entry: material.entry, files: material.files ?? {} }), 'utf8');
    const sealed = seal(ring, plaintext, secretBinding(channel, account));
    return this.transactions.run(async () => {
      const secretId = await this.secrets.insert(sealed);
      const change = await this.changes.append({
        channel,
        accountId: account,
        subMerchantId: '',
        action,
        secretId,
        accountFacts: JSON.stringify(factsOf({ entry: material.entry, files: material.files ?? {} })),
        operatorId,
      });
      // The check above is the directory read before: the database's key decides between concurrent adds.
      if (action === MerchantAction.AccountAdded && !(await this.changes.claimAdded(change))) {
        throw new DomainError('MerchantConflict', `account ${account} of ${channel} exists already`);
      }
      await alongside?.(change);
      return change;
    });
  }

  private buildOf(channel: string): ChannelBuild {
    const build = this.accounts.build(channel);
    if (!build) throw new DomainError('NotFound', `no channel ${channel}`);
    return build;
  }

  /**
   * The id of the account the material makes, once `accepted` (a check of that id) passed and the
   * channel built with it. The decrypted files it took are deleted whatever the outcome: they are
   * written again on every replica that applies the account.
   */
  private tried(build: ChannelBuild, material: AccountMaterial, accepted: (account: string) => void): string {
    try {
      const option = this.checked(build, material);
      const account = accountIdOf(build.section, material);
      accepted(account);
      this.builds(build, account, option);
      return account;
    } finally {
      this.accounts.sweep();
    }
  }

  /** The material as the channel's account: a 400 naming the field the accounts file's validator names. */
  private checked(build: ChannelBuild, material: AccountMaterial): object {
    try {
      return this.accounts.accountOf(build, material);
    } catch (error) {
      if (error instanceof MaterialError) throw new DomainError('MalformedRequest', error.message);
      throw error;
    }
  }

  /** The channel built with the account: a 400 when it refuses it (a file that is no key, a certificate outside its chain). */
  private builds(build: ChannelBuild, account: string, option: object): void {
    try {
      this.accounts.check(build, account, option);
    } catch (error) {
      const reason = this.accounts.inRequestTerms((error as Error).message);
      throw new DomainError('MalformedRequest', `the account is refused: ${reason}`);
    }
  }

  private inDirectory(channel: string, account: string): boolean {
    return this.directory.current.accounts.has(targetKey(channel, account, ''));
  }
}
