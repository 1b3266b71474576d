/**
 * Signed notifications as the platforms send them, for a key set, and how the service's answer reads to a person.
 * A success ack is WeChat's 204 (or 200) and Alipay's 200 with the body `success`; anything else is refused.
 */
import { KeyObject, randomBytes } from 'node:crypto';
import { alipayCertDelivery } from './alipay/alipay-cert-keys';
import { formatMinor, http, HttpAnswer, print } from './cli';
import { DevKeys, platformKeys } from './dev-keys';
import { alipayDelivery, alipayRefundParams, alipayTradeParams, wechatpayDelivery, yuan } from './platform-signers';
import { wechatpayPaymentResource, wechatpayRefundResource } from './wechatpay/partner-dialect';
import { newQueryId, unionpayPaymentForm, unionpayRefundForm } from './unionpay/unionpay-dev-keys';

export type SimulatedChannel = 'wechatpay' | 'alipay' | 'unionpay';
export const CHANNELS: SimulatedChannel[] = ['wechatpay', 'alipay', 'unionpay'];

export interface Notification {
  channel: SimulatedChannel;
  /** POST /notify/<notifyPath>: the channel's own endpoint unless another dialect has its own (wechatpay-v2). */
  notifyPath?: string;
  headers: Record<string, string>;
  body: string;
  /** One line saying what it is, for the output. */
  summary: string;
}

export interface PaymentParams {
  orderNo: string;
  transactionId: string;
  /** Minor units (fen). */
  amount: number;
  /** WeChat trade_state (SUCCESS by default) or Alipay trade_status (TRADE_SUCCESS by default). */
  status?: string;
  /** WeChat partner key set: the sub_mchid paid (its first by default). */
  subMchid?: string;
  /** UnionPay: the consumption's txnTime (yyyyMMddHHmmss, Beijing; now by default). */
  txnTime?: string;
}

export function paymentNotification(keys: DevKeys, channel: SimulatedChannel, p: PaymentParams): Notification {
  const summary = `${p.orderNo}  transaction ${p.transactionId}  ${formatMinor(p.amount)} CNY`;
  if (channel === 'unionpay') {
    const respCode = p.status ?? '00';
    const body = unionpayPaymentForm(keys.dir, { ...p, respCode });
    return { channel, ...alipayForm(body), summary: `UnionPay respCode ${respCode}  ${summary}` };
  }
  const signing = platformKeys(keys);
  if (channel === 'wechatpay') {
    const status = p.status ?? 'SUCCESS';
    const delivery = wechatpayDelivery(
      { privateKey: signing.wechatpay, serial: keys.wechatpay.publicKeyId, apiV3Key: keys.wechatpay.apiV3Key },
      {
        resource: wechatpayPaymentResource(keys, {
          outTradeNo: p.orderNo,
          transactionId: p.transactionId,
          total: p.amount,
          tradeState: status,
          subMchid: p.subMchid,
        }),
      },
    );
    return { channel, ...delivery, summary: `WeChat Pay ${status}  ${summary}` };
  }
  const status = p.status ?? 'TRADE_SUCCESS';
  const params = alipayTradeParams({
    appId: keys.alipay.appId,
    sellerId: keys.alipay.sellerId,
    outTradeNo: p.orderNo,
    tradeNo: p.transactionId,
    totalAmount: yuan(p.amount),
    tradeStatus: status,
  });
  return {
    channel,
    ...alipayForm(alipaySigned(keys, signing.alipay, params)),
    summary: `Alipay ${status}  ${summary}`,
  };
}

export interface RefundNoticeParams {
  orderNo: string;
  transactionId: string;
  refundNo: string;
  /** WeChat's refund_id. */
  channelRefundId: string;
  /** Minor units: refunded, and the payment's total. */
  amount: number;
  total: number;
  /** WeChat: SUCCESS, CLOSED or ABNORMAL. Alipay only notifies refunds that succeeded. */
  status: string;
  /** WeChat partner key set: the sub_mchid the refund was for. */
  subMchid?: string;
}

