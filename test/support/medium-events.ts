/**
 * The after-payment events in the medium tier: payments delivered to the notify use case
 * (NotificationIntake, what the notify route calls, without HTTP), the example handlers' effects
 * and the outbox rows they leave, the readiness report as the app composes it, and the metrics as
 * Prometheus would scrape them.
 */
import { Pool, RowDataPacket } from 'mysql2/promise';
import { register } from 'prom-client';
import { PlatformReply } from '../../src/channels/payment-channel';
import { Channel } from '../../src/domain/notification';
import { AfterPaymentExamplesModule } from '../../src/events/after-payment/after-payment-examples.module';
import { EventsHealthIndicator } from '../../src/events/events.health';
import { EventsModule } from '../../src/events/events.module';
import { NotificationIntake } from '../../src/intake/notification-intake';
import { NotifyModule } from '../../src/intake/notify.module';
import { DeliverySpool } from '../../src/intake/spool/delivery-spool';
import { SpoolHealthIndicator } from '../../src/intake/spool/spool.health';
import { SpoolModule } from '../../src/intake/spool/spool.module';
import { OrderModule } from '../../src/order/order.module';
import { PaymentOrderService } from '../../src/order/payment-order.service';
import { HealthModule } from '../../src/platform/health/health.module';
import { Readiness, ReadinessReport } from '../../src/platform/health/readiness';
import { LifecycleModule } from '../../src/platform/lifecycle/lifecycle.module';
import { yuan } from '../../tools/simulator/platform-signers';
import { EXAMPLE_CONSUMERS, ExchangeTap, TappedMessage } from './amqp-tap';
import { MediumContext } from './medium';
import { inParallel, StormPayment } from './payment-storm';
import { count, SignedDeliveries, TestPlatforms } from './test-app';

export const EFFECT_TABLES = ['points_grant', 'coupon_issue', 'shipment_request'];

/** The order API and the notify use case, with the example handlers (EXAMPLE_HANDLERS=true) unless told. */
export function notifyModules(examples = true) {
  return [OrderModule, NotifyModule, ...(examples ? [AfterPaymentExamplesModule] : [])];
}

/** /health/ready's report as app.module.ts composes it: the database, the events' and the spool's parts. */
export function readinessModules() {
  return [
    LifecycleModule,
    HealthModule.forRoot({
      imports: [EventsModule, SpoolModule],
      providers: [EventsHealthIndicator],
      reports: [EventsHealthIndicator, SpoolHealthIndicator],
      outageCover: DeliverySpool,
    }),
  ];
}

export function readinessReport(ctx: MediumContext): Promise<ReadinessReport> {
  return ctx.get(Readiness).report();
}

/** The platforms' deliveries of payments to one module's notify use case. */
export class MediumNotify {
  private readonly deliveries: SignedDeliveries;

  constructor(platforms: TestPlatforms) {
    this.deliveries = new SignedDeliveries(platforms);
  }

  /** Registers new orders through the order service, `concurrency` at a time (the order API's 201 each). */
  async registerAll(ctx: MediumContext, payments: StormPayment[], concurrency = 25): Promise<void> {
    await inParallel(payments, concurrency, async (p) => {
      const { created } = await ctx.inContext(() =>
        ctx.get(PaymentOrderService).register({ orderNo: p.orderNo, amount: p.amount, userId: 'u-1', currency: 'CNY' }),
      );
      if (!created) throw new Error(`order ${p.orderNo} was registered before`);
    });
  }

