import { randomBytes } from 'node:crypto';
import { CreatePaymentRequest, CreatePaymentResult, PaymentMethod } from '../../domain/channel-api';
import { WechatpayAccount } from './wechatpay.config';
import { isPartner, subMerchantRefusal } from './wechatpay.partner';

/** WeChat Pay's trade types, as the API's `method` names them; APIv3's path and APIv2's trade_type of each. */
export const WECHATPAY_PAYMENT_METHODS: readonly (PaymentMethod & { v3Path: string; v2TradeType: string })[] = [
  {
    name: 'JSAPI',
    needs: ['openid'],
    summary: "wx.requestPayment's signed parameters (appId, timeStamp, nonceStr, package, signType, paySign)",
    v3Path: 'jsapi',
    v2TradeType: 'JSAPI',
  },
  {
    name: 'MINI_PROGRAM',
    needs: ['openid'],
    summary: "wx.requestPayment's signed parameters, in a mini-program (appId is the mini-program's)",
    v3Path: 'jsapi',
    v2TradeType: 'JSAPI',
  },
  {
    name: 'NATIVE',
    needs: [],
    summary: 'code_url, to show as a QR code the buyer scans',
    v3Path: 'native',
    v2TradeType: 'NATIVE',
  },
  {
    name: 'H5',
    needs: ['clientIp', 'h5Type'],
    summary: "h5_url, where the buyer's mobile browser goes (valid 5 minutes)",
    v3Path: 'h5',
    v2TradeType: 'MWEB',
  },
  {
    name: 'APP',
    needs: [],
    summary: "the app SDK's signed parameters (appid, partnerid, prepayid, package, noncestr, timestamp, sign)",
    v3Path: 'app',
    v2TradeType: 'APP',
  },
];

/** A prepay_id (and the code_url) lives 2 hours; an h5_url 5 minutes. */
export const PREPAY_VALIDITY_MS = 2 * 3600_000;
export const H5_URL_VALIDITY_MS = 5 * 60_000;

export function wechatpayMethod(name: string): (typeof WECHATPAY_PAYMENT_METHODS)[number] {
  return WECHATPAY_PAYMENT_METHODS.find((m) => m.name === name)!;
}

/** The apps a payment is made in: the buyer's app, and the sub-merchant's in partner mode. */
export interface PaymentApps {
  /** appid (direct) or sp_appid (partner). */
  appid: string;
  /** Partner mode with the sub-merchant's own app: sub_appid, the app the openid and the buyer's parameters belong to. */
  subAppid?: string;
}

/**
 * Why the account cannot create this payment as asked: an app that is not its own, a partner
 * payment without a configured sub-merchant, a sub_appid that is not the sub-merchant's.
 */
export function wechatpayCreateRefusal(
  account: WechatpayAccount | undefined,
  request: CreatePaymentRequest,
): string | undefined {
  if (!account) return `mchid ${request.merchantId} is not one of our accounts`;
  if (request.currency !== 'CNY') return `WeChat Pay's domestic payments are in CNY, not ${request.currency}`;
  if (account.appids.length === 0) {
    return `mchid ${account.mchid} has no app to create payments in: set WECHATPAY_APPIDS (or appids in the accounts file)`;
  }
  if (request.appId !== undefined && !account.appids.includes(request.appId)) {
    return `appId ${request.appId} is not an app of mchid ${account.mchid} (${account.appids.join(', ')})`;
  }
  const subRefusal = subMerchantRefusal(account, request.subMerchantId);
  if (subRefusal) return subRefusal;
  if (request.subAppId !== undefined) {
    if (!isPartner(account)) return `subAppId needs a service provider's account; mchid ${account.mchid} is direct`;
    const configured = account.subAppids?.[request.subMerchantId!];
    if (configured !== undefined && configured !== request.subAppId) {
      return `subAppId ${request.subAppId} is not the app of sub-merchant ${request.subMerchantId} (${configured})`;
    }
  }
  return undefined;
}

export function appsOf(account: WechatpayAccount, request: CreatePaymentRequest): PaymentApps {
  return { appid: request.appId ?? account.appids[0], ...(request.subAppId ? { subAppid: request.subAppId } : {}) };
}

/** time_expire: RFC 3339 in Beijing time, whole seconds, as WeChat's examples write it. */
export function beijingRfc3339(at: Date): string {
  const beijing = new Date(at.getTime() + 8 * 3600_000);
  return `${beijing.toISOString().slice(0, 19)}+08:00`;
}

export function nonce(): string {
  return randomBytes(16).toString('hex');
}

/** What the buyer's client is given for a prepay_id: wx.requestPayment's or the app SDK's, signed by `sign`. */
export function prepayBuyer(
  method: string,
  apps: PaymentApps,
  partnerId: string,
  prepayId: string,
  sign: (message: string) => string,
  now: Date,
): Record<string, string> {
  const appId = apps.subAppid ?? apps.appid;
  const timeStamp = String(Math.floor(now.getTime() / 1000));
  const nonceStr = nonce();
  if (method === 'APP') {
    return {
      appid: appId,
      partnerid: partnerId,
      prepayid: prepayId,
      package: 'Sign=WXPay',
      noncestr: nonceStr,
      timestamp: timeStamp,
      sign: sign(`${appId}\n${timeStamp}\n${nonceStr}\n${prepayId}\n`),
    };
  }
  const pkg = `prepay_id=${prepayId}`;
  return {
    appId,
    timeStamp,
    nonceStr,
    package: pkg,
    signType: 'RSA',
    paySign: sign(`${appId}\n${timeStamp}\n${nonceStr}\n${pkg}\n`),
  };
}

export type { CreatePaymentResult };
