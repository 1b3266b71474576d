/**
 * The fake WeChat Pay APIv3's create calls: `POST /v3/pay/transactions/{jsapi,native,h5,app}` and the partner
 * `POST /v3/pay/partner/transactions/{…}`. The request is checked as WeChat checks it (the signing merchant's own
 * mchid or sp_mchid, an appid, the amount, notify_url, time_expire, the payer each type needs); the trade is then
 * created UNPAID, or found when the same terms come again, and refused when the order number has other terms.
 */
import { createHash } from 'node:crypto';
import { FakeTrade, isNonEmptyString, isPositiveInteger, parseJsonObject, randomDigits, Refusal } from '../fake-api';
import { randomAlphanumeric } from '../signing';
import { checkSubMchid, PartnerMerchant } from './fake-wechatpay-partner';

/** `/v3/pay/transactions/{type}` and `/v3/pay/partner/transactions/{type}`. */
export const WECHATPAY_CREATE_PATH = /^\/v3\/pay\/(partner\/)?transactions\/(jsapi|native|h5|app)$/;

const TIME_EXPIRE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?([+-]\d{2}:\d{2}|Z)$/;

export interface WechatpayCreateRequest {
  tradeType: string;
  partner: boolean;
  outTradeNo: string;
  mchid: string;
  subMchid?: string;
  appid: string;
  subAppid?: string;
  amount: number;
  currency: string;
  notifyUrl: string;
  timeExpire: string;
  json: Record<string, unknown>;
  /** A fingerprint of the terms: the same request again is the same trade. */
  terms: string;
}

/** The create request as WeChat Pay reads it; throws a Refusal (PARAM_ERROR) for what it refuses. */
export function parseWechatpayCreate(
  path: string,
  body: string,
  merchant: PartnerMerchant & { mchid: string },
): WechatpayCreateRequest {
  const [, partnerPath, tradeType] = WECHATPAY_CREATE_PATH.exec(path)!;
  const partner = partnerPath !== undefined;
  const json = parseJsonObject(body, 'PARAM_ERROR');
  const mchid = partner ? json.sp_mchid : json.mchid;
  if (mchid !== merchant.mchid) {
    throw new Refusal(
      'PARAM_ERROR',
      `${partner ? 'sp_mchid' : 'mchid'} "${String(mchid)}" is not the signing merchant's`,
    );
  }
  const subMchid = partner ? checkSubMchid(merchant, json.sub_mchid) : undefined;
  if (partner && subMchid === undefined) throw new Refusal('PARAM_ERROR', 'sub_mchid is missing');
  const appid = partner ? json.sp_appid : json.appid;
  if (!isNonEmptyString(appid)) throw new Refusal('PARAM_ERROR', `${partner ? 'sp_appid' : 'appid'} is missing`);
  const subAppid = partner && isNonEmptyString(json.sub_appid) ? json.sub_appid : undefined;
  if (!isNonEmptyString(json.description)) throw new Refusal('PARAM_ERROR', 'description is missing');
  if (!isNonEmptyString(json.out_trade_no) || !/^[0-9A-Za-z_\-|*]{6,32}$/.test(json.out_trade_no)) {
    throw new Refusal('PARAM_ERROR', 'out_trade_no must be 6 to 32 of [0-9A-Za-z_-|*]');
  }
  if (!isNonEmptyString(json.notify_url) || !/^https?:\/\/[^\s?#]+$/.test(json.notify_url)) {
    throw new Refusal('PARAM_ERROR', 'notify_url must be an http(s) URL without a query');
  }
  if (json.time_expire !== undefined && !(isNonEmptyString(json.time_expire) && TIME_EXPIRE.test(json.time_expire))) {
    throw new Refusal('PARAM_ERROR', 'time_expire is not RFC 3339');
  }
  const amount = (json.amount ?? {}) as Record<string, unknown>;
  if (!isPositiveInteger(amount.total)) throw new Refusal('PARAM_ERROR', 'amount.total must be a positive integer');
  const currency = amount.currency ?? 'CNY';
  if (currency !== 'CNY') throw new Refusal('PARAM_ERROR', `amount.currency ${JSON.stringify(currency)} is not CNY`);
  const payer = (json.payer ?? {}) as Record<string, unknown>;
  if (tradeType === 'jsapi') {
    const openid = !partner ? payer.openid : subAppid ? payer.sub_openid : payer.sp_openid;
    if (!isNonEmptyString(openid)) throw new Refusal('PARAM_ERROR', "the payer's openid is missing");
  }
  if (tradeType === 'h5') {
    const scene = (json.scene_info ?? {}) as Record<string, unknown>;
    const h5 = (scene.h5_info ?? {}) as Record<string, unknown>;
    if (!isNonEmptyString(scene.payer_client_ip))
      throw new Refusal('PARAM_ERROR', 'scene_info.payer_client_ip is missing');
    if (!isNonEmptyString(h5.type)) throw new Refusal('PARAM_ERROR', 'scene_info.h5_info.type is missing');
  }
  return {
    tradeType,
    partner,
    outTradeNo: json.out_trade_no,
    mchid: merchant.mchid,
    ...(subMchid === undefined ? {} : { subMchid }),
    appid,
    ...(subAppid === undefined ? {} : { subAppid }),
    amount: amount.total,
    currency: currency,
    notifyUrl: json.notify_url,
    timeExpire: json.time_expire ?? '',
    json,
    terms: createHash('sha256').update(body).digest('hex'),
  };
}

/** The answer of a created trade: prepay_id, code_url or h5_url, as the trade type gives. */
export function wechatpayCreateAnswer(tradeType: string, trade: FakeTrade): object {
  const prepayId = `wx${randomDigits(14)}${randomAlphanumeric(16)}`;
  if (tradeType === 'native')
    return { code_url: `weixin://wxpay/bizpayurl?pr=${randomAlphanumeric(7)}&t=${trade.outTradeNo}` };
  if (tradeType === 'h5') {
    return {
      h5_url: `https://wx.tenpay.com/cgi-bin/mmpayweb-bin/checkmweb?prepay_id=${prepayId}&package=${randomDigits(10)}`,
    };
  }
  return { prepay_id: prepayId };
}