  /** One delivery of the payment, freshly signed as the platform signs each retry; the platform's reply. */
  deliver(ctx: MediumContext, p: StormPayment): Promise<PlatformReply> {
    if (p.channel === Channel.Wechatpay) {
      const delivery = this.deliveries.wechatpayPayment({
        outTradeNo: p.orderNo,
        transactionId: p.transactionId,
        total: p.amount,
      });
      return receive(ctx, 'wechatpay', delivery.headers, delivery.body);
    }
    const form = this.deliveries.alipayPayment({
      outTradeNo: p.orderNo,
      tradeNo: p.transactionId,
      totalAmount: yuan(p.amount),
    });
    return receive(ctx, 'alipay', { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' }, form);
  }

  /** Each payment delivered once to every module at the same moment, `inFlight` payments at a time. */
  async payAll(contexts: MediumContext[], payments: StormPayment[], inFlight = 25): Promise<PlatformReply[]> {
    const replies: PlatformReply[] = [];
    for (let i = 0; i < payments.length; i += inFlight) {
      const batch = payments.slice(i, i + inFlight);
      replies.push(
        ...(await Promise.all(batch.map((p) => Promise.all(contexts.map((c) => this.deliver(c, p)))))).flat(),
      );
    }
    return replies;
  }
}

function receive(ctx: MediumContext, notifyPath: string, headers: Record<string, string>, body: string) {
  const lowerCased = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return ctx.inContext(() =>
    ctx.get(NotificationIntake).receive({
      notifyPath,
      body: Buffer.from(body, 'utf8'),
      headers: lowerCased,
      requestId: `medium-${Math.random().toString(36).slice(2)}`,
    }),
  );
}

/** The channels' success acks: WeChat Pay's 204, Alipay's 200 `success`. */
export function isAck(reply: PlatformReply): boolean {
  return reply.status === 204 || (reply.status === 200 && reply.body === 'success');
}

/** The replies that are not acks, as [status, body]. */
export function refusals(replies: PlatformReply[]): unknown[] {
  return replies.filter((r) => !isAck(r)).map((r) => [r.status, r.body]);
}

export function messagesFor(tap: ExchangeTap, orderNos: string[]): TappedMessage[] {
  const wanted = new Set(orderNos);
  return tap.messages.filter((m) => wanted.has(String(m.body.orderNo)));
}

export async function effectCounts(pool: Pool, orderNos: string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of EFFECT_TABLES) {
    counts[table] = await count(pool, `SELECT COUNT(*) FROM ${table} WHERE order_no IN (?)`, [orderNos]);
  }
  return counts;
}

/** Every example handler's table holds exactly one row per order, carrying the order's one event id. */
export async function expectOneEffectPerOrder(pool: Pool, eventIdByOrder: Map<string, string>): Promise<void> {
  const orderNos = [...eventIdByOrder.keys()];
  for (const table of EFFECT_TABLES) {
    const [rows] = await pool.query<Array<RowDataPacket & { order_no: string; event_id: string }>>(
      `SELECT order_no, COUNT(*) AS n, MIN(event_id) AS event_id FROM ${table} WHERE order_no IN (?) GROUP BY order_no`,
      [orderNos],
    );
    expect({ table, orders: rows.length }).toEqual({ table, orders: orderNos.length });
    const wrong = rows.filter((r) => Number(r.n) !== 1 || r.event_id !== eventIdByOrder.get(r.order_no));
    expect({ table, wrong }).toEqual({ table, wrong: [] });
  }
  const eventIds = [...eventIdByOrder.values()];
  const [processed] = await pool.query<Array<RowDataPacket & { consumer: string }>>(
    `SELECT consumer, event_id, COUNT(*) AS n FROM processed_event WHERE event_id IN (?) GROUP BY consumer, event_id`,
    [eventIds],
  );
  expect(processed).toHaveLength(eventIds.length * EXAMPLE_CONSUMERS.length);
  expect(processed.filter((r) => Number(r.n) !== 1)).toEqual([]);
  expect([...new Set(processed.map((r) => r.consumer))].sort()).toEqual([...EXAMPLE_CONSUMERS].sort());
}

/** The one outbox event of each order, by order. */
export async function outboxEventIds(pool: Pool, orderNos: string[]): Promise<Map<string, string>> {
  const [rows] = await pool.query<RowDataPacket[]>(
    `SELECT order_no, COUNT(*) AS n, MIN(event_id) AS event_id FROM outbox_event WHERE order_no IN (?) GROUP BY order_no`,
    [orderNos],
  );
  expect(rows).toHaveLength(orderNos.length);
  expect(rows.filter((r) => Number(r.n) !== 1)).toEqual([]);
  return new Map(rows.map((r) => [String(r.order_no), String(r.event_id)]));
}

/** A sample of the process's registry as Prometheus reads it, e.g. `rabbitmq_connected` or `name{label="x"}`. */
export async function metricSample(series: string): Promise<number | undefined> {
  const line = (await register.metrics()).split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}
