import { createHash, createPublicKey } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import { Propagation, Transactional } from '@nestjs-cls/transactional';
import { ChannelBuild, CHANNEL_BUILDS } from '../../channels/channel-builds';
import { PaymentChannel } from '../../channels/payment-channel';
import { DomainError } from '../../domain/domain-error';
import { TransactionRunner } from '../../platform/transaction/transaction.runner';
import { CallbackRecordRepository, StoredDelivery } from '../idempotency/callback-record.repository';
import { RefusedNotificationRepository } from '../refused-notification/refused-notification.repository';
import { ChannelKeyFiles } from '../credentials/channel-key-files';
import { MerchantAction } from './merchant-change.entity';
import { MerchantChangeRepository } from './merchant-change.repository';
import { MerchantDirectory } from './merchant-directory';

/** How many stored deliveries, and refused ones, a dry run reads at most. */
export const DRY_RUN_MAX_DELIVERIES = 500;
/** The window a dry run looks at unless told. */
export const DRY_RUN_DEFAULT_WINDOW_MS = 3600_000;

export interface PlatformKeyCandidate {
  channel: string;
  account: string;
  /** The option of the key file tried: publicKey (a bare platform key), platformCert, publicCert (certificates). */
  kind: string;
  /** The candidate, PEM: a public key or a certificate. Public material only. */
  pem: string;
  since?: Date;
  /** Who ran it: the dry run is recorded (KEY_DRY_RUN) in the directory's history under their name. */
  operatorId: string;
}

/** What a candidate key would do to the account's recent notifications, before anything changes. */
export interface DryRunReport {
  channel: string;
  account: string;
  kind: string;
  /** SHA-256 of the candidate's SubjectPublicKeyInfo, hex: which key was tried, for the audit. */
  candidateFingerprint: string;
  since: string;
  /** Stored deliveries (accepted) and kept refused notifications of the channel read. */
  examined: number;
  /** Of the account's: verified by the current key only, by the candidate only, by both. */
  currentOnly: number;
  candidateOnly: number;
  both: number;
  /** Verified by neither (of any account of the channel, or another dialect's). */
  neither: number;
}

/**
 * A dry run of a candidate platform key or certificate: the account's recent notifications (the
 * deliveries kept with their bytes, and the refused ones kept) verified again, each at the time it
 * arrived, by the channel as configured and by the channel with the candidate in place of the
 * account's key file. Nothing is put in place; the candidate's file lives in a private temporary
 * directory for the run only. Recorded in the directory's history (KEY_DRY_RUN, with the
 * candidate's fingerprint: what a proposal to activate it needs) and audited, in a transaction of
 * its own, through `alongside`.
 */
@Injectable()
export class PlatformKeyDryRun {
  constructor(
    @Inject(CHANNEL_BUILDS) private readonly builds: ChannelBuild[],
    private readonly deliveries: CallbackRecordRepository,
    private readonly refused: RefusedNotificationRepository,
    private readonly directory: MerchantDirectory,
    private readonly transactions: TransactionRunner,
    private readonly changes: MerchantChangeRepository,
    private readonly keyFiles: ChannelKeyFiles,
  ) {}

