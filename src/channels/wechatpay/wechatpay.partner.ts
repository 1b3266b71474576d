import { DomainError } from '../../domain/domain-error';
import { ConfigurationError } from '../../platform/config/env-validation';
import type { AddedSubMerchant } from '../channel-registration';
import type { WechatpayOptions } from './wechatpay.config';

/**
 * WeChat Pay's service-provider (服务商, partner) mode. A provider's account (its mchid is the
 * `sp_mchid`) collects for configured sub-merchants (`sub_mchid`). Its notifications have the
 * APIv3 envelope, headers and signature (the provider's platform key, the provider's APIv3 key);
 * the resource names `sp_mchid`, `sp_appid`, `sub_mchid` and `sub_appid` instead of `mchid` and
 * `appid`. Its APIs are the partner paths, called with the provider's merchant key.
 */

/** A mchid: digits only, as WeChat assigns them. */
export const MCHID = /^\d{1,32}$/;

/** The fields of an account partner mode reads: a direct merchant has no sub-merchants. */
export interface PartnerAccount {
  mchid: string;
  /** The sub-merchants this provider collects for; empty or absent: a directly connected merchant. */
  subMchids?: string[];
  /** A sub-merchant's own app (sub_appid), where one is configured: its notifications must name it. */
  subAppids?: Record<string, string>;
}

/** An entry of WECHATPAY_SUB_MCHIDS or subMchids: `sub_mchid`, or `sub_mchid:sub_appid`. */
function splitSubMerchant(value: string): [mchid: string, subAppid: string | undefined] {
  const [mchid, subAppid] = value.split(':', 2);
  return [mchid, subAppid || undefined];
}

/** The sub_appids configured with the sub-merchants (`sub_mchid:sub_appid` entries). */
export function readSubAppids(values: string[]): Record<string, string> | undefined {
  const pairs = values.map(splitSubMerchant).filter((pair): pair is [string, string] => pair[1] !== undefined);
  return pairs.length === 0 ? undefined : Object.fromEntries(pairs);
}

export function isPartner(account: PartnerAccount): boolean {
  return (account.subMchids?.length ?? 0) > 0;
}

/**
 * WECHATPAY_SUB_MCHIDS (or an accounts-file entry's subMchids): mchids, each once, none the
 * provider's own. Throws a ConfigurationError naming the bad value.
 */
export function readSubMchids(entries: string[], spMchid: string, where: string): string[] {
  const values = entries.map((entry) => splitSubMerchant(entry)[0]);
  const seen = new Set<string>();
  for (const value of values) {
    if (!MCHID.test(value)) {
      throw new ConfigurationError(`Invalid configuration: ${where} holds "${value}", which is not a mchid (digits)`);
    }
    if (value === spMchid) {
      throw new ConfigurationError(
        `Invalid configuration: ${where} holds ${value}, the service provider's own mchid; list its sub-merchants`,
      );
    }
    if (seen.has(value)) throw new ConfigurationError(`Invalid configuration: ${where} lists ${value} twice`);
    seen.add(value);
  }
  return values;
}

/**
 * A decrypted resource as the direct-mode reader knows it, and its sub-merchant. A partner
 * resource must come to a provider's account: its sp_mchid must be the account's, its sub_mchid
 * one of the account's sub-merchants; its sp_appid then stands for the appid (checked against
 * the account's app ids when they are set). A resource that names a mchid comes to a direct
 * merchant's account only. Anything else is a MerchantMismatch: refused with 401, nothing written.
 */
export function asDirectResource(
  resource: Record<string, unknown>,
  account: PartnerAccount,
): { resource: Record<string, unknown>; subMerchantId?: string } {
  const partnerFields = resource.sp_mchid !== undefined || resource.sub_mchid !== undefined;
  if (!isPartner(account)) {
    if (partnerFields) {
      throw new DomainError(
        'MerchantMismatch',
        `a service provider's notification (sp_mchid, sub_mchid) for mchid ${account.mchid}, which has no sub-merchants configured`,
      );
    }
    return { resource };
  }
  if (!partnerFields) {
    if (resource.mchid === undefined) return { resource };
    throw new DomainError(
      'MerchantMismatch',
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the notification's mchid, as it came, in the refusal
      `a direct merchant's notification (mchid ${String(resource.mchid)}) for service provider ${account.mchid}`,
    );
  }
  const spMchid = resource.sp_mchid;
  if (spMchid !== account.mchid) {
    throw new DomainError(
      'MerchantMismatch',
      `sp_mchid ${describe(spMchid)} is not the service provider whose platform key signed (${account.mchid})`,
    );
  }
  const subMchid = resource.sub_mchid;
  if (typeof subMchid !== 'string' || !account.subMchids!.includes(subMchid)) {
    throw new DomainError(
      'MerchantMismatch',
      `sub_mchid ${describe(subMchid)} is not a configured sub-merchant of sp_mchid ${account.mchid}`,
    );
  }
  checkSubAppid(resource.sub_appid, subMchid, account);
  // sp_appid is the provider's app: the account's app ids (WECHATPAY_APPIDS) are the sp_appids.
  const { sp_mchid: _sp, sp_appid: spAppid, ...rest } = resource;
  return { resource: { ...rest, mchid: spMchid, appid: spAppid }, subMerchantId: subMchid };
}

