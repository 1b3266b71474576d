import { AddedSubMerchant } from '../../channels/channel-registration';
import { MerchantAction, MerchantChange } from './merchant-change.entity';

/** The merchant directory as the changes made it: what is disabled, the sub-merchants added, the proposals waiting. */
export interface DirectoryState {
  version: string;
  /** targetKey()s of the accounts and sub-merchants disabled. */
  disabled: ReadonlySet<string>;
  /** By channel: the sub-merchants operators added. */
  subMerchants: ReadonlyMap<string, readonly AddedSubMerchant[]>;
  /** DISABLE_PROPOSED changes no one has decided yet. */
  pending: readonly MerchantChange[];
}

export const EMPTY_DIRECTORY: DirectoryState = {
  version: '0',
  disabled: new Set(),
  subMerchants: new Map(),
  pending: [],
};

/** An account ('' sub-merchant) or one of its sub-merchants, as one key. */
export function targetKey(channel: string, account: string, subMerchant = ''): string {
  return `${channel}\u0000${account}\u0000${subMerchant}`;
}

/** The changes replayed in the order they happened (by id): a pure function of the history. */
export function replayChanges(changes: readonly MerchantChange[]): DirectoryState {
  const disabled = new Set<string>();
  const subMerchants = new Map<string, AddedSubMerchant[]>();
  const pending = new Map<string, MerchantChange>();
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
      case MerchantAction.DisableProposed:
        pending.set(change.id, change);
        break;
      case MerchantAction.Approved:
        if (change.decidesChangeId && pending.delete(change.decidesChangeId)) disabled.add(key);
        break;
      case MerchantAction.Rejected:
        if (change.decidesChangeId) pending.delete(change.decidesChangeId);
        break;
    }
  }
  return { version, disabled, subMerchants, pending: [...pending.values()] };
}
