/**
 * The notify route's use case for the medium tests: a delivery's exact bytes and headers handed to
 * NotificationIntake.receive (NotifyModule), as serveNotifyRoute hands them over, and the
 * platform's reply it gives back, without HTTP. The metrics a use case counts are read from the
 * process's prom-client registry, the one /metrics serves.
 */
import { randomUUID } from 'node:crypto';
import { register } from 'prom-client';
import { Channel } from '../../src/domain/notification';
import { NotificationIntake } from '../../src/intake/notification-intake';
import { yuan } from '../../tools/simulator/platform-signers';
import { MediumContext } from './medium';
import { StormPayment } from './payment-storm';
import { SignedDeliveries } from './test-app';

/** What the platform would read from the reply: its status and its body as text (none for a 204). */
export interface IntakeReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Delivers `body` (the exact bytes) with `headers` to POST /notify/<notifyPath>'s use case. */
export async function receive(
  ctx: MediumContext,
  notifyPath: string,
  headers: Record<string, string>,
  body: string | Buffer,
  requestId: string = randomUUID(),
): Promise<IntakeReply> {
  const lowerCased = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  const reply = await ctx.get(NotificationIntake).receive({
    notifyPath,
    body: typeof body === 'string' ? Buffer.from(body, 'utf8') : body,
    headers: lowerCased,
    requestId,
  });
  const text = reply.body === undefined ? '' : typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
  return { status: reply.status, headers: reply.headers, body: text };
}

/** The registry's exposition now, as a scrape of /metrics would give it. */
export function exposition(): Promise<string> {
  return register.metrics();
}

/** The notify path of each channel whose payments the medium suites deliver. */
const PAYMENT_PATHS: Partial<Record<Channel, string>> = {
  [Channel.Wechatpay]: 'wechatpay',
  [Channel.Alipay]: 'alipay',
};

/** One delivery of the payment, freshly signed, as the platform sends each retry: the use case's reply. */
export function deliverPayment(ctx: MediumContext, signed: SignedDeliveries, p: StormPayment): Promise<IntakeReply> {
  if (p.channel === Channel.Wechatpay) {
    const delivery = signed.wechatpayPayment({
      outTradeNo: p.orderNo,
      transactionId: p.transactionId,
      total: p.amount,
    });
    return receive(ctx, PAYMENT_PATHS[p.channel]!, delivery.headers, delivery.body);
  }
  const form = signed.alipayPayment({ outTradeNo: p.orderNo, tradeNo: p.transactionId, totalAmount: yuan(p.amount) });
  return receive(ctx, PAYMENT_PATHS[p.channel]!, { 'content-type': ALIPAY_FORM }, form);
}

/** The channel's success ack: WeChat 204, Alipay 200 `success`. */
export function isAckReply(p: StormPayment, reply: IntakeReply): boolean {
  return p.channel === Channel.Wechatpay ? reply.status === 204 : reply.status === 200 && reply.body === 'success';
}

const ALIPAY_FORM = 'application/x-www-form-urlencoded; charset=utf-8';
