import { Pool, RowDataPacket } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { CreateWebhookEndpointDto } from '../../src/events/webhooks/dto/webhook-endpoint.dto';
import { EventType } from '../../src/events/payment-events';
import { WebhookDispatcher } from '../../src/events/webhooks/webhook-dispatcher';
import { WebhookEndpoints } from '../../src/events/webhooks/webhook-endpoints.service';
import { WebhookFanOut } from '../../src/events/webhooks/webhook-fan-out';
import { WebhooksModule } from '../../src/events/webhooks/webhooks.module';
import { OutboxRelay } from '../../src/events/outbox.relay';
import { eventually } from '../support/eventually';
import { Medium, Replica, startMedium } from '../support/medium';
import { MediumNotify, notifyModules } from '../support/medium-events';
import { isAck } from '../support/medium-intake';
import { StormPayment, stormPayments } from '../support/payment-storm';
import { SentCommands } from '../support/sent-commands';
import { count, notificationsOnly, TestPlatforms } from '../support/test-app';
import { WebhookReceiver } from '../support/webhook-receiver';
import { roundsFrom, roundsOf } from '../support/worker-rounds';

/**
 * What the outbox relay and the webhook fan-out write on an event's row (outbox_event), one
 * instance without a broker: an event no enabled endpoint wants is marked published and fanned out
 * by the relay's one UPDATE, and the fan-out never marks it; an endpoint enabled later
 * gets the events committed after it, not those before. Each UPDATE of a row is counted by a
 * trigger of the suite's own (its database is the suite's own too); the statements are the ones
 * the driver sent (SentCommands). Webhook delivery itself is test/medium/webhook-delivery.medium-spec.ts.
 */
let platforms: TestPlatforms;
let medium: Medium;
let ctx: Replica;
let pool: Pool;
let notify: MediumNotify;
let sent: SentCommands;
let receiver: WebhookReceiver | undefined;

beforeAll(async () => {
  medium = await startMedium(
    (p) => ({
      ...notificationsOnly(p.env),
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '50',
      OUTBOX_POLL_INTERVAL_MS: '50',
    }),
    // The trigger counts every UPDATE of the database's outbox: only this suite's.
    { imports: [...notifyModules(false), WebhooksModule], fake: false, ownDatabase: true },
  );
  ({ platforms, pool, ctx } = medium);
  notify = new MediumNotify(platforms);
  sent = SentCommands.attachTo(ctx.get(DataSource));
  await pool.query(
    'CREATE TABLE test_outbox_update (event_id VARCHAR(64) NOT NULL, published TINYINT, fanned_out TINYINT)',
  );
  await pool.query(
    `CREATE TRIGGER test_count_outbox_updates AFTER UPDATE ON outbox_event FOR EACH ROW
       INSERT INTO test_outbox_update (event_id, published, fanned_out)
       VALUES (NEW.event_id, NEW.published_at IS NOT NULL, NEW.webhooks_fanned_out_at IS NOT NULL)`,
  );
});

afterAll(async () => {
  await receiver?.stop();
  await medium?.close();
});

/** Registers and pays the orders; answers their events' ids from the outbox. */
async function payAll(payments: StormPayment[]): Promise<string[]> {
  await notify.registerAll(ctx, payments);
  for (const p of payments) expect(isAck(p, await notify.deliver(ctx, p))).toBe(true);
  const [rows] = await pool.query<RowDataPacket[]>('SELECT event_id FROM outbox_event WHERE order_no IN (?)', [
    payments.map((p) => p.orderNo),
  ]);
  expect(rows).toHaveLength(payments.length);
  return rows.map((r) => String(r.event_id));
}

/** An endpoint use case as its admin route runs it: in a context of its own (it opens its own transaction). */
function createEndpoint(body: CreateWebhookEndpointDto) {
  return ctx.inContext(() => ctx.get(WebhookEndpoints).create(body));
}

