import { Injectable } from '@nestjs/common';
import { Propagation, Transactional } from '@nestjs-cls/transactional';
import { PaymentChannels } from '../../channels/payment-channels';
import { DomainError } from '../../domain/domain-error';
import { ChannelKeyFiles } from '../credentials/channel-key-files';
import { MerchantAction, MerchantChange, MerchantDecision, PROPOSALS } from './merchant-change.entity';
import { ActivatedKey, keyTarget, targetKey } from './directory-state';
import { fingerprintOf } from './platform-key-dry-run';
import { MerchantChangeRepository } from './merchant-change.repository';
import { DIRECTORY_POLL_MS, MerchantDirectory } from './merchant-directory';
import { TransactionRunner } from '../../platform/transaction/transaction.runner';

/** Written in the change's own transaction, after it (the admin route's audit row): both commit, or neither. */
export type Alongside = (change: MerchantChange) => Promise<void>;

/** An account of a channel, or one of a service provider's sub-merchants. */
export interface MerchantTarget {
  channel: string;
  account: string;
  /** Absent: the account itself. */
  subMerchantId?: string;
}

/** The key files a platform key or certificate of the directory can take the place of. */
export const PLATFORM_KEY_KINDS = ['publicKey', 'platformCert', 'publicCert'] as const;
/** How long the key in force verifies beside an activated candidate unless told; and at most. */
export const DEFAULT_OVERLAP_SECONDS = 24 * 3600;
export const MAX_OVERLAP_SECONDS = 7 * 24 * 3600;
/** How recent the candidate's dry run must be for it to be proposed. */
export const DRY_RUN_VALID_MS = 24 * 3600_000;

/** A candidate platform key or certificate to activate for an account's key file of `kind`. */
export interface PlatformKeyProposal {
  kind: string;
  /** PEM: a public key or a certificate. */
  pem: string;
  /** The id the platform names the key by, for a key file with one (WeChat Pay's public key id). */
  keyId?: string;
  overlapSeconds?: number;
}

/** An account as the directory lists it: from the configuration (the bootstrap), with what operators changed. */
export interface ListedAccount {
  channel: string;
  account: string;
  /** configuration: the environment or PAYMENT_ACCOUNTS_FILE; directory: added through the admin API. */
  source: 'configuration' | 'directory';
  /** A directory account's public facts (AccountFacts), and the change that put them in force. */
  facts?: unknown;
  changeId?: string;
  /** A directory account: false while this replica left it out (its secret did not decrypt, the channel refused it). */
  applied?: boolean;
  disabled: boolean;
  subMerchants: Array<{
    subMerchantId: string;
    subAppId?: string;
    source: 'configuration' | 'directory';
    disabled: boolean;
  }>;
}

/**
 * What operators change in the merchant directory: each a row appended to merchant_change in a
 * transaction of its own, with the caller's audit row (alongside), applied by every replica's MerchantDirectory
 * within DIRECTORY_POLL_MS of the commit. What can stop payments (disabling an account or a
 * sub-merchant) is a proposal that another admin approves; what cannot (adding a sub-merchant,
 * enabling again) applies at once. What a write checks (disabled already, a sub-merchant already)
 * is the directory read just before it: two concurrent writes may both pass, and both rows then
 * apply as one (the replay is idempotent: enabling twice is enabled), so no guarantee rests on the
 * check. A sub-merchant (as an account, MerchantAccountChanges.add) is added once: its row's
 * transaction claims it in merchant_added, whose key refuses a second.
 */
@Injectable()
export class MerchantChanges {
  constructor(
    private readonly changes: MerchantChangeRepository,
    private readonly directory: MerchantDirectory,
    private readonly channels: PaymentChannels,
    private readonly keyFiles: ChannelKeyFiles,
    private readonly transactions: TransactionRunner,
  ) {}

  /** How long a committed change takes to reach every replica, at most (one poll and its query). */
  static readonly applyWithinMs = DIRECTORY_POLL_MS;

