import { Pool, RowDataPacket } from 'mysql2/promise';
import { Channel } from '../../src/domain/notification';
import {
  EXAMPLE_CONSUMERS,
  ExchangeTap,
  handlerQueuesConsumed,
  TEST_RABBITMQ_URL,
  testExchange,
} from '../support/amqp-tap';
import { eventually } from '../support/eventually';
import { handledEverythingBefore } from '../support/handlers-drained';
import { InstanceProcess, startInstanceProcess } from '../support/instance-process';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { EFFECT_TABLES, MediumNotify, notifyModules } from '../support/medium-events';
import { freeFixedPort, StormPayment } from '../support/payment-storm';
import { TcpProxy } from '../support/tcp-proxy';
import { count, notificationsOnly, TestPlatforms, uniqueId } from '../support/test-app';

/**
 * An instance SIGKILLed in the middle of a relay batch. The relay and the example handlers run
 * in a medium instance in a child process (test/support/instance-main.ts: the notify use case, the
 * outbox relay and the handlers' consumers, no HTTP), because only a process can be killed with
 * its transaction open and its broker channel half-way through a batch; the payments, the survivor
 * and every count are this process's, on a database of the suite's own (the relays take every
 * unpublished event of the database).
 */
const ORDERS = 600;
const BATCH_SIZE = 50;
/** Child processes killed before one of them dies holding a half-published batch; one nearly always suffices. */
const MAX_KILL_ROUNDS = 5;

let medium: Medium;
let platforms: TestPlatforms;
let pool: Pool;
let notify: MediumNotify;
let exchange: string;
let tap: ExchangeTap;
let proxy: TcpProxy;
let child: InstanceProcess | undefined;
let survivor: MediumContext | undefined;

function instanceEnv(rabbitmqUrl: string): Record<string, string> {
  return {
    ...notificationsOnly(platforms.env),
    RABBITMQ_URL: rabbitmqUrl,
    RABBITMQ_EXCHANGE: exchange,
    OUTBOX_POLL_INTERVAL_MS: '50',
    OUTBOX_BATCH_SIZE: String(BATCH_SIZE),
    RETRY_BASE_DELAY_MS: '50',
    RETRY_MAX_DELAY_MS: '200',
  };
}

/** The test broker's URL with its address replaced by `127.0.0.1:port` (a proxy in front of it). */
function brokerUrlVia(port: number): string {
  const url = new URL(TEST_RABBITMQ_URL);
  return `amqp://${url.username}:${url.password}@127.0.0.1:${port}${url.pathname}`;
}

/** New orders of 1234 fen, each registered and paid once by WeChat Pay (acked 204), 25 at a time. */
async function payOrders(ctx: MediumContext, orderNos: string[]): Promise<void> {
  const payments: StormPayment[] = orderNos.map((orderNo) => ({
    orderNo,
    channel: Channel.Wechatpay,
    transactionId: uniqueId('T'),
    amount: 1234,
  }));
  await notify.registerAll(ctx, payments);
  const replies = await notify.payAll([ctx], payments);
  expect(replies.filter((r) => r.status !== 204).map((r) => [r.status, r.body])).toEqual([]);
}

beforeAll(async () => {
  medium = await startMedium({}, { imports: notifyModules(), fake: false, replicas: 0, ownDatabase: true });
  ({ platforms, pool } = medium);
  notify = new MediumNotify(platforms);
  exchange = testExchange();
  tap = await ExchangeTap.bind(exchange);
  const broker = new URL(TEST_RABBITMQ_URL);
  proxy = new TcpProxy(broker.hostname, Number(broker.port || 5672));
  proxy.port = await freeFixedPort();

  // The service has run against this broker before: its handler queues exist and are bound, as
  // in any deployment after the first, so every event published from now on reaches them.
  const warmUp = await medium.another(() => instanceEnv(TEST_RABBITMQ_URL));
  try {
    await eventually(
      'the handler queues to be consumed',
      () => handlerQueuesConsumed(exchange, EXAMPLE_CONSUMERS),
      90000,
    );
    const orderNo = uniqueId('W');
    await payOrders(warmUp, [orderNo]);
    await eventually(
      'the warm-up order to reach every example handler',
      async () => {
        for (const table of EFFECT_TABLES) {
          if ((await count(pool, `SELECT COUNT(*) FROM ${table} WHERE order_no = ?`, [orderNo])) === 0) return false;
        }
        return true;
      },
      90000,
    );
  } finally {
    await warmUp.close();
  }
});
afterAll(async () => {
  child?.child.kill('SIGKILL');
  await child?.exited;
  await proxy?.stop();
  await survivor?.close();
  await tap?.close(EXAMPLE_CONSUMERS);
  await medium?.close();
});

