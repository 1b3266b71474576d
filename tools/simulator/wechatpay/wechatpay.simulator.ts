/**
 * WeChat Pay as the simulator plays it: APIv3 notifications (a direct merchant's or, with a partner key set, a
 * service provider's), APIv2's XML ones with `--dialect v2`, and its API on the shared fake platform.
 */
import { randomBytes } from 'node:crypto';
import { UsageError } from '../cli';
import { ChannelSimulator, OptionValues, paymentSummary, refundSummary } from '../channel-simulator';
import { fakePlatformSide } from '../fake-platform-side';
import { wechatpayDelivery, WechatpaySigner } from './wechatpay-signer';
import type { DevKeys } from '../dev-keys';
import { wechatpayDialect, wechatpayPaymentResource, wechatpayRefundResource } from './partner-dialect';
import { dialectOption, signTypeOption, v2PaymentDelivery, v2RefundDelivery } from './v2/v2-simulation';
import { wechatpayKeySet, wechatpayPlatformKey } from './wechatpay-dev-keys';

const NAME = 'wechatpay';

export const wechatpaySimulator: ChannelSimulator = {
  name: NAME,
  title: 'WeChat Pay',
  keySet: wechatpayKeySet,
  payingStatus: 'SUCCESS',
  payingStatuses: ['SUCCESS'],
  buyerActions: {
    jsapi: 'confirms the prepay in WeChat (wx.requestPayment)',
    app: 'confirms the prepay in the app',
    native: 'scans the code_url',
    h5: 'opens the h5_url',
  },

  /** 4200…, 28 digits. */
  newTransactionId: () => `4200${randomBytes(24).reduce((text, byte) => text + (byte % 10), '')}`,

  paymentNotification(keys, p) {
    const status = p.status ?? 'SUCCESS';
    const delivery = wechatpayDelivery(signer(keys), {
      resource: wechatpayPaymentResource(keys, {
        outTradeNo: p.orderNo,
        transactionId: p.transactionId,
        total: p.amount,
        tradeState: status,
        subMchid: p.subMchid,
      }),
    });
    return { channel: NAME, ...delivery, summary: `WeChat Pay ${status}  ${paymentSummary(p)}` };
  },

  /** APIv3's REFUND.<status>; APIv2's req_info with `--dialect v2`. */
  refundNotification(keys, p, values) {
    if (values.dialect === 'v2') return v2RefundDelivery(keys, p);
    const delivery = wechatpayDelivery(signer(keys), {
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
    });
    return { channel: NAME, ...delivery, summary: `WeChat Pay REFUND.${p.status}  ${refundSummary(p)}` };
  },

  /** A 204 (or 200) acks; a refusal says why in its JSON message, or in v2's XML return_msg. */
  readAck(answer) {
    if (answer.status === 204 || answer.status === 200) return { acked: true, said: '' };
    const returnMsg = /<return_msg><!\[CDATA\[([\s\S]*?)\]\]><\/return_msg>/.exec(answer.body)?.[1];
    if (returnMsg !== undefined) return { acked: false, said: returnMsg };
    try {
      const { message } = JSON.parse(answer.body) as { message?: unknown };
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the service's answer, printed as it came
      return { acked: false, said: String(message ?? answer.body) };
    } catch {
      return { acked: false, said: answer.body };
    }
  },

  pay: {
    options: { dialect: { type: 'string' }, 'sub-mchid': { type: 'string' }, 'sign-type': { type: 'string' } },
    usage: '[--dialect v3|partner|v2] [--sub-mchid ID] [--sign-type MD5|HMAC-SHA256]',
    check(values, channel) {
      // v2 is its own notification endpoint; v3 and partner are the APIv3 dialects of the key set.
      if (values.dialect === 'v2') dialectOption('v2', channel ?? NAME);
      signTypeOption(values['sign-type'] as string | undefined);
      if (channel !== NAME && (values.dialect !== undefined || values['sub-mchid'] !== undefined)) {
        throw new UsageError('--dialect and --sub-mchid are WeChat Pay options');
      }
    },
    /** WeChat Pay v2: an XML result_code, signed with the APIv2 key, at /notify/wechatpay-v2. */
    prepare({ keys, values }) {
      if (values.dialect === 'v2') {
        const signType = signTypeOption(values['sign-type'] as string | undefined);
        return Promise.resolve({ sign: (payment) => v2PaymentDelivery(keys, payment, signType) });
      }
      const { subMchid } = wechatpayDialect(keys, option(values, 'dialect'), option(values, 'sub-mchid'));
      return Promise.resolve({ params: { subMchid } });
    },
  },

  refundNotice: {
    options: { dialect: { type: 'string' } },
    usage: '[--dialect v3|v2]',
    check(values, channel) {
      dialectOption(option(values, 'dialect'), channel ?? NAME);
    },
  },

  startPlatform: ({ fake }) =>
    Promise.resolve(
      fakePlatformSide(fake, {
        name: NAME,
        id: 'WECHATPAY',
        description: `WeChat Pay API ${fake.wechatpayBaseUrl}`,
        refundId: (platform, refundNo) => platform.wechatpayRefundId(refundNo),
        // WeChat's queries of the refund then report the status the notification gives.
        settle(refundNo, status) {
          if (fake.wechatpayRefundId(refundNo)) fake.settle(refundNo, status);
        },
      }),
    ),
};

function signer(keys: DevKeys): WechatpaySigner {
  return {
    privateKey: wechatpayPlatformKey(keys),
    serial: keys.wechatpay.publicKeyId,
    apiV3Key: keys.wechatpay.apiV3Key,
  };
}

function option(values: OptionValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}