  @Transactional(Propagation.Never)
  async addSubMerchant(
    target: Required<Pick<MerchantTarget, 'channel' | 'account' | 'subMerchantId'>>,
    subAppId: string | undefined,
    operatorId: string,
    alongside?: Alongside,
  ): Promise<MerchantChange> {
    await this.directory.refresh();
    const channel = this.accountOf(target);
    if (!this.keyFiles.takesSubMerchants(target.channel) || channel.subMerchantIds(target.account).length === 0) {
      throw new DomainError(
        'MalformedRequest',
        `${target.account} of ${target.channel} is no service provider: declare it with its first sub-merchant in the configuration`,
      );
    }
    if (channel.subMerchantIds(target.account).includes(target.subMerchantId)) {
      throw new DomainError(
        'MerchantConflict',
        `${target.subMerchantId} is a sub-merchant of ${target.account} already`,
      );
    }
    const added = [
      ...(this.directory.current.subMerchants.get(target.channel) ?? []),
      { account: target.account, subMerchantId: target.subMerchantId, ...(subAppId ? { subAppId } : {}) },
    ];
    try {
      this.keyFiles.applySubMerchants(target.channel, added, true);
    } catch (error) {
      throw new DomainError('MalformedRequest', (error as Error).message.replace(/^Invalid configuration:\s*/, ''));
    }
    const change = {
      channel: target.channel,
      accountId: target.account,
      subMerchantId: target.subMerchantId,
      action: MerchantAction.SubMerchantAdded,
      subAppId: subAppId ?? null,
      operatorId,
    };
    return this.commit(async () => {
      const added = await this.changes.append(change);
      // The check above is the directory read before: the database's key decides between concurrent adds.
      if (!(await this.changes.claimAdded(added))) {
        throw new DomainError(
          'MerchantConflict',
          `${target.subMerchantId} is a sub-merchant of ${target.account} already`,
        );
      }
      return added;
    }, alongside);
  }

  /** A proposal to disable the account or sub-merchant: nothing changes until another admin approves it. */
  @Transactional(Propagation.Never)
  async proposeDisable(
    target: MerchantTarget,
    reason: string,
    operatorId: string,
    alongside?: Alongside,
  ): Promise<MerchantChange> {
    await this.directory.refresh();
    this.knownTarget(target);
    if (this.directory.isDisabled(target.channel, target.account, target.subMerchantId)) {
      throw new DomainError('MerchantConflict', `${describe(target)} is disabled already`);
    }
    const change = {
      channel: target.channel,
      accountId: target.account,
      subMerchantId: target.subMerchantId ?? '',
      action: MerchantAction.DisableProposed,
      reason,
      operatorId,
    };
    return this.commit(() => this.changes.append(change), alongside);
  }

  /**
   * A proposal to activate a candidate platform key or certificate for the account's key file of
   * `kind`: refused unless a dry run of the same candidate (its fingerprint) for that account and
   * kind was recorded within DRY_RUN_VALID_MS, and unless the channel builds with it, both beside
   * the key in force and alone. Nothing changes until another admin approves it; then every
   * replica verifies the account's notifications with both keys for the overlap window, and with
   * the candidate alone after it.
   */
  @Transactional(Propagation.Never)
  async proposePlatformKey(
    target: Pick<MerchantTarget, 'channel' | 'account'>,
    proposal: PlatformKeyProposal,
    operatorId: string,
    alongside?: Alongside,
  ): Promise<MerchantChange> {
    await this.directory.refresh();
    this.accountOf(target);
    const { kind, pem, keyId } = proposal;
    const overlapSeconds = proposal.overlapSeconds ?? DEFAULT_OVERLAP_SECONDS;
    if (!(PLATFORM_KEY_KINDS as readonly string[]).includes(kind)) {
      throw new DomainError('MalformedRequest', `kind must be one of ${PLATFORM_KEY_KINDS.join(', ')}`);
    }
    if (!Number.isInteger(overlapSeconds) || overlapSeconds < 0 || overlapSeconds > MAX_OVERLAP_SECONDS) {
      throw new DomainError('MalformedRequest', `overlapSeconds must be 0 to ${MAX_OVERLAP_SECONDS}`);
    }
    if (!this.keyFiles.hasKeyFile(target.channel, target.account, kind)) {
      throw new DomainError('NotFound', `no ${kind} file of account ${target.account} (${target.channel})`);
    }
    const fingerprint = fingerprintOf(pem);
    const since = new Date(Date.now() - DRY_RUN_VALID_MS);
    if (!(await this.changes.dryRunSince({ ...target, kind, fingerprint }, since))) {
      throw new DomainError(
        'DryRunRequired',
        `no dry run of candidate ${fingerprint} for the ${kind} of ${target.account} (${target.channel}) in the last ${DRY_RUN_VALID_MS / 3600_000} h: run POST /admin/merchants/${target.channel}/${target.account}/key-dry-run first`,
      );
    }
    this.checkBuilds(target, { kind, pem, keyId });
    const change = {
      channel: target.channel,
      accountId: target.account,
      subMerchantId: '',
      action: MerchantAction.PlatformKeyProposed,
      keyKind: kind,
      keyId: keyId ?? null,
      candidatePem: pem,
      candidateFingerprint: fingerprint,
      overlapSeconds,
      operatorId,
    };
    return this.commit(() => this.changes.append(change), alongside);
  }