/** Our events the tap has seen whose outbox row is not (or not yet) marked published. */
async function deliveredButUnpublished(eventIds: Set<string>): Promise<number> {
  const delivered = [...tap.distinctMessageIds()].filter((id) => eventIds.has(id));
  if (delivered.length === 0) return 0;
  return count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE event_id IN (?) AND published_at IS NULL', [delivered]);
}

/**
 * True once no transaction holds a lock on the rows of `eventIds`: the killed child's batch, which
 * held its claimed rows locked, has ended on the server (rolled back, or committed had its COMMIT
 * left before the kill), so what is read of them now stays.
 */
async function unlocked(eventIds: Set<string>): Promise<boolean> {
  const connection = await pool.getConnection();
  try {
    await connection.query('START TRANSACTION');
    await connection.query('SELECT id FROM outbox_event WHERE event_id IN (?) FOR UPDATE NOWAIT', [[...eventIds]]);
    return true;
  } catch (error) {
    // MariaDB answers NOWAIT's refusal as a lock wait timeout, MySQL with its own code.
    const errno = (error as { errno?: number }).errno;
    if (errno === 1205 || errno === 3572) return false;
    throw error;
  } finally {
    await connection.query('ROLLBACK');
    connection.release();
  }
}

/**
 * Lets `running` reach the broker and SIGKILLs it as soon as an event of ours is at the broker
 * while its row is still unpublished, i.e. while the child holds a half-published batch.
 * Answers how many such events there are once the child is gone: more than 0 proves the kill
 * landed mid-batch (the batch's transaction died with it rather than committing first).
 */
async function killMidBatch(running: InstanceProcess, eventIds: Set<string>): Promise<number> {
  await proxy.start();
  const deadline = Date.now() + 60000;
  for (;;) {
    if ((await deliveredButUnpublished(eventIds)) > 0) break;
    if (Date.now() > deadline) throw new Error('the child published none of our events within 60 s');
    const unpublished = await count(
      pool,
      'SELECT COUNT(*) FROM outbox_event WHERE event_id IN (?) AND published_at IS NULL',
      [[...eventIds]],
    );
    if (unpublished === 0)
      throw new Error('the whole backlog was published before the child could be caught mid-batch');
  }
  running.child.kill('SIGKILL');
  expect(await running.exited).toBe('SIGKILL');
  await proxy.stop();
  // The server rolls the dead connection's transaction back as soon as it sees the socket close.
  await eventually('the killed batch to end on the server', () => unlocked(eventIds), 30000);
  return deliveredButUnpublished(eventIds);
}

