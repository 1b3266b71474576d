import { createHash } from 'node:crypto';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter, Gauge } from 'prom-client';
import { ChannelBuild, CHANNEL_BUILDS } from '../../channels/channel-builds';
import { AddedSubMerchant } from '../../channels/channel-registration';
import {
  certificateExpiries,
  CredentialExpiry,
  CredentialFile,
  credentialFilesOf,
  DirectoryKeyFile,
} from '../../channels/credential-files';
import { PaymentChannels } from '../../channels/payment-channels';
import { PollingWorker } from '../../platform/lifecycle/polling-worker';
import {
  CREDENTIAL_EXPIRY,
  CREDENTIAL_FILES_REFUSED,
  CREDENTIAL_RELOADS_TOTAL,
} from '../../platform/metrics/metrics.module';
import { WATCHED_FILE_CHECK_MS, WatchedFiles } from '../../platform/config/watched-files';

/**
 * A platform key or certificate the merchant directory activated for an account, as PEM (public
 * material): in place of the account's key file of `kind`, or during its overlap window beside the
 * key in force before it (the file's, or an earlier directory key's).
 */
export interface DirectoryKey {
  account: string;
  kind: string;
  pem: string;
  keyId?: string;
  beside?: { pem?: string; keyId?: string };
  /** When a second admin approved it: a key file changed after that takes its place again (the newer wins). */
  activatedAt: Date;
}

/** What the merchant directory holds for a channel, which every build of it takes. */
interface DirectoryPart {
  added: readonly AddedSubMerchant[];
  keys: readonly DirectoryKey[];
  accounts: readonly object[];
}

/** A certificate the service holds, and when it expires. */
export interface HeldCredential extends CredentialExpiry {
  channel: string;
}

/**
 * Every instance watches the key and certificate files its channels' options name (WatchedFiles,
 * as ADMIN_TOKENS_FILE is): every WATCHED_FILE_CHECK_MS, a stat each; when a channel's files
 * changed, the channel's adapter is built again from them, which reads and checks every key and
 * certificate as the start does, and replaces the running one. A version that fails (a truncated
 * key, a certificate outside its chain, a file that is gone) is refused: the channel keeps the
 * adapter it has, the log says which file and why (never its content), and
 * payment_credential_files_refused{channel} is 1 until a valid version comes. Verification itself
 * reads only the adapter in memory and never waits for a file.
 */
@Injectable()
export class ChannelKeyFiles extends PollingWorker {
  protected readonly logger = new Logger(ChannelKeyFiles.name);
  private readonly watched: Array<{ channel: string; files: WatchedFiles<CredentialExpiry[]> }>;
  private readonly held = new Map<string, CredentialExpiry[]>();
  /** The sub-merchants the merchant directory added, by channel: every rebuild takes them. */
  private readonly added = new Map<string, readonly AddedSubMerchant[]>();
  /** The platform keys the merchant directory activated, by channel, as the files every rebuild takes. */
  private readonly keys = new Map<string, readonly DirectoryKey[]>();
  /** The accounts the merchant directory added, by channel (its section's accounts, their files written privately): every rebuild takes them. */
  private readonly accounts = new Map<string, readonly object[]>();
  /** A private directory for the directory keys' PEMs, which the channels read as files. */
  private keyDir: string | undefined;

  constructor(
    @Inject(CHANNEL_BUILDS) private readonly builds: ChannelBuild[],
    private readonly channels: PaymentChannels,
    @InjectMetric(CREDENTIAL_FILES_REFUSED) private readonly refused: Gauge<string>,
    @InjectMetric(CREDENTIAL_RELOADS_TOTAL) private readonly reloads: Counter<string>,
    @InjectMetric(CREDENTIAL_EXPIRY) private readonly expiry: Gauge<string>,
  ) {
    super();
    const withFiles = builds.filter((b) => b.files.length > 0);
    this.watched = withFiles.map((build) => ({
      channel: build.channel,
      files: new WatchedFiles(
        build.files.map((f) => f.path),
        () => this.rebuild(build),
      ),
    }));
    for (const build of withFiles) {
      this.refused.set({ channel: build.channel }, 0);
      this.hold(build.channel, certificateExpiries(build.files));
    }
  }

