import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DomainError } from '../../domain/domain-error';
import { VerifiedNotification } from '../../domain/notification';
import { PollingWorker } from '../../platform/lifecycle/polling-worker';
import { ChannelKeyFiles } from '../credentials/channel-key-files';
import { DirectoryAccounts } from './directory-accounts';
import { MerchantChangeRepository } from './merchant-change.repository';
import { DirectoryState, EMPTY_DIRECTORY, keysAt, replayChanges, targetKey } from './directory-state';

/** The time the directory judges a platform key's overlap window by: the replica's clock. */
@Injectable()
export class DirectoryClock {
  now(): number {
    return Date.now();
  }
}

/** How often every replica asks whether the directory changed: a change applies everywhere within about this. */
export const DIRECTORY_POLL_MS = 1000;

/**
 * The merchant directory in memory, on every replica. Each DIRECTORY_POLL_MS one query reads the
 * directory's version (the largest id of merchant_change, which is append-only); when it moved,
 * the history is read and replayed, the channels with other accounts (DirectoryAccounts) or sub-merchants are built again
 * (ChannelKeyFiles), and the new state replaces the old in one assignment. A notification's
 * verification reads only this state (refuseIfDisabled), never the database. While the database
 * is away the poll fails, says so in the log, and the replica keeps the directory it last read;
 * a replica starting without the database does not start (its migrations need it too).
 */
@Injectable()
export class MerchantDirectory extends PollingWorker implements OnModuleInit {
  protected readonly logger = new Logger(MerchantDirectory.name);
  private state: DirectoryState = EMPTY_DIRECTORY;
  /** By channel: the directory keys put in place last (their fingerprints and phases), to build a channel again only when they change. */
  private readonly appliedKeys = new Map<string, string>();

  constructor(
    private readonly changes: MerchantChangeRepository,
    private readonly keyFiles: ChannelKeyFiles,
    private readonly clock: DirectoryClock,
    private readonly accounts: DirectoryAccounts,
  ) {
    super();
  }

  protected get intervalMs(): number {
    return DIRECTORY_POLL_MS;
  }

  /**
   * Reads the directory before the first request when the database answers. A start without the
   * database (the spool covers the outage) goes on with the accounts of the environment and the
   * accounts file alone, and the background poll reads the directory once the database is back.
   */
  async onModuleInit(): Promise<void> {
    try {
      await this.pollOnce();
    } catch (error) {
      this.logger.warn(
        `merchant directory not read at start, read once the database answers: ${(error as Error).message}`,
      );
    }
  }

  get current(): DirectoryState {
    return this.state;
  }

  isDisabled(channel: string, account: string, subMerchant = ''): boolean {
    return this.state.disabled.has(targetKey(channel, account, subMerchant));
  }

  /** Refuses (MerchantMismatch, kept as refused notifications are) a notification for a disabled account or sub-merchant. */
  refuseIfDisabled(notification: VerifiedNotification): void {
    const { channel, merchantId, subMerchantId } = notification;
    if (this.isDisabled(channel, merchantId)) {
      throw new DomainError(
        'MerchantMismatch',
        `account ${merchantId} of ${channel} is disabled in the merchant directory`,
      );
    }
    if (subMerchantId !== undefined && this.isDisabled(channel, merchantId, subMerchantId)) {
      throw new DomainError(
        'MerchantMismatch',
        `sub-merchant ${subMerchantId} of ${merchantId} (${channel}) is disabled in the merchant directory`,
      );
    }
  }

  /**
   * Reads the directory now, as the poll does: an admin write checks what it changes against the
   * directory as committed, not as of the last poll.
   */
  async refresh(): Promise<void> {
    await this.pollOnce();
  }

  /**
   * Reads the directory again when its version moved; never goes back to an older version than it
   * holds. Before the query, and without the database, an overlap window that ended takes its old
   * key away.
   */
  protected async pollOnce(): Promise<boolean> {
    this.applyKeys();
    const version = await this.changes.version();
    if (version === this.state.version) {
      // A directory account whose secret did not open is tried again once the keys file changed.
      await this.accounts.apply(this.state);
      return false;
    }
    const next = replayChanges(await this.changes.all());
    if (BigInt(next.version) < BigInt(this.state.version)) return false;
    // The accounts first: a sub-merchant or a key may be one of theirs.
    await this.accounts.apply(next);
    for (const [channel, added] of next.subMerchants) {
      if (sameSubMerchants(added, this.state.subMerchants.get(channel) ?? [])) continue;
      try {
        this.keyFiles.applySubMerchants(channel, added);
      } catch (error) {
        this.logger.error(`${channel} sub-merchants of the directory not applied: ${(error as Error).message}`);
      }
    }
    this.state = next;
    this.applyKeys();
    return false;
  }

  /** Builds again each channel whose directory keys, or their overlap windows, changed since it was built. */
  private applyKeys(): void {
    const now = this.clock.now();
    const keys = keysAt(this.state, now);
    for (const channel of new Set([...keys.keys(), ...this.appliedKeys.keys()])) {
      const inForce = keys.get(channel) ?? [];
      const stamp = JSON.stringify(inForce);
      if (stamp === (this.appliedKeys.get(channel) ?? '[]')) continue;
      try {
        this.keyFiles.applyDirectoryKeys(channel, inForce);
        this.appliedKeys.set(channel, stamp);
        this.logger.log(`${channel} platform keys of the directory applied: ${describeKeys(this.state, channel, now)}`);
      } catch (error) {
        // The channel keeps the adapter it has; tried again once the keys change. The log says why.
        this.appliedKeys.set(channel, stamp);
        this.logger.error(`${channel} platform keys of the directory not applied: ${(error as Error).message}`);
      }
    }
  }
}

/** Which keys a channel verifies with, by fingerprint (never the key itself). */
function describeKeys(state: DirectoryState, channel: string, now: number): string {
  return [...state.platformKeys.values()]
    .filter((k) => k.channel === channel)
    .map((k) =>
      now < k.overlapUntil.getTime()
        ? `${k.account} ${k.kind} ${k.fingerprint.slice(0, 16)} beside ${k.previous?.fingerprint.slice(0, 16) ?? 'the file'} until ${k.overlapUntil.toISOString()}`
        : `${k.account} ${k.kind} ${k.fingerprint.slice(0, 16)} alone`,
    )
    .join('; ');
}

function sameSubMerchants(a: readonly { subMerchantId: string; account: string; subAppId?: string }[], b: typeof a) {
  return (
    a.length === b.length &&
    a.every(
      (s, i) => s.account === b[i].account && s.subMerchantId === b[i].subMerchantId && s.subAppId === b[i].subAppId,
    )
  );
}