  @Transactional(Propagation.Never)
  async run(
    candidate: PlatformKeyCandidate,
    alongside?: (report: DryRunReport) => Promise<void>,
  ): Promise<DryRunReport> {
    const build = this.builds.find((b) => b.channel === candidate.channel);
    if (!build || !build.files.some((f) => f.account === candidate.account && f.kind === candidate.kind)) {
      throw new DomainError(
        'NotFound',
        `no ${candidate.kind} file of account ${candidate.account} (${candidate.channel})`,
      );
    }
    const fingerprint = fingerprintOf(candidate.pem);
    const since = candidate.since ?? new Date(Date.now() - DRY_RUN_DEFAULT_WINDOW_MS);
    const stored = [
      ...(await this.deliveries.recentDeliveries(candidate.channel, since, DRY_RUN_MAX_DELIVERIES)),
      ...(await this.refused.recentRefused(candidate.channel, since, DRY_RUN_MAX_DELIVERIES)),
    ];
    const counts = await this.withCandidateFile(candidate.pem, (path) => {
      let at = 0;
      const clock = () => at;
      const added = this.directory.current.subMerchants.get(candidate.channel) ?? [];
      // The current keys are the channel's in force, the directory's with them; the candidate takes the place of the account's of that kind.
      const keys = this.keyFiles.directoryKeyFiles(candidate.channel);
      const others = keys.filter((k) => !(k.account === candidate.account && k.kind === candidate.kind));
      // The directory's accounts verify as they do now: their notifications are not the candidate's `neither`.
      const accounts = this.keyFiles.directoryAccounts(candidate.channel);
      const current = build.trial(clock, added, undefined, keys, accounts);
      const replaced = { account: candidate.account, kind: candidate.kind, path };
      const tried = trial(() => build.trial(clock, added, replaced, others, accounts));
      return count(stored, candidate.account, current, tried, (receivedAt) => (at = receivedAt.getTime()));
    });
    const report = {
      channel: candidate.channel,
      account: candidate.account,
      kind: candidate.kind,
      candidateFingerprint: fingerprint,
      since: since.toISOString(),
      examined: stored.length,
      ...counts,
    };
    // The record a proposal to activate this candidate needs (proposePlatformKey), with the audit row.
    await this.transactions.run(async () => {
      await this.changes.append({
        channel: candidate.channel,
        accountId: candidate.account,
        subMerchantId: '',
        action: MerchantAction.KeyDryRun,
        keyKind: candidate.kind,
        candidateFingerprint: fingerprint,
        operatorId: candidate.operatorId,
      });
      await alongside?.(report);
    });
    return report;
  }

  private async withCandidateFile<T>(pem: string, use: (path: string) => T): Promise<T> {
    const dir = await mkdtemp(join(tmpdir(), 'pcs-candidate-'));
    try {
      const path = join(dir, 'candidate.pem');
      await writeFile(path, pem, { mode: 0o600 });
      return use(path);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

/** The candidate adapter; a candidate the channel refuses (not a key, outside its chain) is the operator's 400. */
function trial(build: () => PaymentChannel): PaymentChannel {
  try {
    return build();
  } catch (error) {
    throw new DomainError('MalformedRequest', `the candidate is refused: ${(error as Error).message}`);
  }
}

function count(
  stored: StoredDelivery[],
  account: string,
  current: PaymentChannel,
  candidate: PaymentChannel,
  setClock: (at: Date) => void,
) {
  const counts = { currentOnly: 0, candidateOnly: 0, both: 0, neither: 0 };
  for (const delivery of stored) {
    setClock(delivery.receivedAt);
    const byCurrent = verifiedFor(current, delivery);
    const byCandidate = verifiedFor(candidate, delivery);
    if (byCurrent === undefined && byCandidate === undefined) counts.neither += 1;
    else if (byCurrent !== account && byCandidate !== account) continue;
    else if (byCurrent === account && byCandidate === account) counts.both += 1;
    else if (byCurrent === account) counts.currentOnly += 1;
    else counts.candidateOnly += 1;
  }
  return counts;
}

/** The account a delivery verifies for under this adapter, or undefined when it does not verify. */
function verifiedFor(channel: PaymentChannel, delivery: StoredDelivery): string | undefined {
  try {
    return channel.verify({ body: delivery.body, headers: delivery.headers }).merchantId;
  } catch {
    return undefined;
  }
}

/** SHA-256 of a PEM public key's or certificate's SubjectPublicKeyInfo, hex; a 400 for anything else. */
export function fingerprintOf(pem: string): string {
  try {
    const key = createPublicKey(pem);
    return createHash('sha256')
      .update(key.export({ type: 'spki', format: 'der' }))
      .digest('hex');
  } catch {
    throw new DomainError('MalformedRequest', 'the candidate is neither a PEM public key nor a PEM certificate');
  }
}