  /** The channel built with the candidate beside the key in force (the window), and alone (after it); a 400 when it refuses. */
  private checkBuilds(target: Pick<MerchantTarget, 'channel' | 'account'>, candidate: PlatformKeyProposal): void {
    const others = [...this.directory.current.platformKeys.values()].filter(
      (k) => k.channel === target.channel && !(k.account === target.account && k.kind === candidate.kind),
    );
    const before = this.directory.current.platformKeys.get(keyTarget(target.channel, target.account, candidate.kind));
    const key = {
      account: target.account,
      kind: candidate.kind,
      pem: candidate.pem,
      keyId: candidate.keyId,
      activatedAt: new Date(),
    };
    const alone = others.map(inForce);
    try {
      this.keyFiles.applyDirectoryKeys(target.channel, [...alone, key], true);
      const beside = before ? { pem: before.pem, ...(before.keyId ? { keyId: before.keyId } : {}) } : {};
      this.keyFiles.applyDirectoryKeys(target.channel, [...alone, { ...key, beside }], true);
    } catch (error) {
      throw new DomainError(
        'MalformedRequest',
        `the candidate is refused: ${(error as Error).message.replace(/^Invalid configuration:\s*/, '')}`,
      );
    }
  }

  /** Enables a disabled account or sub-merchant again, at once: it stops no payment. */
  @Transactional(Propagation.Never)
  async enable(target: MerchantTarget, operatorId: string, alongside?: Alongside): Promise<MerchantChange> {
    await this.directory.refresh();
    this.knownTarget(target);
    if (!this.directory.isDisabled(target.channel, target.account, target.subMerchantId)) {
      throw new DomainError('MerchantConflict', `${describe(target)} is not disabled`);
    }
    const change = {
      channel: target.channel,
      accountId: target.account,
      subMerchantId: target.subMerchantId ?? '',
      action: MerchantAction.Enabled,
      operatorId,
    };
    return this.commit(() => this.changes.append(change), alongside);
  }

  /** Another admin's approval of a proposal: the proposer's own is refused, as a refund's requester's is. */
  @Transactional(Propagation.Never)
  approve(changeId: string, operatorId: string, alongside?: Alongside): Promise<MerchantChange> {
    return this.commit(() => this.decide(changeId, MerchantAction.Approved, operatorId), alongside);
  }

  /** Any admin's rejection of a proposal (its proposer withdrawing it too). */
  @Transactional(Propagation.Never)
  reject(changeId: string, operatorId: string, reason: string, alongside?: Alongside): Promise<MerchantChange> {
    return this.commit(() => this.decide(changeId, MerchantAction.Rejected, operatorId, reason), alongside);
  }

