/**
 * The simulator's WeChat Pay partner dialect. A key set made by `simulate init --dialect partner` is a service
 * provider's: its mchid is the sp_mchid, its appid the sp_appid, and it collects for two sub-merchants. Every WeChat
 * Pay notification of such a key set is partner-shaped (sp_mchid, sub_mchid, …): the service, configured with
 * WECHATPAY_SUB_MCHIDS, refuses any other.
 */
import { UsageError } from '../cli';
import type { DevKeys } from '../dev-keys';
import {
  wechatpayRefund,
  WechatpayRefundParams,
  wechatpayTransaction,
  WechatpayTransactionParams,
} from './wechatpay-signer';
import { wechatpayPartnerRefund, wechatpayPartnerTransaction } from './partner-resources';
import { KEY_SET_DIALECTS } from './wechatpay-dev-keys';

const DIALECTS = KEY_SET_DIALECTS;
type Dialect = (typeof DIALECTS)[number];

export function isPartnerKeySet(keys: DevKeys): boolean {
  return (keys.wechatpay.subMchids?.length ?? 0) > 0;
}

/** `--dialect` (the key set's own by default) and `--sub-mchid` (its first sub-merchant by default), checked. */
export function wechatpayDialect(
  keys: DevKeys,
  dialect: string | undefined,
  subMchid: string | undefined,
): { dialect: Dialect; subMchid?: string } {
  const chosen = dialect ?? (isPartnerKeySet(keys) ? 'partner' : 'v3');
  if (!DIALECTS.includes(chosen as Dialect)) throw new UsageError(`--dialect must be ${DIALECTS.join(' or ')}`);
  if (chosen === 'partner' && !isPartnerKeySet(keys)) {
    throw new UsageError(
      "this key set is a direct merchant's: run `simulate init --dialect partner --force` for a service provider's",
    );
  }
  if (chosen === 'v3' && isPartnerKeySet(keys)) {
    throw new UsageError("this key set is a service provider's: its notifications are --dialect partner");
  }
  if (chosen === 'v3') {
    if (subMchid !== undefined) throw new UsageError('--sub-mchid goes with --dialect partner');
    return { dialect: 'v3' };
  }
  return { dialect: 'partner', subMchid: subMchid ?? keys.wechatpay.subMchids![0] };
}

/** The decrypted payment resource for this key set: partner-shaped for a provider's. */
export function wechatpayPaymentResource(
  keys: DevKeys,
  p: Omit<WechatpayTransactionParams, 'mchid' | 'appid'> & { subMchid?: string },
): object {
  const { mchid, appid, subMchids } = keys.wechatpay;
  if (!subMchids?.length) return wechatpayTransaction({ mchid, appid, ...p });
  return wechatpayPartnerTransaction({ spMchid: mchid, spAppid: appid, subMchid: p.subMchid ?? subMchids[0], ...p });
}

/** The decrypted refund resource for this key set: partner-shaped for a provider's. */
export function wechatpayRefundResource(
  keys: DevKeys,
  p: Omit<WechatpayRefundParams, 'mchid'> & { subMchid?: string },
): object {
  const { mchid, subMchids } = keys.wechatpay;
  if (!subMchids?.length) return wechatpayRefund({ mchid, ...p });
  return wechatpayPartnerRefund({ spMchid: mchid, subMchid: p.subMchid ?? subMchids[0], ...p });
}