  protected get intervalMs(): number {
    return WATCHED_FILE_CHECK_MS;
  }

  /** Every certificate held, the one that expires first first. */
  soonestExpiries(): HeldCredential[] {
    return [...this.held.entries()]
      .flatMap(([channel, expiries]) => expiries.map((e) => ({ channel, ...e })))
      .sort((a, b) => a.validTo.getTime() - b.validTo.getTime());
  }

  /** One look at every channel's files; never more work right away. */
  protected async pollOnce(): Promise<boolean> {
    for (const { channel, files } of this.watched) {
      const look = await files.look();
      if (look.outcome === 'unchanged') continue;
      if (look.outcome === 'refused') {
        this.logger.error(`${channel} key files changed and were refused; ${channel} keeps its keys: ${look.reason}`);
        this.refused.set({ channel }, 1);
        this.reloads.inc({ channel, outcome: 'refused' });
        continue;
      }
      this.refused.set({ channel }, 0);
      this.hold(channel, look.value);
      if (!look.first) {
        this.logger.log(`${channel} key files re-read: the new keys and certificates verify from now on`);
        this.reloads.inc({ channel, outcome: 'applied' });
      }
    }
    return false;
  }

  /** Whether the channel's accounts take sub-merchants from the merchant directory. */
  takesSubMerchants(channel: string): boolean {
    return this.builds.some((b) => b.channel === channel && b.takesSubMerchants);
  }

  /**
   * The channel built again with the sub-merchants the merchant directory holds, and put in place;
   * throws a ConfigurationError, and keeps the adapter in use, when they do not fit its accounts.
   * With `dryRun`, only checks that they would.
   */
  applySubMerchants(channel: string, added: readonly AddedSubMerchant[], dryRun = false): void {
    this.rebuildWith(channel, { added }, dryRun);
  }

  /**
   * The channel built again with the platform keys the merchant directory holds for it, and put
   * in place; throws a ConfigurationError (a PEM that is no key, a certificate outside the chain,
   * an account without such a key file), and keeps the adapter in use. With `dryRun`, only
   * checks that they would build.
   */
  applyDirectoryKeys(channel: string, keys: readonly DirectoryKey[], dryRun = false): void {
    this.rebuildWith(channel, { keys }, dryRun);
  }

  /**
   * The channel built again with the accounts the merchant directory added (each its section's
   * account, with the paths of its files), beside the configured ones, and put in place; throws a
   * ConfigurationError (a file that is no key, an account the channel refuses) and keeps the
   * adapter in use. With `dryRun`, only checks that they would build.
   */
  applyDirectoryAccounts(channel: string, accounts: readonly object[], dryRun = false): void {
    this.rebuildWith(channel, { accounts }, dryRun);
  }

  /**
   * The channel built with what the directory holds for it, `change` in place of its part; unless
   * `dryRun`, put in place, the part recorded for every later rebuild, its certificates' expiries held.
   */
  private rebuildWith(channel: string, change: Partial<DirectoryPart>, dryRun: boolean): void {
    const build = this.builds.find((b) => b.channel === channel);
    if (!build) return;
    const part: DirectoryPart = {
      added: change.added ?? this.added.get(channel) ?? [],
      keys: change.keys ?? this.keys.get(channel) ?? [],
      accounts: change.accounts ?? this.accounts.get(channel) ?? [],
    };
    const keyFiles = this.inForce(build, part.keys);
    const adapter = build.build(part.added, keyFiles, part.accounts);
    if (dryRun) return;
    this.channels.replace(adapter);
    this.added.set(channel, part.added);
    this.keys.set(channel, part.keys);
    this.accounts.set(channel, part.accounts);
    this.hold(channel, this.expiriesOf(build, keyFiles, part.accounts));
  }

  /** The directory accounts the channel holds now. */
  directoryAccounts(channel: string): readonly object[] {
    return this.accounts.get(channel) ?? [];
  }

