import { createHash, createPublicKey } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Gauge } from 'prom-client';
import { DIRECTORY_ACCOUNTS_LEFT_OUT } from '../../platform/metrics/metrics.module';
import { AccountMaterial, accountOfMaterial, MaterialError } from '../../channels/account-material';
import { ChannelBuild, CHANNEL_BUILDS } from '../../channels/channel-builds';
import { ChannelKeyFiles } from '../credentials/channel-key-files';
import { DirectoryAccount, DirectoryState } from './directory-state';
import { MerchantSecretKeys } from './merchant-secret-keys';
import { MerchantSecretRepository } from './merchant-secret.repository';
import { secretBinding, unseal } from './secret-sealing';

/**
 * What the directory keeps in the clear of an account it added (merchant_change.account_facts, the
 * API's listing): the entry's options by name, the values of the public ones, and the SHA-256
 * fingerprint of each file that is public material (a platform public key, a certificate); never
 * a key, a password or a private key's content.
 */
export interface AccountFacts {
  options: string[];
  public: Record<string, unknown>;
  files: Record<string, Array<string | null>>;
}

/** The options whose values are public: ids, app ids, the merchant certificate's serial number, the platform key's id. */
const PUBLIC_OPTIONS = [
  'mchid',
  'appids',
  'appId',
  'sellerId',
  'merId',
  'merchantSerialNo',
  'subMchids',
  'validateCertChain',
];
const PUBLIC_NESTED = ['platformPublicKey.id'];

/**
 * The accounts added through the merchant directory, on every replica: each one's sealed secret
 * (its accounts-file entry and its files' content) opened with MERCHANT_SECRETS_KEYS_FILE's keys,
 * its files written to a private temporary directory (mode 0600), its entry checked by the
 * channel's accounts-file section, and the channel built with these accounts beside the
 * configured ones. A secret that does not open (its key is not in the file, it was tampered with)
 * or an account the channel refuses is left out and logged (never its content); the other
 * accounts keep working, and it is tried again when the keys file changes.
 */
@Injectable()
export class DirectoryAccounts {
  private readonly logger = new Logger(DirectoryAccounts.name);
  private dir: string | undefined;
  /** The option each decrypted file was given as, by its path: how a refusal names it. */
  private readonly optionOf = new Map<string, string>();
  /** By channel: what was applied last (accounts and secrets, and the keys file's version), to build again only on a change. */
  private readonly applied = new Map<string, string>();
  /** By channel, by account: the accounts as the channel holds them. */
  private readonly held = new Map<string, Map<string, object>>();

  constructor(
    @Inject(CHANNEL_BUILDS) private readonly builds: ChannelBuild[],
    private readonly keyFiles: ChannelKeyFiles,
    private readonly keys: MerchantSecretKeys,
    private readonly secrets: MerchantSecretRepository,
    @InjectMetric(DIRECTORY_ACCOUNTS_LEFT_OUT) private readonly leftOutGauge: Gauge<string>,
  ) {}

  /** By channel: the directory's accounts this replica left out, by account id. */
  private readonly leftOut = new Map<string, string[]>();

  /** The directory's accounts of the channel this replica could not put in place. */
  leftOutOf(channel: string): readonly string[] {
    return this.leftOut.get(channel) ?? [];
  }

  build(channel: string): ChannelBuild | undefined {
    return this.builds.find((b) => b.channel === channel);
  }

  /** The material as the channel's account, its files written privately; a MaterialError naming what is wrong. */
  accountOf(build: ChannelBuild, material: AccountMaterial): object {
    return accountOfMaterial(build.section, material, (option, bytes) => {
      const path = this.write(bytes);
      this.optionOf.set(path, option);
      return path;
    });
  }

  /**
   * A channel's refusal of an account in the terms of the request: each decrypted file's path on
   * this replica named by its option (`files.platformPublicKey.path`), without the environment
   * variable a configured account's file would have.
   */
  inRequestTerms(message: string): string {
    let said = message.replace(/^Invalid configuration:\s*/, '').replace(/^[A-Z][A-Z0-9_]*: /, '');
    for (const [path, option] of this.optionOf) said = said.split(path).join(`files.${option}`);
    return said;
  }

  /**
   * Whether the channel builds with `account` beside the accounts it holds (in place of the one of
   * the same id); throws the channel's ConfigurationError (a file that is no key) otherwise.
   */
  check(build: ChannelBuild, accountId: string, account: object): void {
    const others = [...(this.held.get(build.channel) ?? new Map<string, object>()).entries()]
      .filter(([id]) => id !== accountId)
      .map(([, a]) => a);
    this.keyFiles.applyDirectoryAccounts(build.channel, [...others, account], true);
  }

  /** The directory's accounts put in place, channel by channel, where they (or the keys file) changed. */
  async apply(state: DirectoryState): Promise<void> {
    const byChannel = new Map<string, DirectoryAccount[]>();
    for (const account of state.accounts.values()) {
      byChannel.set(account.channel, [...(byChannel.get(account.channel) ?? []), account]);
    }
    const keysVersion = await this.keys.version();
    for (const channel of new Set([...byChannel.keys(), ...this.applied.keys()])) {
      const accounts = byChannel.get(channel) ?? [];
      const stamp = JSON.stringify([keysVersion, accounts.map((a) => [a.account, a.secretId])]);
      if (stamp === this.applied.get(channel)) continue;
      this.applied.set(channel, stamp);
      await this.applyChannel(channel, accounts);
    }
  }

