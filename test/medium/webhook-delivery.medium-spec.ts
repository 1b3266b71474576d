import { Pool, RowDataPacket } from 'mysql2/promise';
import { AttemptOutcome, CreateWebhookEndpointDto } from '../../src/events/webhooks/dto/webhook-endpoint.dto';
import { EventType } from '../../src/events/payment-events';
import { WebhookDispatcher } from '../../src/events/webhooks/webhook-dispatcher';
import { WebhookEndpoints } from '../../src/events/webhooks/webhook-endpoints.service';
import { WebhooksModule } from '../../src/events/webhooks/webhooks.module';
import { eventually, sleep } from '../support/eventually';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { MediumNotify, metricSample, notifyModules } from '../support/medium-events';
import { isAck } from '../support/medium-intake';
import { inParallel, StormPayment, stormPayments } from '../support/payment-storm';
import { count, notificationsOnly, TestPlatforms } from '../support/test-app';
import { WebhookReceiver } from '../support/webhook-receiver';
import { roundsOf } from '../support/worker-rounds';

/**
 * Signed webhooks (Standard Webhooks) as a service, two instances on one database and no broker:
 * payments delivered to the notify use case, the fan-out from the outbox, the dispatcher's
 * attempts, retries, timeouts, the disabling of an endpoint that keeps failing, resend, recover
 * and secret rotation, called on the endpoints' use cases (WebhookEndpoints) as the admin routes
 * call them, in a transaction. Every request is verified by the standardwebhooks library
 * (test/support/webhook-receiver.ts). The admin routes'
 * status codes, roles and audit are in test/webhooks.e2e-spec.ts.
 */

/** Short, so that a whole schedule runs in seconds: 7 attempts, 0 s, then 1 to 3 s apart. */
const SCHEDULE_SECONDS = [0, 1, 1, 2, 2, 3, 3];
const TIMEOUT_MS = 1500;
const PAYMENTS = 24;
/** Longer than a whole schedule (12 s), so that only an endpoint failing across messages is disabled. */
const DISABLE_AFTER_SECONDS = 20;

interface Endpoint {
  id: string;
  secret: string;
}

/** webhook_attempt's columns, as the suite reads them. */
interface AttemptRow {
  attempt: number;
  started_at: Date;
  latency_ms: number;
  status_code: number | null;
  succeeded: number;
}

let medium: Medium;
let platforms: TestPlatforms;
let replicas: MediumContext[] = [];
let pool: Pool;
let notify: MediumNotify;
const receivers: WebhookReceiver[] = [];

/** An endpoint use case as its admin route calls it (each write opens its own transaction), in a context of its own. */
function endpoints<T>(work: (endpoints: WebhookEndpoints) => Promise<T>, replica = 0): Promise<T> {
  const ctx = replicas[replica];
  return ctx.inContext(() => work(ctx.get(WebhookEndpoints)));
}

async function createEndpoint(
  receiver: WebhookReceiver,
  body: Pick<CreateWebhookEndpointDto, 'eventTypes'> = {},
): Promise<Endpoint> {
  const created = await endpoints((e) => e.create({ url: receiver.url, ...body }));
  receiver.secrets = [created.secret];
  return created;
}

async function newReceiver(): Promise<WebhookReceiver> {
  const receiver = new WebhookReceiver();
  await receiver.start();
  receivers.push(receiver);
  return receiver;
}

/** Pays the orders, alternating replicas and channels; answers the events' ids from the outbox. */
async function payAll(payments: StormPayment[]): Promise<string[]> {
  await notify.registerAll(replicas[0], payments);
  await inParallel(payments, 8, async (p) => {
    const reply = await notify.deliver(replicas[payments.indexOf(p) % 2], p);
    expect(isAck(p, reply)).toBe(true);
  });
  const [rows] = await pool.query<RowDataPacket[]>(
    "SELECT event_id FROM outbox_event WHERE order_no IN (?) AND type = 'payment.succeeded'",
    [payments.map((p) => p.orderNo)],
  );
  expect(rows).toHaveLength(payments.length);
  return rows.map((r) => String(r.event_id));
}

async function attemptRows(endpointId: string, eventId: string): Promise<AttemptRow[]> {
  const [rows] = await pool.query<Array<RowDataPacket & AttemptRow>>(
    'SELECT attempt, started_at, latency_ms, status_code, succeeded FROM webhook_attempt WHERE endpoint_id = ? AND event_id = ? ORDER BY attempt',
    [endpointId, eventId],
  );
  return rows;
}