  /**
   * The directory keys as files, each in place of its key file unless that file changed after the
   * key's activation: whichever changed last, the file or the directory, is what verifies.
   */
  private inForce(build: ChannelBuild, keys: readonly DirectoryKey[] | undefined): DirectoryKeyFile[] {
    return (keys ?? []).flatMap((key) => {
      const newer = build.files.find(
        (f) => f.account === key.account && f.kind === key.kind && modifiedAt(f.path) > key.activatedAt.getTime(),
      );
      if (!newer) return [this.filesOf(key)];
      this.logger.warn(
        `${build.channel} ${key.kind} of ${key.account}: ${newer.path} changed after the directory's key was activated; the file's key verifies`,
      );
      return [];
    });
  }

  /** The platform keys of the directory the channel verifies with now, as files: what a dry run compares a candidate with. */
  directoryKeyFiles(channel: string): DirectoryKeyFile[] {
    const build = this.builds.find((b) => b.channel === channel);
    return build ? this.inForce(build, this.keys.get(channel)) : [];
  }

  /** Whether the channel has a key file of `kind` for the account, which a directory key can take the place of. */
  hasKeyFile(channel: string, account: string, kind: string): boolean {
    return this.builds.some(
      (b) => b.channel === channel && b.files.some((f) => f.account === account && f.kind === kind),
    );
  }

  private filesOf(key: DirectoryKey): DirectoryKeyFile {
    const file = { account: key.account, kind: key.kind, path: this.pemFile(key.pem), keyId: key.keyId };
    if (!key.beside) return file;
    const beside = { path: key.beside.pem ? this.pemFile(key.beside.pem) : undefined, keyId: key.beside.keyId };
    return { ...file, beside };
  }

  /** The PEM's private copy, named by its digest: written once, read by every build that takes it. */
  private pemFile(pem: string): string {
    this.keyDir ??= mkdtempSync(join(tmpdir(), 'pcs-directory-keys-'));
    const path = join(this.keyDir, `${createHash('sha256').update(pem, 'utf8').digest('hex')}.pem`);
    writeFileSync(path, pem, { mode: 0o600 });
    return path;
  }

  /** The channel's adapter built again from its files and put in place; its certificates' expiries. */
  private rebuild(build: ChannelBuild): CredentialExpiry[] {
    const keyFiles = this.inForce(build, this.keys.get(build.channel));
    const accounts = this.accounts.get(build.channel) ?? [];
    this.channels.replace(build.build(this.added.get(build.channel), keyFiles, accounts));
    return this.expiriesOf(build, keyFiles, accounts);
  }

  /**
   * Every certificate the channel holds: its key files' (those no directory key took the place
   * of), the directory's platform certificates in force (and those beside them in an overlap
   * window), and the files of the accounts it added.
   */
  private expiriesOf(
    build: ChannelBuild,
    keyFiles: readonly DirectoryKeyFile[],
    accounts: readonly object[],
  ): CredentialExpiry[] {
    const directoryKeys: CredentialFile[] = keyFiles.flatMap(({ account, kind, path, beside }) => [
      { account, kind, path },
      ...(beside?.path ? [{ account, kind, path: beside.path }] : []),
    ]);
    // A key file a directory key took the place of is not held, but beside it in its overlap window.
    const files = build.files.filter(
      (file) =>
        !keyFiles.some(
          (key) => key.account === file.account && key.kind === file.kind && !(key.beside && !key.beside.path),
        ),
    );
    const addedAccounts = credentialFilesOf({ accounts }, build.section.idField);
    return certificateExpiries([...files, ...directoryKeys, ...addedAccounts]);
  }

  private hold(channel: string, expiries: CredentialExpiry[]): void {
    for (const old of this.held.get(channel) ?? [])
      this.expiry.remove({ channel, account: old.account, kind: old.kind });
    for (const e of expiries) {
      this.expiry.set({ channel, account: e.account, kind: e.kind }, Math.floor(e.validTo.getTime() / 1000));
    }
    this.held.set(channel, expiries);
  }
}

/** A file's modification time through symbolic links (a Secret's `..data`); 0 when it cannot be read. */
function modifiedAt(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}
