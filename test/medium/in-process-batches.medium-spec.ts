import { randomUUID } from 'node:crypto';
import { Type } from '@nestjs/common';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { Channel } from '../../src/domain/notification';
import { AfterPaymentExamplesModule } from '../../src/events/after-payment/after-payment-examples.module';
import { EventType, PaymentEvent } from '../../src/events/payment-events';
import { EventDispatcher } from '../../src/events/subscribers/event-dispatcher';
import { OrderModule } from '../../src/order/order.module';
import { DeliveryOutcome } from '../../src/settlement/settlement.service';
import { SettlementModule } from '../../src/settlement/settlement.module';
import { eventually } from '../support/eventually';
import { Factories } from '../support/factories';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { count, notificationsOnly, TestPlatforms, uniqueId } from '../support/test-app';
import {
  createTestHandlerEffectTable,
  FlakyHandler,
  FlakyHandlerModule,
  TEST_HANDLER_EFFECT_TABLE,
} from '../support/test-handlers';

/**
 * Without a broker, the relay hands each handler its events of a batch in one transaction. These
 * tests show that batching keeps every effect exactly once: with two relays (two modules on one
 * database), with a handler that fails inside a batch, and with events of a batch that a handler
 * has processed before. The app's
 * EXAMPLE_HANDLERS switch (how createApp composes the app) is in test/in-process-batches.e2e-spec.ts.
 */
const EXAMPLE_TABLES = ['points_grant', 'coupon_issue', 'shipment_request'];
const EXAMPLE_CONSUMERS = ['grant-points', 'issue-coupon', 'request-shipment'];

let medium: Medium;
let platforms: TestPlatforms;
let pool: Pool;

beforeAll(async () => {
  medium = await startMedium({}, { fake: false, replicas: 0 });
  ({ platforms, pool } = medium);
  await createTestHandlerEffectTable(pool);
});
afterAll(async () => {
  await medium?.close();
});

function startWith(env: Record<string, string>, extra: Type[] = []): Promise<MediumContext> {
  return medium.another(
    (p) => ({ ...notificationsOnly(p.env), EXAMPLE_HANDLERS: 'true', ...env }),
    [OrderModule, SettlementModule, AfterPaymentExamplesModule, ...extra],
  );
}

/** Registers and pays `howMany` orders, 25 at a time, so that the outbox fills faster than one event per poll. */
async function payConcurrently(ctx: MediumContext, howMany: number): Promise<string[]> {
  const make = new Factories(ctx, platforms);
  const orderNos = Array.from({ length: howMany }, () => uniqueId('B'));
  for (let i = 0; i < orderNos.length; i += 25) {
    await Promise.all(
      orderNos.slice(i, i + 25).map(async (orderNo) => {
        await make.order({ orderNo, amount: 700 });
        expect(await make.payment(Channel.Wechatpay, { orderNo, amount: 700 })).toBe(DeliveryOutcome.Paid);
      }),
    );
  }
  return orderNos;
}

async function effectsPerOrder(table: string, orderNos: string[], consumer?: string): Promise<number[]> {
  const [rows] = await pool.query<RowDataPacket[]>(
    `SELECT order_no, COUNT(*) AS n FROM ${table} WHERE order_no IN (?)${consumer ? ' AND consumer = ?' : ''}
     GROUP BY order_no`,
    consumer ? [orderNos, consumer] : [orderNos],
  );
  const counts = new Map(rows.map((r) => [String(r.order_no), Number(r.n)]));
  return orderNos.map((orderNo) => counts.get(orderNo) ?? 0);
}

async function eventIdsOf(orderNos: string[]): Promise<string[]> {
  const [rows] = await pool.query<RowDataPacket[]>(
    `SELECT event_id FROM outbox_event WHERE order_no IN (?) AND type = 'payment.succeeded'`,
    [orderNos],
  );
  return rows.map((r) => String(r.event_id));
}

