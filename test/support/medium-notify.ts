/**
 * The notify route's use case without HTTP: NotificationIntake.receive takes the bytes and headers
 * a platform sent and gives the reply the route would write (status, headers, body). The medium
 * suites about deliveries post through this, and read the platform's ack or refusal from it.
 */
import { PlatformReply } from '../../src/channels/payment-channel';
import { Channel } from '../../src/domain/notification';
import { yuan } from '../../tools/simulator/platform-signers';
import { MediumContext } from './medium';
import { receivePlatformReply } from './medium-intake';
import { SignedDeliveries } from './test-app';

/** Exactly what a platform sends, so that it can be delivered again byte for byte. */
export interface Delivery {
  headers: Record<string, string>;
  body: string;
}

export interface IntakePayment {
  orderNo: string;
  transactionId: string;
  /** Minor units (fen). */
  amount: number;
  paidAt?: Date;
}

export const FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded; charset=utf-8';

/** Delivers to NotificationIntake of `ctx` as POST /notify/<notifyPath> would. */
export class Intake {
  constructor(private readonly ctx: MediumContext) {}

  receive(notifyPath: string, delivery: Delivery): Promise<PlatformReply> {
    return receivePlatformReply(this.ctx, notifyPath, delivery.headers, delivery.body);
  }

  wechatpay(delivery: Delivery): Promise<PlatformReply> {
    return this.receive('wechatpay', delivery);
  }

  alipay(form: string, contentType = FORM_CONTENT_TYPE): Promise<PlatformReply> {
    return this.receive('alipay', { headers: { 'content-type': contentType }, body: form });
  }
}

/** A reply as the tests compare it: its status and body (a 204's is undefined). */
export const replyOf = (r: PlatformReply) => ({ status: r.status, body: r.body });

export const WECHATPAY_ACK = { status: 204, body: undefined };
export const ALIPAY_ACK = { status: 200, body: 'success' };

/** Whether the platform was acked (WeChat Pay's 204, Alipay's `success`). */
export const acked = (r: PlatformReply) => r.status === 204 || (r.status === 200 && r.body === 'success');

/** One platform as the delivery suites speak it through the use case. */
export interface IntakeChannel {
  name: typeof Channel.Wechatpay | typeof Channel.Alipay;
  /** A freshly signed paying notification (WeChat TRANSACTION.SUCCESS, Alipay TRADE_SUCCESS). */
  payment(p: IntakePayment): Delivery;
  deliver(d: Delivery): Promise<PlatformReply>;
  expectAck(r: PlatformReply): void;
  /** The channel's "deliver again" reply: WeChat's {code: FAIL}, Alipay's `fail`; with `status` when told. */
  expectFailure(r: PlatformReply, status?: number): void;
  /** The header names kept with every accepted delivery as sent. */
  keptHeaders: string[];
}

export function alipayPaymentForm(signed: SignedDeliveries, p: IntakePayment, tradeStatus = 'TRADE_SUCCESS'): Delivery {
  const body = signed.alipayPayment({
    outTradeNo: p.orderNo,
    tradeNo: p.transactionId,
    totalAmount: yuan(p.amount),
    tradeStatus,
    paidAt: p.paidAt,
  });
  return { headers: { 'content-type': FORM_CONTENT_TYPE }, body };
}

export function intakeChannels(
  signed: () => SignedDeliveries,
  intake: () => Intake,
): Record<IntakeChannel['name'], IntakeChannel> {
  const failure = (r: PlatformReply, status: number | undefined, body: unknown) => {
    if (status) expect(r.status).toBe(status);
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.body).toEqual(body);
  };
  return {
    [Channel.Wechatpay]: {
      name: Channel.Wechatpay,
      payment: (p) =>
        signed().wechatpayPayment({
          outTradeNo: p.orderNo,
          transactionId: p.transactionId,
          total: p.amount,
          successTime: p.paidAt,
        }),
      deliver: (d) => intake().wechatpay(d),
      expectAck: (r) => expect(replyOf(r)).toEqual(WECHATPAY_ACK),
      expectFailure: (r, status) => failure(r, status, { code: 'FAIL', message: expect.stringMatching(/\S/) }),
      keptHeaders: ['wechatpay-serial', 'wechatpay-signature', 'wechatpay-timestamp', 'wechatpay-nonce'],
    },
    [Channel.Alipay]: {
      name: Channel.Alipay,
      payment: (p) => alipayPaymentForm(signed(), p),
      deliver: (d) => intake().alipay(d.body, d.headers['content-type']),
      expectAck: (r) => expect(replyOf(r)).toEqual(ALIPAY_ACK),
      expectFailure: (r, status) => failure(r, status, 'fail'),
      keptHeaders: ['content-type'],
    },
  };
}
