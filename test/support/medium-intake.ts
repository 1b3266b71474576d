/**
 * The notify route's use case without HTTP, for the medium suites about deliveries: a platform's
 * exact bytes and headers handed to NotificationIntake.receive (NotifyModule) as serveNotifyRoute
 * hands them over, the reply it gives back, the app's readiness composition, and the process's
 * metrics (the prom-client registry /metrics serves). A replica (medium.ts) delivers through these.
 */
import { randomUUID } from 'node:crypto';
import { register } from 'prom-client';
import { PlatformReply } from '../../src/channels/payment-channel';
import { Channel } from '../../src/domain/notification';
import { EventsHealthIndicator } from '../../src/events/events.health';
import { EventsModule } from '../../src/events/events.module';
import { NotificationIntake } from '../../src/intake/notification-intake';
import { NotifyModule } from '../../src/intake/notify.module';
import { DeliverySpool } from '../../src/intake/spool/delivery-spool';
import { SpoolHealthIndicator } from '../../src/intake/spool/spool.health';
import { SpoolModule } from '../../src/intake/spool/spool.module';
import { OrderModule } from '../../src/order/order.module';
import { HealthModule } from '../../src/platform/health/health.module';
import { LifecycleModule } from '../../src/platform/lifecycle/lifecycle.module';
import { yuan } from '../../tools/simulator/platform-signers';
import { MediumContext } from './medium';
import { metricValue } from './order-effects';
import { StormPayment } from './payment-storm';
import { SignedDeliveries } from './test-app';

export const FORM = 'application/x-www-form-urlencoded; charset=utf-8';

/** What the platform would read from the reply: its status and its body as text (none for a 204). */
export interface IntakeReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** POST /notify/<notifyPath> of these exact bytes, as the route hands them to the use case. */
export function receivePlatformReply(
  ctx: MediumContext,
  notifyPath: string,
  headers: Record<string, string>,
  body: string | Buffer,
  requestId: string = randomUUID(),
): Promise<PlatformReply> {
  const lowerCased = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  return ctx.inContext(() =>
    ctx.get(NotificationIntake).receive({
      notifyPath,
      body: typeof body === 'string' ? Buffer.from(body, 'utf8') : body,
      headers: lowerCased,
      requestId,
    }),
  );
}

/** The same delivery, its reply's body as the text the platform reads. */
export async function receive(
  ctx: MediumContext,
  notifyPath: string,
  headers: Record<string, string>,
  body: string | Buffer,
  requestId: string = randomUUID(),
): Promise<IntakeReply> {
  const reply = await receivePlatformReply(ctx, notifyPath, headers, body, requestId);
  const text = reply.body === undefined ? '' : typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
  return { status: reply.status, headers: reply.headers, body: text };
}

/** One delivery of the payment, freshly signed, as the platform sends each retry. */
export function signedDelivery(signed: SignedDeliveries, p: StormPayment) {
  if (p.channel === Channel.Wechatpay) {
    const delivery = signed.wechatpayPayment({
      outTradeNo: p.orderNo,
      transactionId: p.transactionId,
      total: p.amount,
    });
    return { notifyPath: 'wechatpay', ...delivery };
  }
  const form = signed.alipayPayment({ outTradeNo: p.orderNo, tradeNo: p.transactionId, totalAmount: yuan(p.amount) });
  return { notifyPath: 'alipay', headers: { 'content-type': FORM }, body: form };
}

/** One delivery of the payment, freshly signed: the use case's reply. */
export function deliverPayment(ctx: MediumContext, signed: SignedDeliveries, p: StormPayment): Promise<IntakeReply> {
  const { notifyPath, headers, body } = signedDelivery(signed, p);
  return receive(ctx, notifyPath, headers, body);
}

/** The channel's success ack: WeChat 204, Alipay 200 `success`. */
export function isAck(p: Pick<StormPayment, 'channel'>, reply: { status: number; body?: unknown }): boolean {
  return p.channel === Channel.Wechatpay ? reply.status === 204 : reply.status === 200 && reply.body === 'success';
}

/** The registry's exposition now, as a scrape of /metrics would give it. */
export function exposition(): Promise<string> {
  return register.metrics();
}

/** A counter or gauge of this process's registry (every module of the suite shares it, as the apps did). */
export async function metric(name: string, labels: Record<string, string> = {}): Promise<number> {
  return metricValue(await exposition(), name, labels);
}

/** The orders, the notify use case and readiness composed as in app.module.ts. */
export const INTAKE_MODULES = [
  OrderModule,
  NotifyModule,
  LifecycleModule,
  HealthModule.forRoot({
    imports: [EventsModule, SpoolModule],
    providers: [EventsHealthIndicator],
    reports: [EventsHealthIndicator, SpoolHealthIndicator],
    outageCover: DeliverySpool,
  }),
];