it('should have every effect exactly once with two relays, handing events over in batches', async () => {
  const env = { OUTBOX_POLL_INTERVAL_MS: '300' };
  const relays = [await startWith(env), await startWith(env)];
  try {
    const orderNos = await payConcurrently(relays[0], 200);
    await eventually('every handler to have run', async () =>
      (await Promise.all(EXAMPLE_TABLES.map((t) => effectsPerOrder(t, orderNos)))).every((c) => !c.includes(0)),
    );

    for (const table of EXAMPLE_TABLES) expect(await effectsPerOrder(table, orderNos)).toEqual(orderNos.map(() => 1));
    const eventIds = await eventIdsOf(orderNos);
    const [batches] = await pool.query<Array<RowDataPacket & { consumer: string }>>(
      `SELECT consumer, COUNT(*) AS events, COUNT(DISTINCT processed_at) AS batches FROM processed_event
       WHERE event_id IN (?) GROUP BY consumer ORDER BY consumer`,
      [eventIds],
    );
    expect(batches.map((b) => [b.consumer, Number(b.events)])).toEqual(
      [...EXAMPLE_CONSUMERS].sort().map((c) => [c, 200]),
    );
    // A batch's rows share their processed_at: fewer distinct times than events means batches of several.
    for (const b of batches) expect(Number(b.batches)).toBeLessThan(100);
  } finally {
    await Promise.all(relays.map((r) => r.close()));
  }
});

it('should run a handler failing inside a batch exactly as often as its attempts, and take effect once', async () => {
  FlakyHandler.attempts.clear();
  const ctx = await startWith(
    { OUTBOX_POLL_INTERVAL_MS: '300', RETRY_BASE_DELAY_MS: '50', RETRY_MAX_DELAY_MS: '200' },
    [FlakyHandlerModule],
  );
  try {
    const orderNos = await payConcurrently(ctx, 30);
    const flakyEffects = () => effectsPerOrder(TEST_HANDLER_EFFECT_TABLE, orderNos, FlakyHandler.CONSUMER);
    await eventually('the flaky handler to succeed everywhere', async () => !(await flakyEffects()).includes(0));

    expect(await flakyEffects()).toEqual(orderNos.map(() => 1));
    const eventIds = await eventIdsOf(orderNos);
    // Two failures and a success each: the failing event is never run again on the batch's fallback.
    expect(eventIds.map((id) => FlakyHandler.attempts.get(id))).toEqual(eventIds.map(() => 3));
    for (const table of EXAMPLE_TABLES) expect(await effectsPerOrder(table, orderNos)).toEqual(orderNos.map(() => 1));
  } finally {
    await ctx.close();
  }
});

it('should apply only the new events of a batch that holds events a handler processed before', async () => {
  const ctx = await startWith({ OUTBOX_POLL_INTERVAL_MS: '60000' });
  try {
    const dispatcher = ctx.get(EventDispatcher);
    const event = (): PaymentEvent => ({
      eventId: randomUUID(),
      type: EventType.PaymentSucceeded,
      occurredAt: new Date().toISOString(),
      orderNo: uniqueId('BD'),
      transactionId: uniqueId('T'),
      channel: 'WECHATPAY',
      amount: 900,
      currency: 'CNY',
    });
    const seen = [event(), event()];
    const fresh = [event(), event(), event()];
    const orderNos = [...seen, ...fresh].map((e) => e.orderNo);

    expect((await dispatcher.dispatchAll(seen)).map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
    const results = await dispatcher.dispatchAll([fresh[0], seen[0], fresh[1], seen[1], fresh[2]]);

    expect(results.map((r) => r.status)).toEqual(Array(5).fill('fulfilled'));
    for (const table of EXAMPLE_TABLES) expect(await effectsPerOrder(table, orderNos)).toEqual(orderNos.map(() => 1));
    const eventIds = [...seen, ...fresh].map((e) => e.eventId);
    expect(await count(pool, 'SELECT COUNT(*) FROM processed_event WHERE event_id IN (?)', [eventIds])).toBe(
      5 * EXAMPLE_CONSUMERS.length,
    );
    expect(await count(pool, 'SELECT COUNT(*) FROM handler_retry WHERE event_id IN (?)', [eventIds])).toBe(0);
  } finally {
    await ctx.close();
  }
});