export function refundNotification(keys: DevKeys, channel: SimulatedChannel, p: RefundNoticeParams): Notification {
  const summary = `refund ${p.refundNo}  ${formatMinor(p.amount)} CNY of ${p.orderNo} (transaction ${p.transactionId})`;
  if (channel === 'unionpay') {
    // UnionPay's refund result: respCode 00 succeeded, anything else did not.
    const respCode = p.status === 'SUCCESS' ? '00' : '01';
    const body = unionpayRefundForm(keys.dir, { ...p, respCode });
    return { channel, ...alipayForm(body), summary: `UnionPay refund respCode ${respCode}  ${summary}` };
  }
  const signing = platformKeys(keys);
  if (channel === 'wechatpay') {
    const delivery = wechatpayDelivery(
      { privateKey: signing.wechatpay, serial: keys.wechatpay.publicKeyId, apiV3Key: keys.wechatpay.apiV3Key },
      {
        eventType: `REFUND.${p.status}`,
        originalType: 'refund',
        resource: wechatpayRefundResource(keys, {
          subMchid: p.subMchid,
          outTradeNo: p.orderNo,
          transactionId: p.transactionId,
          outRefundNo: p.refundNo,
          refundId: p.channelRefundId,
          refundStatus: p.status,
          total: p.total,
          refund: p.amount,
        }),
      },
    );
    return { channel, ...delivery, summary: `WeChat Pay REFUND.${p.status}  ${summary}` };
  }
  const params = alipayRefundParams({
    appId: keys.alipay.appId,
    sellerId: keys.alipay.sellerId,
    outTradeNo: p.orderNo,
    tradeNo: p.transactionId,
    totalAmount: yuan(p.total),
    outBizNo: p.refundNo,
    refundFee: yuan(p.amount),
    tradeStatus: p.amount === p.total ? 'TRADE_CLOSED' : 'TRADE_SUCCESS',
  });
  return { channel, ...alipayForm(alipaySigned(keys, signing.alipay, params)), summary: `Alipay refund  ${summary}` };
}

/** In certificate mode the notification names the signing certificate in alipay_cert_sn. */
function alipaySigned(keys: DevKeys, key: KeyObject, params: Record<string, string>): string {
  const certMode = keys.alipay.certMode;
  return certMode ? alipayCertDelivery(key, certMode.alipayCertSn, params) : alipayDelivery(key, params);
}

/** A transaction id shaped like the channel's: WeChat 4200…, 28 digits; Alipay 2026…, 28 digits; UnionPay's queryId, 21 digits. */
export function newTransactionId(channel: SimulatedChannel): string {
  const digits = randomBytes(24).reduce((text, byte) => text + (byte % 10), '');
  if (channel === 'unionpay') return newQueryId();
  return `${channel === 'wechatpay' ? '4200' : '2026'}${digits}`;
}

export interface Ack {
  acked: boolean;
  status: number;
  /** What the service said, in words. */
  said: string;
  ms: number;
}

export async function deliver(target: string, notification: Notification): Promise<Ack> {
  const answer = await http(`${target}/notify/${notification.notifyPath ?? notification.channel}`, {
    method: 'POST',
    headers: notification.headers,
    body: notification.body,
  });
  return readAck(notification.channel, answer);
}

export function printAck(n: number, ack: Ack): void {
  const verdict = ack.acked ? 'acked' : 'REFUSED';
  print(`  #${n}  ${ack.status}  ${verdict}${ack.said ? `: ${ack.said}` : ''}  (${Math.round(ack.ms)} ms)`);
}

function readAck(channel: SimulatedChannel, answer: HttpAnswer): Ack {
  const base = { status: answer.status, ms: answer.ms };
  // UnionPay takes any 200 as the ack.
  if (channel === 'unionpay' && answer.status === 200) return { ...base, acked: true, said: '' };
  if (channel === 'unionpay')
    return { ...base, acked: false, said: answer.headers.get('x-fail-reason') ?? answer.body };
  if (channel === 'alipay') {
    const acked = answer.status === 200 && answer.body === 'success';
    return { ...base, acked, said: acked ? '' : (answer.headers.get('x-fail-reason') ?? answer.body) };
  }
  if (answer.status === 204 || answer.status === 200) return { ...base, acked: true, said: '' };
  let said = answer.body;
  // WeChat Pay v2 answers in XML: its return_msg says why.
  const returnMsg = /<return_msg><!\[CDATA\[([\s\S]*?)\]\]><\/return_msg>/.exec(answer.body)?.[1];
  if (returnMsg !== undefined) return { ...base, acked: false, said: returnMsg };
  try {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the service's answer, printed as it came
    said = String((JSON.parse(answer.body) as { message?: unknown }).message ?? answer.body);
  } catch {
    // not JSON: the body as it is
  }
  return { ...base, acked: false, said };
}

function alipayForm(body: string): { headers: Record<string, string>; body: string } {
  return { headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' }, body };
}