  private async applyChannel(channel: string, accounts: readonly DirectoryAccount[]): Promise<void> {
    const build = this.build(channel);
    if (!build) return;
    const sealed = await this.secrets.byIds(accounts.map((a) => a.secretId));
    const ring = await this.keys.current();
    const taken = new Map<string, object>();
    const leftOut: string[] = [];
    for (const { account, secretId } of accounts) {
      try {
        const secret = sealed.get(secretId);
        if (!secret) throw new Error(`its secret ${secretId} is not in merchant_secret`);
        if (!ring) throw new Error('MERCHANT_SECRETS_KEYS_FILE is not configured');
        const material = JSON.parse(
          unseal(ring, secret, secretBinding(channel, account)).toString('utf8'),
        ) as AccountMaterial;
        const option = this.accountOf(build, material);
        this.keyFiles.applyDirectoryAccounts(channel, [...taken.values(), option], true);
        taken.set(account, option);
      } catch (error) {
        // The reasons name keys, fields and files, never a secret's content.
        const reason = error instanceof MaterialError || error instanceof Error ? error.message : String(error);
        this.logger.error(`${channel} account ${account} of the directory left out (secret ${secretId}): ${reason}`);
        leftOut.push(account);
      }
    }
    this.leftOut.set(channel, leftOut);
    this.leftOutGauge.set({ channel }, leftOut.length);
    try {
      this.keyFiles.applyDirectoryAccounts(channel, [...taken.values()]);
      this.held.set(channel, taken);
      this.logger.log(`${channel} accounts of the directory applied: ${[...taken.keys()].join(', ') || 'none'}`);
    } catch (error) {
      this.logger.error(`${channel} accounts of the directory not applied: ${(error as Error).message}`);
    }
    this.sweep();
  }

  /**
   * Deletes the decrypted files no account in place names: those of an account left out, replaced,
   * refused or only checked. The ones in place stay, as a channel reads some when it calls (a
   * PKCS#12 for a refund) and all of them when it is built again. Call it only where no file
   * written is still to be read: a write and the build that reads it are one synchronous stretch.
   */
  sweep(): void {
    if (!this.dir) return;
    const named = new Set<string>();
    const collect = (value: unknown): void => {
      if (typeof value === 'string') named.add(value);
      else if (value && typeof value === 'object') Object.values(value).forEach(collect);
    };
    for (const accounts of this.held.values()) for (const account of accounts.values()) collect(account);
    for (const file of readdirSync(this.dir)) {
      const path = join(this.dir, file);
      if (named.has(path)) continue;
      rmSync(path, { force: true });
      this.optionOf.delete(path);
    }
  }

  private write(bytes: Buffer): string {
    this.dir ??= mkdtempSync(join(tmpdir(), 'pcs-directory-accounts-'));
    const path = join(this.dir, createHash('sha256').update(bytes).digest('hex'));
    writeFileSync(path, bytes, { mode: 0o600 });
    return path;
  }
}

/** The material's public facts (AccountFacts). */
export function factsOf(material: AccountMaterial): AccountFacts {
  const { entry, files } = material;
  const publicValues: Record<string, unknown> = {};
  for (const option of PUBLIC_OPTIONS) if (entry[option] !== undefined) publicValues[option] = entry[option];
  for (const nested of PUBLIC_NESTED) {
    const [parent, field] = nested.split('.');
    const value = (entry[parent] as Record<string, unknown> | undefined)?.[field];
    if (value !== undefined) publicValues[nested] = value;
  }
  return {
    options: [...Object.keys(entry), ...Object.keys(files)].sort(),
    public: publicValues,
    files: Object.fromEntries(
      Object.entries(files).map(([option, content]) => [
        option,
        (Array.isArray(content) ? content : [content]).map(publicFingerprint),
      ]),
    ),
  };
}

/** SHA-256 of a public key's or certificate's SubjectPublicKeyInfo; null for anything else (a private key is never fingerprinted). */
function publicFingerprint(content: unknown): string | null {
  if (typeof content !== 'string' || !/-----BEGIN (PUBLIC KEY|RSA PUBLIC KEY|CERTIFICATE)-----/.test(content))
    return null;
  if (/PRIVATE KEY-----/.test(content)) return null;
  try {
    return createHash('sha256')
      .update(createPublicKey(content).export({ type: 'spki', format: 'der' }))
      .digest('hex');
  } catch {
    return null;
  }
}

/** What an audit row keeps of an account's body (AccountFacts of what was sent, whatever its shape): never a secret. */
export function auditedFactsOf(body: unknown): AccountFacts | null {
  const { entry, files } = (body ?? {}) as { entry?: unknown; files?: unknown };
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(entry)) return null;
  return factsOf({ entry, files: (isObject(files) ? files : {}) as AccountMaterial['files'] });
}
