import { UsageError } from '../../cli';
import type { DevKeys } from '../../dev-keys';
import {
  Notification,
  PaymentParams,
  paymentSummary,
  RefundNoticeParams,
  refundSummary,
} from '../../channel-simulator';
import { readSignType, V2SignType } from '../../../../src/channels/wechatpay/v2/wechatpay-v2.sign';
import { v2PaymentNotification, v2RefundNotification } from './v2-notifications';

/** The endpoint v2's XML notifications go to. */
export const V2_NOTIFY_PATH = 'wechatpay-v2';
const XML = { 'content-type': 'text/xml' };

export const DIALECTS = ['v3', 'v2'] as const;
export type Dialect = (typeof DIALECTS)[number];

/** --dialect: v3 (JSON, the default) or v2 (XML, WeChat Pay only). */
export function dialectOption(value: string | undefined, channel: string): Dialect {
  const dialect = (value ?? 'v3') as Dialect;
  if (!DIALECTS.includes(dialect)) throw new UsageError(`--dialect must be v3 or v2, got "${value}"`);
  if (dialect === 'v2' && channel !== 'wechatpay') throw new UsageError('--dialect v2 is WeChat Pay only');
  return dialect;
}

/** --sign-type of a v2 notification: MD5 (WeChat's default) or HMAC-SHA256. */
export function signTypeOption(value: string | undefined): V2SignType {
  const type = readSignType(value);
  if (!type) throw new UsageError(`--sign-type must be MD5 or HMAC-SHA256, got "${value}"`);
  return type;
}

function apiV2Key(keys: DevKeys): string {
  const key = keys.wechatpay.apiV2Key;
  if (!key) {
    throw new UsageError(
      `the key set in ${keys.dir} has no APIv2 key (made before v2 existed): run \`npm run simulate -- init --force\``,
    );
  }
  return key;
}

/** A v2 payment result (result_code = --status, SUCCESS by default), signed with the key set's APIv2 key. */
export function v2PaymentDelivery(keys: DevKeys, p: PaymentParams, signType: V2SignType): Notification {
  const resultCode = (p.status ?? 'SUCCESS') === 'SUCCESS' ? 'SUCCESS' : 'FAIL';
  const body = v2PaymentNotification(
    {
      mchid: keys.wechatpay.mchid,
      appid: keys.wechatpay.appid,
      outTradeNo: p.orderNo,
      transactionId: p.transactionId,
      totalFee: p.amount,
      paidAt: new Date(),
      resultCode,
    },
    apiV2Key(keys),
    signType,
  );
  const summary = paymentSummary(p);
  return {
    channel: 'wechatpay',
    notifyPath: V2_NOTIFY_PATH,
    headers: XML,
    body,
    summary: `WeChat Pay v2 ${resultCode} (${signType})  ${summary}`,
  };
}

/** A v2 refund result: req_info encrypted with MD5(APIv2 key). --status SUCCESS, CHANGE or REFUNDCLOSE. */
export function v2RefundDelivery(keys: DevKeys, p: RefundNoticeParams): Notification {
  const status = ({ SUCCESS: 'SUCCESS', ABNORMAL: 'CHANGE', CLOSED: 'REFUNDCLOSE' } as const)[
    p.status as 'SUCCESS' | 'ABNORMAL' | 'CLOSED'
  ];
  if (!status) throw new UsageError(`--status must be SUCCESS, CLOSED or ABNORMAL, got "${p.status}"`);
  const body = v2RefundNotification(
    {
      mchid: keys.wechatpay.mchid,
      appid: keys.wechatpay.appid,
      outRefundNo: p.refundNo,
      refundId: p.channelRefundId,
      outTradeNo: p.orderNo,
      transactionId: p.transactionId,
      refundFee: p.amount,
      totalFee: p.total,
      status,
    },
    apiV2Key(keys),
  );
  const summary = refundSummary(p);
  return {
    channel: 'wechatpay',
    notifyPath: V2_NOTIFY_PATH,
    headers: XML,
    body,
    summary: `WeChat Pay v2 refund ${status}  ${summary}`,
  };
}
