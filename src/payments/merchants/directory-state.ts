import { AddedSubMerchant } from '../../channels/channel-registration';
import { DirectoryKey } from '../credentials/channel-key-files';
import { MerchantAction, MerchantChange } from './merchant-change.entity';

/** The merchant directory as the changes made it: what is disabled, the sub-merchants added, the proposals waiting. */
export interface DirectoryState {
  version: string;
  /** targetKey()s of the accounts and sub-merchants disabled. */
  disabled: ReadonlySet<string>;
  /** By channel: the sub-merchants operators added. */
  subMerchants: ReadonlyMap<string, readonly AddedSubMerchant[]>;
  /** DISABLE_PROPOSED and PLATFORM_KEY_PROPOSED changes no one has decided yet. */
  pending: readonly MerchantChange[];
  /** By keyTarget(): the platform key or certificate last activated for an account's key file. */
  platformKeys: ReadonlyMap<string, ActivatedKey>;
  /** By targetKey(channel, account): the accounts added through the directory, each with its sealed secret in force. */
  accounts: ReadonlyMap<string, DirectoryAccount>;
}

/** An account added through the directory: its public facts, and the merchant_secret row that holds its entry and files. */
export interface DirectoryAccount {
  channel: string;
  account: string;
  secretId: string;
  /** JSON of AccountFacts: no secret. */
  facts: string;
  /** The change that put this secret in force (ACCOUNT_ADDED, or the APPROVED of an ACCOUNT_CHANGE_PROPOSED), and when. */
  changeId: string;
  since: Date;
}

/** A platform key or certificate a second admin approved: in place of the account's key file of `kind`. */
export interface ActivatedKey {
  channel: string;
  account: string;
  kind: string;
  pem: string;
  fingerprint: string;
  keyId: string | null;
  /** The approval's change id and time. */
  changeId: string;
  activatedAt: Date;
  /** Until then, the key in force before it verifies beside it. */
  overlapUntil: Date;
  /** The key in force before it: an earlier activation's, or (undefined) the key file's. */
  previous?: { pem: string; fingerprint: string; keyId: string | null };
}

export const EMPTY_DIRECTORY: DirectoryState = {
  version: '0',
  disabled: new Set(),
  subMerchants: new Map(),
  pending: [],
  platformKeys: new Map(),
  accounts: new Map(),
};

/** An account's key file of `kind`, as one key. */
export function keyTarget(channel: string, account: string, kind: string): string {
  return `${channel}\u0000${account}\u0000${kind}`;
}

/** An account ('' sub-merchant) or one of its sub-merchants, as one key. */
export function targetKey(channel: string, account: string, subMerchant = ''): string {
  return `${channel}\u0000${account}\u0000${subMerchant}`;
}

/** The changes replayed in the order they happened (by id): a pure function of the history. */
export function replayChanges(changes: readonly MerchantChange[]): DirectoryState {
  const disabled = new Set<string>();
  const subMerchants = new Map<string, AddedSubMerchant[]>();
  const pending = new Map<string, MerchantChange>();
  const platformKeys = new Map<string, ActivatedKey>();
  const accounts = new Map<string, DirectoryAccount>();
  let version = '0';
  for (const change of changes) {
    version = change.id;
    const key = targetKey(change.channel, change.accountId, change.subMerchantId);
    switch (change.action) {
      case MerchantAction.SubMerchantAdded: {
        const list = subMerchants.get(change.channel) ?? [];
        if (!list.some((s) => s.account === change.accountId && s.subMerchantId === change.subMerchantId)) {
          const added = { account: change.accountId, subMerchantId: change.subMerchantId };
          list.push(change.subAppId ? { ...added, subAppId: change.subAppId } : added);
        }
        subMerchants.set(change.channel, list);
        break;
      }
      case MerchantAction.Enabled:
        disabled.delete(key);
        break;
      case MerchantAction.AccountAdded:
        if (!accounts.has(key)) accounts.set(key, accountOf(change, change));
        break;
      case MerchantAction.DisableProposed:
      case MerchantAction.PlatformKeyProposed:
      case MerchantAction.AccountChangeProposed:
        pending.set(change.id, change);
        break;
      case MerchantAction.Approved: {
        const proposal = change.decidesChangeId ? pending.get(change.decidesChangeId) : undefined;
        if (!proposal) break;
        pending.delete(proposal.id);
        if (proposal.action === MerchantAction.DisableProposed) disabled.add(key);
        else if (proposal.action === MerchantAction.AccountChangeProposed) {
          if (accounts.has(key)) accounts.set(key, accountOf(proposal, change));
        } else activate(platformKeys, proposal, change);
        break;
      }
      case MerchantAction.KeyDryRun:
        // A candidate tried: it changes nothing.
        break;
      case MerchantAction.Rejected:
        if (change.decidesChangeId) pending.delete(change.decidesChangeId);
        break;
    }
  }
  return { version, disabled, subMerchants, pending: [...pending.values()], platformKeys, accounts };
}

function accountOf(change: MerchantChange, inForceBy: MerchantChange): DirectoryAccount {
  return {
    channel: change.channel,
    account: change.accountId,
    secretId: change.secretId ?? '',
    facts: change.accountFacts ?? '{}',
    changeId: inForceBy.id,
    since: new Date(inForceBy.createdAt),
  };
}

function activate(keys: Map<string, ActivatedKey>, proposal: MerchantChange, approval: MerchantChange): void {
  const kind = proposal.keyKind ?? '';
  const target = keyTarget(proposal.channel, proposal.accountId, kind);
  const before = keys.get(target);
  const activatedAt = new Date(approval.createdAt);
  keys.set(target, {
    channel: proposal.channel,
    account: proposal.accountId,
    kind,
    pem: proposal.candidatePem ?? '',
    fingerprint: proposal.candidateFingerprint ?? '',
    keyId: proposal.keyId,
    changeId: approval.id,
    activatedAt,
    overlapUntil: new Date(activatedAt.getTime() + (proposal.overlapSeconds ?? 0) * 1000),
    ...(before ? { previous: { pem: before.pem, fingerprint: before.fingerprint, keyId: before.keyId } } : {}),
  });
}

/** The channels' directory keys at `now`: each with the key before it beside it while its overlap window lasts. */
export function keysAt(state: DirectoryState, now: number): Map<string, DirectoryKey[]> {
  const byChannel = new Map<string, DirectoryKey[]>();
  for (const key of state.platformKeys.values()) {
    const list = byChannel.get(key.channel) ?? [];
    const inForce = {
      account: key.account,
      kind: key.kind,
      pem: key.pem,
      activatedAt: key.activatedAt,
      ...(key.keyId ? { keyId: key.keyId } : {}),
    };
    if (now < key.overlapUntil.getTime()) {
      const previous = key.previous;
      list.push({
        ...inForce,
        beside: previous ? { pem: previous.pem, ...(previous.keyId ? { keyId: previous.keyId } : {}) } : {},
      });
    } else list.push(inForce);
    byChannel.set(key.channel, list);
  }
  return byChannel;
}