const metric = (name: string, endpointId: string) => metricSample(`${name}{endpoint="${endpointId}"}`);

beforeAll(async () => {
  // The fan-out gives every enabled endpoint every event of the database: only this suite's.
  const env = (p: TestPlatforms) => ({
    ...notificationsOnly(p.env),
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_RETRY_SCHEDULE_SECONDS: SCHEDULE_SECONDS.join(','),
    WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    WEBHOOK_POLL_INTERVAL_MS: '50',
    WEBHOOK_ENDPOINT_CONCURRENCY: '4',
    WEBHOOK_DISABLE_AFTER_SECONDS: String(DISABLE_AFTER_SECONDS),
    OUTBOX_POLL_INTERVAL_MS: '50',
  });
  medium = await startMedium(env, {
    imports: [...notifyModules(false), WebhooksModule],
    fake: false,
    replicas: 2,
    ownDatabase: true,
  });
  ({ platforms, pool, replicas } = medium);
  notify = new MediumNotify(platforms);
});

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.close()));
  await Promise.all(receivers.map((r) => r.stop()));
  await medium?.close();
});

it('should deliver every paid order to a flaky, slow, at first down endpoint and to a healthy one, each attempt sent once', async () => {
  const flaky = await newReceiver();
  const healthy = await newReceiver();
  const a = await createEndpoint(flaky);
  const b = await createEndpoint(healthy, { eventTypes: [EventType.PaymentSucceeded] });
  // Once up, the flaky one fails the first two requests it gets of every third message, and
  // answers the first of every fourth too late; it is down while the payments arrive.
  const order = new Map<string, number>();
  const seen = new Map<string, number>();
  flaky.behaviour = (id) => {
    if (!order.has(id)) order.set(id, order.size);
    const n = order.get(id)!;
    const requests = (seen.get(id) ?? 0) + 1;
    seen.set(id, requests);
    if (n % 3 === 0 && requests <= 2) return { status: 500, body: 'x'.repeat(3000) };
    if (n % 4 === 1 && requests === 1) return { status: 200, delayMs: TIMEOUT_MS + 500 };
    return { status: 200 };
  };
  await flaky.stop();

  const eventIds = await payAll(stormPayments(PAYMENTS, 'WH', 100));
  await eventually('the healthy endpoint to accept every event', () => healthy.acceptedIds().size === PAYMENTS, 30_000);
  // While the healthy endpoint took every event, the other's deliveries were being tried and failing.
  const flakyWhileDown = await pool.query<RowDataPacket[]>(
    `SELECT SUM(attempts > 0) AS tried, SUM(status = 'SUCCEEDED') AS succeeded FROM webhook_delivery WHERE endpoint_id = ?`,
    [a.id],
  );
  await flaky.start();
  await eventually('the flaky endpoint to accept every event', () => flaky.acceptedIds().size === PAYMENTS, 60_000);

  // Every event once per endpoint at least, under its event id, verified by standardwebhooks.
  expect([...healthy.acceptedIds()].sort()).toEqual([...eventIds].sort());
  expect([...flaky.acceptedIds()].sort()).toEqual([...eventIds].sort());
  expect(flaky.received.every((r) => r.verified) && healthy.received.every((r) => r.verified)).toBe(true);
  const sample = healthy.accepted()[0].body!;
  expect(sample.type).toBe('payment.succeeded');
  expect(Object.keys(sample.data).sort()).toEqual(
    ['amount', 'channel', 'currency', 'eventId', 'occurredAt', 'orderNo', 'transactionId', 'type'].sort(),
  );
  expect(sample.timestamp).toBe(sample.data.occurredAt);

  // The healthy endpoint never waited for the other: every message at its first attempt, all
  // accepted while the flaky one was down and its deliveries were failing.
  expect(healthy.received.every((r) => r.attempt === 1)).toBe(true);
  const [[whileDown]] = flakyWhileDown;
  expect([Number(whileDown.tried) > 0, Number(whileDown.succeeded)]).toEqual([true, 0]);

  // Two replicas, and never one attempt sent twice, nor one message sent twice at once.
  expect(flaky.repeatedAttempts()).toEqual([]);
  expect(healthy.repeatedAttempts()).toEqual([]);
  expect(flaky.maxConcurrentPerMessage).toBe(1);
  expect(healthy.maxConcurrentPerMessage).toBe(1);
  expect(await count(pool, 'SELECT COUNT(*) FROM webhook_delivery WHERE endpoint_id IN (?, ?)', [a.id, b.id])).toBe(
    2 * PAYMENTS,
  );
  await eventually(
    'every delivery to be SUCCEEDED',
    async () =>
      (await count(pool, "SELECT COUNT(*) FROM webhook_delivery WHERE endpoint_id IN (?, ?) AND status = 'SUCCEEDED'", [
        a.id,
        b.id,
      ])) ===
      2 * PAYMENTS,
    60_000,
  );

  // Retries on schedule: each attempt starts no earlier than the schedule's delay after the
  // previous one ended.
  const failedTwice = [...order].filter(([, n]) => n % 3 === 0).map(([id]) => id);
  expect(failedTwice.length).toBeGreaterThan(0);
  for (const eventId of failedTwice) {
    const attempts = await attemptRows(a.id, eventId);
    // Refused while it was down (no status), then 500 twice, then accepted.
    expect(attempts.map((r) => r.status_code).filter((code) => code !== null)).toEqual([500, 500, 200]);
    for (let i = 1; i < attempts.length; i++) {
      const previousEnd = new Date(attempts[i - 1].started_at).getTime() + Number(attempts[i - 1].latency_ms);
      expect(new Date(attempts[i].started_at).getTime() - previousEnd).toBeGreaterThanOrEqual(
        SCHEDULE_SECONDS[i] * 1000 - 5,
      );
    }
  }
  const timedOut = [...order].filter(([, n]) => n % 4 === 1 && n % 3 !== 0).map(([id]) => id);
  for (const eventId of timedOut) {
    const attempts = await attemptRows(a.id, eventId);
    expect(attempts.at(-2)).toMatchObject({ status_code: null, succeeded: 0 });
    // Ended by the timeout. Node starts a timer from the event loop's cached clock, so the
    // latency the sender measures with Date.now() can read a millisecond or so under it (1499 was
    // seen): the same 5 ms allowance as the schedule's check above.
    expect(attempts.at(-2)!.latency_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(attempts.at(-1)).toMatchObject({ status_code: 200, succeeded: 1 });
  }

  // The attempts use case: filters, the status code, the latency, the error and the first 1 KB.
  const { items } = await endpoints(
    (e) => e.attempts(a.id, { eventId: failedTwice[0], status: AttemptOutcome.Failed }),
    1,
  );
  expect(items).toHaveLength((await attemptRows(a.id, failedTwice[0])).length - 1);
  expect(items.map((i) => i.attempt)).toEqual([...items.map((i) => i.attempt)].sort((x, y) => y - x));
  expect(items[0]).toMatchObject({ eventId: failedTwice[0], statusCode: 500, status: 'failed', error: 'HTTP 500' });
  expect(items[0].responseBody!.length).toBe(1024);
  expect(typeof items[0].latencyMs).toBe('number');
});

it('should mark a message FAILED after the last attempt, then resend one and recover the rest', async () => {
  const receiver = await newReceiver();
  receiver.behaviour = () => ({ status: 503 });
  const endpoint = await createEndpoint(receiver);
  const since = new Date(Date.now() - 1000);
  const eventIds = await payAll(stormPayments(4, 'WF', 500));

  await eventually(
    'every message to be FAILED',
    async () =>
      (await count(pool, "SELECT COUNT(*) FROM webhook_delivery WHERE endpoint_id = ? AND status = 'FAILED'", [
        endpoint.id,
      ])) === eventIds.length,
    30_000,
  );
  for (const eventId of eventIds) {
    expect((await attemptRows(endpoint.id, eventId)).length).toBe(SCHEDULE_SECONDS.length);
  }
  expect(receiver.acceptedIds().size).toBe(0);

  receiver.behaviour = () => ({ status: 204 });
  expect(await endpoints((e) => e.resend(endpoint.id, eventIds[0]))).toEqual({
    eventId: eventIds[0],
    status: 'PENDING',
    queued: true,
  });
  await eventually('the resent message to be accepted', () => receiver.acceptedIds().has(eventIds[0]), 60_000);
  expect(receiver.accepted().find((r) => r.webhookId === eventIds[0])!.attempt).toBe(SCHEDULE_SECONDS.length + 1);

  const recovered = await endpoints((e) => e.recover(endpoint.id, since), 1);
  expect(recovered).toMatchObject({ queued: eventIds.length - 1 });
  await eventually('every message to be accepted', () => receiver.acceptedIds().size === eventIds.length, 60_000);
  expect(receiver.repeatedAttempts()).toEqual([]);
  await endpoints((e) => e.update(endpoint.id, { enabled: false }));
});

it('should disable an endpoint whose every attempt failed for WEBHOOK_DISABLE_AFTER_SECONDS, say so in a metric, and enable it again', async () => {
  const receiver = await newReceiver();
  receiver.behaviour = () => ({ status: 500 });
  const endpoint = await createEndpoint(receiver);
  const failingSince = async () => {
    const [[row]] = await pool.query<RowDataPacket[]>('SELECT failing_since FROM webhook_endpoint WHERE id = ?', [
      endpoint.id,
    ]);
    return row.failing_since as Date | null;
  };
  await payAll(stormPayments(1, 'WD', 900));
  await eventually('a first failure', async () => (await failingSince()) !== null, 60_000);
  const since = (await failingSince())!.getTime();
  await sleep(Math.max(0, since + DISABLE_AFTER_SECONDS * 1000 - Date.now()) + 200);
  await payAll(stormPayments(1, 'WD', 901));

  const view = async () => (await endpoints((e) => e.list(), 1)).find((e) => e.id === endpoint.id)!;
  await eventually('the endpoint to be disabled', async () => !(await view()).enabled, 60_000);
  expect((await view()).disabledReason).toMatch(/^every attempt failed since \d{4}-/);
  expect(await metric('webhook_endpoints_disabled_for_failing', endpoint.id)).toBe(1);
  // The replicas share one process, so one registry: disabled once, by one of them.
  expect(await metric('webhook_endpoints_disabled_total', endpoint.id)).toBe(1);

  // Nothing more is sent to it while it is disabled: not once its waiting deliveries are due and
  // every replica's dispatcher has since looked for due deliveries, claiming none of them.
  const sent = receiver.received.length;
  const attemptsMade = () =>
    count(pool, 'SELECT COALESCE(SUM(attempts), 0) FROM webhook_delivery WHERE endpoint_id = ?', [endpoint.id]);
  const attemptsBefore = await attemptsMade();
  await eventually(
    'the waiting deliveries to be due',
    async () =>
      (await count(
        pool,
        `SELECT COUNT(*) FROM webhook_delivery WHERE endpoint_id = ? AND status = 'PENDING' AND next_attempt_at > UTC_TIMESTAMP(3)`,
        [endpoint.id],
      )) === 0,
    60_000,
  );
  await roundsOf('claimAndSend', ...replicas.map((r) => r.get(WebhookDispatcher)))('the deliveries were due');
  expect(await attemptsMade()).toBe(attemptsBefore);
  expect(receiver.received.length).toBe(sent);

  receiver.behaviour = () => ({ status: 200 });
  const enabled = await endpoints((e) => e.update(endpoint.id, { enabled: true }));
  expect(enabled).toMatchObject({ enabled: true, disabledReason: null, failingSince: null });
  await eventually('the waiting message to be accepted', () => receiver.acceptedIds().size === 1, 60_000);
});

it('should sign with both secrets for a day after a rotation, so a receiver can verify with either', async () => {
  const receiver = await newReceiver();
  const endpoint = await createEndpoint(receiver);
  const rounds = roundsOf('claimAndSend', ...replicas.map((r) => r.get(WebhookDispatcher)));
  const { secret: newSecret } = await endpoints((e) => e.rotateSecret(endpoint.id));
  // A dispatcher's round reads the endpoints' secrets once, before its claims: one that began
  // before the rotation would sign with the old secret alone. Every round from here on read both.
  await rounds('the rotation');

  receiver.secrets = [endpoint.secret];
  const [first] = await payAll(stormPayments(1, 'WR', 700));
  await eventually('the message verified with the old secret', () => receiver.acceptedIds().has(first), 60_000);
  receiver.secrets = [newSecret];
  const [second] = await payAll(stormPayments(1, 'WR', 800));
  await eventually('the message verified with the new secret', () => receiver.acceptedIds().has(second), 60_000);
  expect(receiver.accepted().every((r) => r.signatures === 2)).toBe(true);
});
