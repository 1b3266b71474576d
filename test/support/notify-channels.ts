/**
 * The two platforms as the e2e suites post to the notify routes: a freshly signed payment, the
 * route, and the channel's acknowledgement. The suites that test both channels the same way write
 * their cases once against this.
 */
import { Channel } from '../../src/domain/notification';
import { yuan } from '../../tools/simulator/platform-signers';
import { HttpAnswer, TestClient } from './test-app';

/** Exactly what goes over the wire, so that a delivery can be re-posted, or compared, byte for byte. */
export interface Delivery {
  headers: Record<string, string>;
  body: string;
}

export interface PaymentSpec {
  orderNo: string;
  transactionId: string;
  /** Minor units (fen). */
  amount: number;
  paidAt?: Date;
}

export interface NotifyChannel {
  name: Channel;
  /** A freshly signed paying notification (WeChat TRANSACTION.SUCCESS, Alipay TRADE_SUCCESS). */
  payment(p: PaymentSpec): Delivery;
  /** The channel's paying event type, as the delivery log keeps it. */
  paymentEventType: string;
  post(d: Delivery): Promise<HttpAnswer>;
  expectAck(a: HttpAnswer): void;
  /** The header names a reconciliation needs, kept with every accepted delivery as sent. */
  keptHeaders: string[];
}

/** A whole second in the recent past: both platforms write their payment times with second precision. */
export function recentSecond(): Date {
  return new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
}

const ALIPAY_CONTENT_TYPE = 'application/x-www-form-urlencoded; charset=utf-8';

/** An Alipay trade_status_sync form for the payment, with `tradeStatus`. */
export function alipayForm(client: TestClient, p: PaymentSpec, tradeStatus = 'TRADE_SUCCESS'): Delivery {
  const body = client.alipayPayment({
    outTradeNo: p.orderNo,
    tradeNo: p.transactionId,
    totalAmount: yuan(p.amount),
    tradeStatus,
    paidAt: p.paidAt,
  });
  return { headers: { 'content-type': ALIPAY_CONTENT_TYPE }, body };
}

/** The channels whose notifications these suites speak (UnionPay has a suite of its own). */
export type NotifyTestChannel = typeof Channel.Wechatpay | typeof Channel.Alipay;
export const NOTIFY_TEST_CHANNELS: readonly NotifyTestChannel[] = [Channel.Wechatpay, Channel.Alipay];

/** Both channels, speaking through the client `client()` answers when called (a suite sets it in beforeAll). */
export function notifyChannels(client: () => TestClient): Record<NotifyTestChannel, NotifyChannel> {
  return {
    [Channel.Wechatpay]: {
      name: Channel.Wechatpay,
      payment: (p) =>
        client().wechatpayPayment({
          outTradeNo: p.orderNo,
          transactionId: p.transactionId,
          total: p.amount,
          successTime: p.paidAt,
        }),
      paymentEventType: 'TRANSACTION.SUCCESS',
      post: (d) => client().postWechatpay(d),
      expectAck: (a) => expect({ status: a.status, body: a.body }).toEqual({ status: 204, body: '' }),
      keptHeaders: ['wechatpay-serial', 'wechatpay-signature', 'wechatpay-timestamp', 'wechatpay-nonce'],
    },
    [Channel.Alipay]: {
      name: Channel.Alipay,
      payment: (p) => alipayForm(client(), p),
      paymentEventType: 'TRADE_SUCCESS',
      post: (d) => client().postAlipay(d.body, d.headers['content-type']),
      expectAck: (a) => expect({ status: a.status, body: a.body }).toEqual({ status: 200, body: 'success' }),
      keptHeaders: ['content-type'],
    },
  };
}