/** A sub-merchant configured with its sub_appid takes only notifications naming that app. */
export function checkSubAppid(subAppid: unknown, subMchid: string, account: PartnerAccount): void {
  const expected = account.subAppids?.[subMchid];
  if (expected !== undefined && subAppid !== expected) {
    throw new DomainError(
      'MerchantMismatch',
      `sub_appid ${describe(subAppid).slice(0, 32)} is not the application of sub-merchant ${subMchid}`,
    );
  }
}

/**
 * The sub-merchant of an APIv2 notification (`sub_mch_id`; its mch_id and appid are the provider's):
 * one of a provider's configured sub-merchants, and none for a direct merchant. Anything else is a
 * MerchantMismatch: refused with 401, nothing written.
 */
export function v2SubMerchant(subMchId: string | undefined, account: PartnerAccount): string | undefined {
  if (!isPartner(account)) {
    if (subMchId === undefined) return undefined;
    throw new DomainError(
      'MerchantMismatch',
      `a service provider's notification (sub_mch_id ${describe(subMchId)}) for mch_id ${account.mchid}, which has no sub-merchants configured`,
    );
  }
  if (subMchId === undefined || !account.subMchids!.includes(subMchId)) {
    throw new DomainError(
      'MerchantMismatch',
      `sub_mch_id ${describe(subMchId)} is not a configured sub-merchant of mch_id ${account.mchid}`,
    );
  }
  return subMchId;
}

/** The sub-merchants to ask about a trade: the one it names, or every one of the account's. */
export function subMerchantsToAsk(account: PartnerAccount, subMerchantId: string | undefined): string[] {
  if (subMerchantId !== undefined) return [subMerchantId];
  return account.subMchids ?? [];
}

/** Why a sub-merchant cannot be called for under this account, or undefined when it can. */
export function subMerchantRefusal(account: PartnerAccount, subMerchantId: string | undefined): string | undefined {
  if (!isPartner(account)) {
    return subMerchantId === undefined ? undefined : `mchid ${account.mchid} has no sub-merchants (${subMerchantId})`;
  }
  if (subMerchantId === undefined) return `the payment names no sub_mchid of service provider ${account.mchid}`;
  if (!account.subMchids!.includes(subMerchantId)) {
    return `sub_mchid ${subMerchantId} is not a configured sub-merchant of ${account.mchid}`;
  }
  return undefined;
}

/** The partner API paths. */
export const partnerPaths = {
  trade(orderNo: string, spMchid: string, subMchid: string): string {
    const query = `sp_mchid=${encodeURIComponent(spMchid)}&sub_mchid=${encodeURIComponent(subMchid)}`;
    return `/v3/pay/partner/transactions/out-trade-no/${encodeURIComponent(orderNo)}?${query}`;
  },
  close(orderNo: string): string {
    return `/v3/pay/partner/transactions/out-trade-no/${encodeURIComponent(orderNo)}/close`;
  },
  closeBody(spMchid: string, subMchid: string): string {
    return JSON.stringify({ sp_mchid: spMchid, sub_mchid: subMchid });
  },
  /** A refund query names the sub-merchant in its query string; the refund itself in its body. */
  refundQuery(refundPath: string, subMchid: string): string {
    return `${refundPath}?sub_mchid=${encodeURIComponent(subMchid)}`;
  },
};

function describe(value: unknown): string {
  return typeof value === 'string' ? value : '(none)';
}

/**
 * The options with the sub-merchants the merchant directory added, each to its service provider's
 * account. Only an account that is a service provider already (it has sub-merchants in its
 * configuration) takes more: a direct merchant's notifications name a mchid, not a sub_mchid, and
 * would be refused once it had any. One configured already is left as configured.
 */
export function withAddedSubMerchants(options: WechatpayOptions, added: readonly AddedSubMerchant[]): WechatpayOptions {
  const accounts = options.accounts.map((account) => {
    const mine = added.filter((a) => a.account === account.mchid && !account.subMchids?.includes(a.subMerchantId));
    if (mine.length === 0) return account;
    if (!isPartner(account)) {
      throw new ConfigurationError(`mchid ${account.mchid} is no service provider: it takes no sub-merchants`);
    }
    for (const { subMerchantId, subAppId } of mine) {
      if (!MCHID.test(subMerchantId) || subMerchantId === account.mchid) {
        throw new ConfigurationError(
          `sub-merchant ${subMerchantId} is not a sub_mchid of mchid ${account.mchid} (digits, not its own)`,
        );
      }
      if (subAppId !== undefined && !/^\w{1,32}$/.test(subAppId)) {
        throw new ConfigurationError(
          `sub_appid of sub-merchant ${subMerchantId} must be an app id (letters and digits)`,
        );
      }
    }
    const appids = mine
      .filter((a) => a.subAppId !== undefined)
      .map((a): [string, string] => [a.subMerchantId, a.subAppId!]);
    return {
      ...account,
      subMchids: [...account.subMchids!, ...mine.map((a) => a.subMerchantId)],
      subAppids: appids.length === 0 ? account.subAppids : { ...account.subAppids, ...Object.fromEntries(appids) },
    };
  });
  return { ...options, accounts };
}
