/**
 * Alipay as the simulator plays it: trade_status_sync notifications (with alipay_cert_sn in certificate mode),
 * the buyer taking an app's orderStr to the gateway, and the gateway on the shared fake platform.
 */
import { KeyObject, randomBytes } from 'node:crypto';
import { ChannelSimulator, failReason, formDelivery, paymentSummary, refundSummary } from '../channel-simulator';
import type { DevKeys } from '../dev-keys';
import { fakePlatformSide } from '../fake-platform-side';
import { alipayDelivery, alipayRefundParams, alipayTradeParams, yuan } from './alipay-signer';
import { alipayCertDelivery } from './alipay-cert-keys';
import { alipayKeySet, alipayPlatformKey } from './alipay-dev-keys';

const NAME = 'alipay';

export const alipaySimulator: ChannelSimulator = {
  name: NAME,
  title: 'Alipay',
  keySet: alipayKeySet,
  payingStatus: 'TRADE_SUCCESS',
  payingStatuses: ['TRADE_SUCCESS', 'TRADE_FINISHED'],
  buyerActions: {
    'alipay.trade.page.pay': 'posts the page pay form to Alipay and pays at the cashier',
    'alipay.trade.wap.pay': 'posts the wap pay form to Alipay and pays at the cashier',
    'alipay.trade.app.pay': "takes the orderStr to Alipay in the app (the SDK's payOrder)",
    'alipay.trade.precreate': 'scans the qr_code',
    'alipay.trade.create': 'pays in the mini-program (my.tradePay with the trade_no)',
  },

  /** 2026…, 28 digits. */
  newTransactionId: () => `2026${randomBytes(24).reduce((text, byte) => text + (byte % 10), '')}`,

  paymentNotification(keys, p) {
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
      channel: NAME,
      ...formDelivery(signed(keys, alipayPlatformKey(keys), params)),
      summary: `Alipay ${status}  ${paymentSummary(p)}`,
    };
  },

  refundNotification(keys, p) {
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
    return {
      channel: NAME,
      ...formDelivery(signed(keys, alipayPlatformKey(keys), params)),
      summary: `Alipay refund  ${refundSummary(p)}`,
    };
  },

  /** A 200 with the body `success` acks; anything else is refused. */
  readAck(answer) {
    const acked = answer.status === 200 && answer.body === 'success';
    return { acked, said: acked ? '' : failReason(answer) };
  },

  refundStatusRefusal: (status) =>
    status === 'SUCCESS' ? undefined : 'Alipay notifies only refunds that succeeded: --status SUCCESS',

  /** The app's orderStr, which the SDK posts to the gateway (payOrder). */
  buyerRequest: (keys, params) =>
    params.orderStr ? { url: `http://127.0.0.1:${keys.platformPort}/gateway.do`, body: params.orderStr } : undefined,

  startPlatform: ({ fake }) =>
    Promise.resolve(
      fakePlatformSide(fake, {
        name: NAME,
        id: 'ALIPAY',
        description: `Alipay gateway ${fake.alipayGatewayUrl}`,
        // Alipay's trade_no, which a trade has from its creation (WeChat Pay's comes with the payment).
        createdTransactionId: (trade) => trade.transactionId,
      }),
    ),
};

/** In certificate mode the notification names the signing certificate in alipay_cert_sn. */
function signed(keys: DevKeys, key: KeyObject, params: Record<string, string>): string {
  const certMode = keys.alipay.certMode;
  return certMode ? alipayCertDelivery(key, certMode.alipayCertSn, params) : alipayDelivery(key, params);
}