/** Waits until the events are published and marked fanned out, then for whole rounds of the relay and the fan-out after that. */
async function relayAndFanOutDone(eventIds: string[]): Promise<void> {
  await eventually(
    'the events published and marked fanned out',
    async () =>
      (await count(
        pool,
        'SELECT COUNT(*) FROM outbox_event WHERE event_id IN (?) AND published_at IS NOT NULL AND webhooks_fanned_out_at IS NOT NULL',
        [eventIds],
      )) === eventIds.length,
    30_000,
  );
  await roundsFrom(ctx.get(OutboxRelay), ctx.get(WebhookFanOut))('the events were marked');
}

/** Each event's UPDATEs of its row, as the trigger saw them: [published, fanned out] after each. */
async function rowUpdates(eventIds: string[]): Promise<Record<string, Array<[number, number]>>> {
  const [rows] = await pool.query<RowDataPacket[]>(
    'SELECT event_id, published, fanned_out FROM test_outbox_update WHERE event_id IN (?)',
    [eventIds],
  );
  const updates: Record<string, Array<[number, number]>> = Object.fromEntries(eventIds.map((id) => [id, []]));
  for (const r of rows) updates[String(r.event_id)].push([Number(r.published), Number(r.fanned_out)]);
  return updates;
}

const onceBoth = (eventIds: string[]) => Object.fromEntries(eventIds.map((id) => [id, [[1, 1]]]));

describe('the marks on an outbox event', () => {
  it("should mark an event published and fanned out in the relay's one UPDATE while no webhook endpoint is enabled, the fan-out marking nothing", async () => {
    const from = sent.sent.length;
    const eventIds = await payAll(stormPayments(4, 'NW', 100));

    await relayAndFanOutDone(eventIds);

    expect(await rowUpdates(eventIds)).toEqual(onceBoth(eventIds));
    const statements = sent.sent.slice(from).map((c) => c.text);
    // Every UPDATE of the outbox is the relay's (it sets published_at): the fan-out wrote none.
    expect(statements.filter((s) => /UPDATE\s+outbox_event/i.test(s) && !/published_at/.test(s))).toEqual([]);
    expect(await count(pool, 'SELECT COUNT(*) FROM webhook_delivery WHERE event_id IN (?)', [eventIds])).toBe(0);
  });

  it("should mark an event of a type no enabled endpoint wants in the relay's one UPDATE, the fan-out taking it never", async () => {
    await createEndpoint({ url: 'http://127.0.0.1:9/refunds-only', eventTypes: [EventType.RefundSucceeded] });
    const eventIds = await payAll(stormPayments(4, 'NT', 100));

    await relayAndFanOutDone(eventIds);

    expect(await rowUpdates(eventIds)).toEqual(onceBoth(eventIds));
    expect(await count(pool, 'SELECT COUNT(*) FROM webhook_delivery WHERE event_id IN (?)', [eventIds])).toBe(0);
  });

  it('should give an endpoint enabled afterwards the events committed after it, and none from before', async () => {
    const [before] = await pool.query<RowDataPacket[]>('SELECT event_id FROM outbox_event');
    const earlier = before.map((r) => String(r.event_id));
    expect(earlier.length).toBeGreaterThanOrEqual(8);
    receiver = new WebhookReceiver();
    await receiver.start();
    const created = await createEndpoint({ url: receiver.url });
    receiver.secrets = [created.secret];

    const eventIds = await payAll(stormPayments(3, 'NA', 100));
    await eventually('the endpoint to accept the new events', () => receiver!.acceptedIds().size >= 3, 30_000);
    // Rounds of the fan-out and the dispatcher begun once they had been accepted: an earlier event
    // written for the endpoint would have been sent by then.
    await roundsFrom(ctx.get(WebhookFanOut))('the new events were accepted');
    await roundsOf('claimAndSend', ctx.get(WebhookDispatcher))('the new events were accepted');

    expect([...receiver.acceptedIds()].sort()).toEqual([...eventIds].sort());
    expect(
      await count(pool, 'SELECT COUNT(*) FROM webhook_delivery WHERE endpoint_id = ? AND event_id IN (?)', [
        created.id,
        earlier,
      ]),
    ).toBe(0);
  });
});
