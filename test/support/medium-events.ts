/**
 * The after-payment events in the medium tier: payments delivered to the notify use case (through
 * medium-intake.ts, what the notify route calls, without HTTP), the example handlers' effects and
 * the outbox rows they leave, and a metric's exact series as Prometheus would scrape it.
 */
import { Pool, RowDataPacket } from 'mysql2/promise';
import { register } from 'prom-client';
import { AfterPaymentExamplesModule } from '../../src/events/after-payment/after-payment-examples.module';
import { NotifyModule } from '../../src/intake/notify.module';
import { OrderModule } from '../../src/order/order.module';
import { PaymentOrderService } from '../../src/order/payment-order.service';
import { EXAMPLE_CONSUMERS, ExchangeTap, TappedMessage } from './amqp-tap';
import { MediumContext } from './medium';
import { deliverPayment, INTAKE_MODULES, IntakeReply } from './medium-intake';
import { inParallel, StormPayment } from './payment-storm';
import { count, SignedDeliveries, TestPlatforms } from './test-app';

export const EFFECT_TABLES = ['points_grant', 'coupon_issue', 'shipment_request'];

/** The order API and the notify use case, with the example handlers (EXAMPLE_HANDLERS=true) unless told. */
export function notifyModules(examples = true) {
  return [OrderModule, NotifyModule, ...(examples ? [AfterPaymentExamplesModule] : [])];
}

/** The orders, the notify use case and readiness as app.module.ts composes them, with the example handlers unless told. */
export function intakeModules(examples = true) {
  return [...INTAKE_MODULES, ...(examples ? [AfterPaymentExamplesModule] : [])];
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
  deliver(ctx: MediumContext, p: StormPayment): Promise<IntakeReply> {
    return deliverPayment(ctx, this.deliveries, p);
  }

  /** Each payment delivered once to every module at the same moment, `inFlight` payments at a time. */
  async payAll(contexts: MediumContext[], payments: StormPayment[], inFlight = 25): Promise<IntakeReply[]> {
    const replies: IntakeReply[] = [];
    for (let i = 0; i < payments.length; i += inFlight) {
      const batch = payments.slice(i, i + inFlight);
      replies.push(
        ...(await Promise.all(batch.map((p) => Promise.all(contexts.map((c) => this.deliver(c, p)))))).flat(),
      );
    }
    return replies;
  }
}

/** The replies that are not a channel's success ack (WeChat Pay's 204, Alipay's 200 `success`), as [status, body]. */
export function refusals(replies: IntakeReply[]): unknown[] {
  return replies
    .filter((r) => !(r.status === 204 || (r.status === 200 && r.body === 'success')))
    .map((r) => [r.status, r.body]);
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