it(`should lose none of ${ORDERS} events and duplicate no effect when the relaying instance is SIGKILLed`, async () => {
  // The backlog: payments accepted by an instance whose broker is unreachable (the proxy is not
  // listening yet), so every event waits in the outbox.
  const accepting = await medium.another(() => instanceEnv(brokerUrlVia(proxy.port)));
  const orderNos = Array.from({ length: ORDERS }, () => uniqueId('K'));
  try {
    await payOrders(accepting, orderNos);
  } finally {
    await accepting.close();
  }
  const [rows] = await pool.query<RowDataPacket[]>(
    `SELECT event_id, published_at FROM outbox_event WHERE order_no IN (?) AND type = 'payment.succeeded'`,
    [orderNos],
  );
  expect(rows).toHaveLength(ORDERS);
  expect(rows.filter((r) => r.published_at !== null)).toEqual([]);
  const eventIds = new Set(rows.map((r) => String(r.event_id)));

  let caughtMidBatch = 0;
  for (let round = 1; round <= MAX_KILL_ROUNDS && caughtMidBatch === 0; round++) {
    child = await startInstanceProcess(instanceEnv(brokerUrlVia(proxy.port)));
    caughtMidBatch = await killMidBatch(child, eventIds);
  }
  child = undefined;
  expect(caughtMidBatch).toBeGreaterThan(0);
  const publishedAtKill = await count(
    pool,
    'SELECT COUNT(*) FROM outbox_event WHERE event_id IN (?) AND published_at IS NOT NULL',
    [[...eventIds]],
  );
  expect(publishedAtKill).toBeLessThan(ORDERS);

  survivor = await medium.another(() => instanceEnv(TEST_RABBITMQ_URL));
  const ids = [...eventIds];
  await eventually(
    'every event published and handled by every example handler',
    async () => {
      if (
        (await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE event_id IN (?) AND published_at IS NULL', [ids])) >
        0
      )
        return false;
      if (ids.some((id) => !tap.distinctMessageIds().has(id))) return false;
      for (const table of EFFECT_TABLES) {
        if ((await count(pool, `SELECT COUNT(*) FROM ${table} WHERE order_no IN (?)`, [orderNos])) < ORDERS)
          return false;
      }
      const processed = await count(
        pool,
        'SELECT COUNT(*) FROM processed_event WHERE consumer IN (?) AND event_id IN (?)',
        [EXAMPLE_CONSUMERS, ids],
      );
      return processed >= ORDERS * EXAMPLE_CONSUMERS.length;
    },
    90000,
  );
  // A redelivery still on its way (a message the killed child held unacked) is handled before a
  // payment made now is.
  const marker = uniqueId('K');
  await payOrders(survivor, [marker]);
  await handledEverythingBefore([survivor], pool, marker, EFFECT_TABLES);

  expect(
    await count(
      pool,
      'SELECT COUNT(*) FROM outbox_event WHERE event_id IN (?) AND (published_at IS NULL OR dead_lettered_at IS NOT NULL)',
      [ids],
    ),
  ).toBe(0);
  const tapped = tap.messages.filter((m) => eventIds.has(m.messageId));
  expect(ids.filter((id) => !tap.distinctMessageIds().has(id))).toEqual([]);
  // The batch the kill interrupted was published again: the broker saw some events twice.
  expect(tapped.length - eventIds.size).toBeGreaterThanOrEqual(caughtMidBatch);

  for (const table of EFFECT_TABLES) {
    const [effects] = await pool.query<RowDataPacket[]>(
      `SELECT COUNT(*) AS total, COUNT(DISTINCT order_no) AS orders, COUNT(DISTINCT event_id) AS events
       FROM ${table} WHERE order_no IN (?)`,
      [orderNos],
    );
    expect({ table, ...effects[0] }).toEqual({ table, total: ORDERS, orders: ORDERS, events: ORDERS });
    expect(
      await count(pool, `SELECT COUNT(*) FROM ${table} WHERE order_no IN (?) AND event_id NOT IN (?)`, [orderNos, ids]),
    ).toBe(0);
  }
  const [processed] = await pool.query<RowDataPacket[]>(
    `SELECT consumer, COUNT(*) AS total, COUNT(DISTINCT event_id) AS events
     FROM processed_event WHERE consumer IN (?) AND event_id IN (?) GROUP BY consumer ORDER BY consumer`,
    [EXAMPLE_CONSUMERS, ids],
  );
  expect(processed.map((p) => ({ ...p }))).toEqual(
    [...EXAMPLE_CONSUMERS].sort().map((consumer) => ({ consumer, total: ORDERS, events: ORDERS })),
  );
  expect(await count(pool, 'SELECT COUNT(*) FROM handler_retry WHERE event_id IN (?)', [ids])).toBe(0);
});
