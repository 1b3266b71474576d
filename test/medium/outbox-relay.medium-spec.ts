import { Pool, RowDataPacket } from 'mysql2/promise';
import { Channel } from '../../src/domain/notification';
import { OutboxRelay } from '../../src/events/outbox.relay';
import { OrderModule } from '../../src/order/order.module';
import { SettlementModule } from '../../src/settlement/settlement.module';
import { ExchangeTap, testExchange, TEST_RABBITMQ_URL } from '../support/amqp-tap';
import { eventually } from '../support/eventually';
import { Factories } from '../support/factories';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { notificationsOnly, TestPlatforms } from '../support/test-app';
import { roundsFrom } from '../support/worker-rounds';

/**
 * The outbox relay as a service: events written by the settlement use case in its transaction,
 * published by the relays of two modules on one database (two instances) to the real RabbitMQ,
 * each row claimed FOR UPDATE SKIP LOCKED and marked published only once the broker confirmed it.
 * The rest of the broker's story (handlers, outages at set-up, a relay killed mid-batch) is in
 * test/medium/event-delivery.medium-spec.ts and test/medium/relay-crash.medium-spec.ts.
 */
let medium: Medium;
let platforms: TestPlatforms;
let pool: Pool;

interface OutboxRow {
  event_id: string;
  type: string;
  attempts: number;
  published: number;
  dead_lettered: number;
}

async function outboxRows(orderNos: string[]): Promise<OutboxRow[]> {
  const [rows] = await pool.query<RowDataPacket[]>(
    `SELECT event_id, type, attempts, published_at IS NOT NULL AS published, dead_lettered_at IS NOT NULL AS dead_lettered
     FROM outbox_event WHERE order_no IN (?) ORDER BY id`,
    [orderNos],
  );
  return rows.map((r) => ({ ...r, attempts: Number(r.attempts), published: Number(r.published) }) as OutboxRow);
}

/** Pays `n` orders, alternating the channels: one payment.succeeded event each. */
async function paidOrders(make: Factories, n: number): Promise<string[]> {
  const orderNos: string[] = [];
  for (let i = 0; i < n; i++) {
    const channel = i % 2 === 0 ? Channel.Wechatpay : Channel.Alipay;
    orderNos.push((await make.paidOrder(channel, 100 + i)).orderNo);
  }
  return orderNos;
}

/**
 * Pays one more order and waits until the tap has its event. Every message the broker confirmed
 * before that order was paid is in the tap's queue ahead of it, and the queue hands them over in
 * order: a copy of an event published before is in `tap.messages` by the time this returns.
 */
async function tapHasEverythingConfirmedBefore(make: Factories, tap: ExchangeTap): Promise<void> {
  const [marker] = await paidOrders(make, 1);
  await tap.waitFor(() => tap.messages.some((m) => m.body.orderNo === marker), 60_000, `the event of ${marker}`);
}

beforeAll(async () => {
  medium = await startMedium({}, { fake: false, replicas: 0 });
  platforms = medium.platforms;
  pool = medium.pool;
});

afterAll(async () => {
  await medium?.close();
});

describe('with two relays on one database', () => {
  let exchange: string;
  let tap: ExchangeTap;
  let first: MediumContext;
  let second: MediumContext;

  beforeAll(async () => {
    exchange = testExchange();
    tap = await ExchangeTap.bind(exchange);
    const env = {
      ...notificationsOnly(platforms.env),
      RABBITMQ_URL: TEST_RABBITMQ_URL,
      RABBITMQ_EXCHANGE: exchange,
      OUTBOX_BATCH_SIZE: '5',
      OUTBOX_POLL_INTERVAL_MS: '20',
    };
    first = await medium.another(() => env, [OrderModule, SettlementModule]);
    second = await medium.another(() => env, [OrderModule, SettlementModule]);
  });

  afterAll(async () => {
    await first?.close();
    await second?.close();
    await tap?.close();
  });

  it('should publish every committed event exactly once, and mark each published', async () => {
    const make = new Factories(first, platforms);
    const orderNos = await paidOrders(make, 30);

    await eventually('every event to be published', async () =>
      (await outboxRows(orderNos)).every((row) => row.published === 1),
    );
    const rows = await outboxRows(orderNos);
    await tap.waitFor(() => rows.every((row) => tap.messages.some((m) => m.messageId === row.event_id)));
    // A second copy would have been confirmed before its row was marked published, before this.
    await tapHasEverythingConfirmedBefore(make, tap);

    expect(rows).toHaveLength(30);
    expect(rows.every((row) => row.type === 'payment.succeeded' && row.attempts === 0)).toBe(true);
    const ours = tap.messages.filter((m) => orderNos.includes(String(m.body.orderNo)));
    expect(ours).toHaveLength(30);
    expect(new Set(ours.map((m) => m.messageId))).toEqual(new Set(rows.map((r) => r.event_id)));
    expect(ours.every((m) => m.persistent && m.routingKey === 'payment.succeeded')).toBe(true);
    for (const message of ours) {
      expect(message.body).toMatchObject({ eventId: message.messageId, type: 'payment.succeeded' });
    }
  });
});

describe('while the broker is unreachable', () => {
  let away: MediumContext | undefined;
  let back: MediumContext | undefined;
  let tap: ExchangeTap | undefined;

  afterAll(async () => {
    await away?.close();
    await back?.close();
    await tap?.close();
  });

  it('should keep the events in the outbox without counting an attempt, and publish each once a broker answers', async () => {
    const exchange = testExchange();
    const env = {
      ...notificationsOnly(platforms.env),
      RABBITMQ_EXCHANGE: exchange,
      OUTBOX_POLL_INTERVAL_MS: '20',
    };
    // A loopback port nobody listens on.
    away = await medium.another(
      () => ({
        ...env,
        RABBITMQ_URL: 'amqp://guest:guest@127.0.0.1:9',
      }),
      [OrderModule, SettlementModule],
    );
    const orderNos = await paidOrders(new Factories(away, platforms), 4);

    // Rounds that began with the events committed: a relay that counted the outage has made attempts by then.
    await roundsFrom(away.get(OutboxRelay))('the events were committed');

    expect(await outboxRows(orderNos)).toEqual(
      orderNos.map(() => expect.objectContaining({ published: 0, attempts: 0, dead_lettered: 0 })),
    );

    await away.close();
    away = undefined;
    tap = await ExchangeTap.bind(exchange);
    back = await medium.another(() => ({ ...env, RABBITMQ_URL: TEST_RABBITMQ_URL }), [OrderModule, SettlementModule]);

    await eventually('the waiting events to be published', async () =>
      (await outboxRows(orderNos)).every((row) => row.published === 1),
    );
    const rows = await outboxRows(orderNos);
    await tap.waitFor(() => rows.every((row) => tap!.messages.some((m) => m.messageId === row.event_id)));
    await tapHasEverythingConfirmedBefore(new Factories(back, platforms), tap);
    expect(rows.map((row) => row.attempts)).toEqual([0, 0, 0, 0]);
    const ours = tap.messages.filter((m) => orderNos.includes(String(m.body.orderNo)));
    expect(ours.map((m) => m.messageId).sort()).toEqual(rows.map((r) => r.event_id).sort());
  });
});