  /** Every account of every channel, with its sub-merchants and what the directory says of them. */
  list(): ListedAccount[] {
    const { subMerchants, accounts } = this.directory.current;
    const held = this.channels.all.flatMap((channel) =>
      channel.accountIds().map((account): ListedAccount => {
        const added = (subMerchants.get(channel.channel) ?? []).filter((s) => s.account === account);
        const fromDirectory = accounts.get(targetKey(channel.channel, account));
        return {
          channel: channel.channel,
          account,
          ...(fromDirectory
            ? {
                source: 'directory' as const,
                facts: JSON.parse(fromDirectory.facts) as unknown,
                changeId: fromDirectory.changeId,
                applied: true,
              }
            : { source: 'configuration' as const }),
          disabled: this.directory.isDisabled(channel.channel, account),
          subMerchants: channel.subMerchantIds(account).map((subMerchantId) => {
            const fromDirectory = added.find((s) => s.subMerchantId === subMerchantId);
            return {
              subMerchantId,
              ...(fromDirectory?.subAppId ? { subAppId: fromDirectory.subAppId } : {}),
              source: fromDirectory ? ('directory' as const) : ('configuration' as const),
              disabled: this.directory.isDisabled(channel.channel, account, subMerchantId),
            };
          }),
        };
      }),
    );
    // A directory account this replica could not put in place is listed too, so that it is seen.
    const leftOut = [...accounts.values()]
      .filter((a) => !held.some((h) => h.channel === a.channel && h.account === a.account))
      .map((a): ListedAccount => ({
        channel: a.channel,
        account: a.account,
        source: 'directory',
        facts: JSON.parse(a.facts) as unknown,
        changeId: a.changeId,
        applied: false,
        disabled: this.directory.isDisabled(a.channel, a.account),
        subMerchants: [],
      }));
    return [...held, ...leftOut];
  }

  history(limit: number, beforeId?: string): Promise<MerchantChange[]> {
    return this.changes.history(limit, beforeId);
  }

  private commit(change: () => Promise<MerchantChange>, alongside?: Alongside): Promise<MerchantChange> {
    return this.transactions.run(async () => {
      const result = await change();
      await alongside?.(result);
      return result;
    });
  }

  private async decide(
    changeId: string,
    action: MerchantDecision,
    operatorId: string,
    reason?: string,
  ): Promise<MerchantChange> {
    const decision = await this.changes.decide(changeId, action, operatorId, reason);
    if (decision === 'DECIDED') return (await this.changes.decisionOf(changeId))!;
    const proposal = await this.changes.findById(changeId);
    if (!proposal) throw new DomainError('NotFound', `no merchant change ${changeId}`);
    if (decision === 'ALREADY_DECIDED')
      throw new DomainError('MerchantConflict', `change ${changeId} is decided already`);
    if (!PROPOSALS.includes(proposal.action)) {
      throw new DomainError('MerchantConflict', `change ${changeId} is no proposal to decide`);
    }
    throw new DomainError(
      'Forbidden',
      `operator ${operatorId} proposed change ${changeId} and cannot approve it; another admin must`,
    );
  }

  private accountOf(target: MerchantTarget) {
    const channel = this.channels.get(target.channel);
    if (!channel || !channel.accountIds().includes(target.account)) {
      throw new DomainError('NotFound', `no account ${target.account} of channel ${target.channel}`);
    }
    return channel;
  }

  private knownTarget(target: MerchantTarget): void {
    const channel = this.accountOf(target);
    if (target.subMerchantId !== undefined && !channel.subMerchantIds(target.account).includes(target.subMerchantId)) {
      throw new DomainError('NotFound', `no sub-merchant ${target.subMerchantId} of ${target.account}`);
    }
  }
}

function inForce(key: ActivatedKey) {
  const { account, kind, pem, activatedAt } = key;
  return { account, kind, pem, activatedAt, ...(key.keyId ? { keyId: key.keyId } : {}) };
}

function describe({ channel, account, subMerchantId }: MerchantTarget): string {
  return subMerchantId === undefined
    ? `account ${account} of ${channel}`
    : `sub-merchant ${subMerchantId} of ${account} (${channel})`;
}
