import { Pool, RowDataPacket } from 'mysql2/promise';
import {
  count,
  createTestPlatforms,
  RunningApp,
  startApp,
  TestClient,
  TestPlatforms,
  testDatabasePool,
} from './support/test-app';
import { deliver, inParallel, isAck, registerAll, StormPayment, stormPayments } from './support/payment-storm';
import { eventually, sleep } from './support/eventually';
import { WebhookReceiver } from './support/webhook-receiver';
import { startSummary } from '../src/start/start-line';

/** Short, so that a whole schedule runs in seconds: 7 attempts, 0 s, then 1 to 3 s apart. */
const SCHEDULE_SECONDS = [0, 1, 1, 2, 2, 3, 3];
const TIMEOUT_MS = 1500;
const PAYMENTS = 24;
/** Longer than a whole schedule (12 s), so that only an endpoint failing across messages is disabled. */
const DISABLE_AFTER_SECONDS = 20;

function webhooksEnv(platforms: TestPlatforms): Record<string, string> {
  return {
    ...platforms.env,
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_RETRY_SCHEDULE_SECONDS: SCHEDULE_SECONDS.join(','),
    WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    WEBHOOK_POLL_INTERVAL_MS: '50',
    WEBHOOK_ENDPOINT_CONCURRENCY: '4',
    WEBHOOK_DISABLE_AFTER_SECONDS: String(DISABLE_AFTER_SECONDS),
    OUTBOX_POLL_INTERVAL_MS: '50',
  };
}

interface Endpoint {
  id: string;
  secret: string;
}

describe('signed webhooks (Standard Webhooks), two replicas, no broker', () => {
  let platforms: TestPlatforms;
  let replicas: RunningApp[] = [];
  let clients: TestClient[];
  let pool: Pool;
  const receivers: WebhookReceiver[] = [];

  const admin = () => platforms.admins.admin;

  async function createEndpoint(receiver: WebhookReceiver, body: Record<string, unknown> = {}): Promise<Endpoint> {
    const answer = await clients[0].admin('POST', '/admin/webhook-endpoints', admin(), { url: receiver.url, ...body });
    expect(answer.status).toBe(201);
    const created = answer.json<Endpoint>();
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
    await registerAll(clients[0], payments);
    await inParallel(payments, 8, async (p) => {
      const answer = await deliver(clients[payments.indexOf(p) % 2], p);
      expect(isAck(p, answer)).toBe(true);
    });
    const [rows] = await pool.query<RowDataPacket[]>(
      "SELECT event_id FROM outbox_event WHERE order_no IN (?) AND type = 'payment.succeeded'",
      [payments.map((p) => p.orderNo)],
    );
    expect(rows).toHaveLength(payments.length);
    return rows.map((r) => String(r.event_id));
  }

  /** webhook_attempt's columns, as the suite reads them. */
  interface AttemptRow {
    attempt: number;
    started_at: Date;
    latency_ms: number;
    status_code: number | null;
    succeeded: number;
  }

  async function attemptRows(endpointId: string, eventId: string): Promise<AttemptRow[]> {
    const [rows] = await pool.query<Array<RowDataPacket & AttemptRow>>(
      'SELECT attempt, started_at, latency_ms, status_code, succeeded FROM webhook_attempt WHERE endpoint_id = ? AND event_id = ? ORDER BY attempt',
      [endpointId, eventId],
    );
    return rows;
  }

  beforeAll(async () => {
    platforms = await createTestPlatforms();
    pool = testDatabasePool();
    replicas = [await startApp(webhooksEnv(platforms)), await startApp(webhooksEnv(platforms))];
    clients = replicas.map((r) => new TestClient(r.url, platforms));
  });

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.close()));
    await Promise.all(receivers.map((r) => r.stop()));
    await pool.end();
  });

  it('should refuse http:// and private addresses unless WEBHOOK_ALLOW_PRIVATE_URLS=true, which the start line says', async () => {
    const strict = await startApp(platforms.env);
    try {
      const client = new TestClient(strict.url, platforms);
      const refusal = async (url: string) => {
        const answer = await client.admin('POST', '/admin/webhook-endpoints', admin(), { url });
        expect(answer.status).toBe(400);
        return answer.json<{ message: string }>().message;
      };
      expect(await refusal('http://shop.example.com/hooks')).toBe('url must be https://');
      expect(await refusal('https://127.0.0.1/hooks')).toMatch(/loopback, private, link-local or metadata/);
      expect(await refusal('https://[::ffff:169.254.169.254]/latest')).toMatch(/metadata/);
      expect(startSummary(strict.app, 0, 0).msg).not.toContain('WEBHOOKS');
    } finally {
      await strict.close();
    }
    // The two replicas were started with it.
    expect(startSummary(replicas[0].app, 0, 0).msg).toContain(
      'WEBHOOKS MAY CALL PRIVATE ADDRESSES AND http:// (WEBHOOK_ALLOW_PRIVATE_URLS=true)',
    );
  });

  it('should let admins write endpoints, viewers read them, audit every write and show the secret once', async () => {
    const receiver = await newReceiver();
    const viewer = platforms.admins.viewer;
    expect((await clients[0].admin('POST', '/admin/webhook-endpoints', viewer, { url: receiver.url })).status).toBe(
      403,
    );
    expect(
      (await clients[0].admin('POST', '/admin/webhook-endpoints', admin(), { url: 'ftp://example.com/x' })).status,
    ).toBe(400);
    expect(
      (
        await clients[0].admin('POST', '/admin/webhook-endpoints', admin(), {
          url: receiver.url,
          eventTypes: ['payment.nothing'],
        })
      ).status,
    ).toBe(400);

    const created = await createEndpoint(receiver, { eventTypes: ['refund.succeeded'], description: 'shop' });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const listed = await clients[1].admin('GET', '/admin/webhook-endpoints', viewer);
    expect(listed.status).toBe(200);
    expect(listed.body).not.toContain(created.secret);
    expect(listed.json()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: created.id, url: receiver.url, eventTypes: ['refund.succeeded'], enabled: true }),
      ]),
    );

    const patched = await clients[0].admin('PATCH', `/admin/webhook-endpoints/${created.id}`, admin(), {
      enabled: false,
      eventTypes: null,
    });
    expect(patched.status).toBe(200);
    expect(patched.json()).toMatchObject({ enabled: false, eventTypes: null });
    expect(patched.body).not.toContain('whsec_');

    const rotated = await clients[0].admin('POST', `/admin/webhook-endpoints/${created.id}/rotate-secret`, admin());
    expect(rotated.status).toBe(200);
    const newSecret = rotated.json<Endpoint>().secret;
    expect(newSecret).not.toBe(created.secret);
    expect(rotated.json<{ previousSecretUntil: string }>().previousSecretUntil).not.toBeNull();

    expect((await clients[0].admin('DELETE', `/admin/webhook-endpoints/${created.id}`, viewer)).status).toBe(403);
    expect((await clients[0].admin('DELETE', `/admin/webhook-endpoints/${created.id}`, admin())).status).toBe(200);
    expect((await clients[0].admin('DELETE', `/admin/webhook-endpoints/${created.id}`, admin())).status).toBe(404);

    const [audit] = await pool.query<Array<RowDataPacket & { action: string }>>(
      'SELECT operator_id, action, request_body, result FROM admin_audit WHERE target = ? ORDER BY id',
      [`webhook-endpoint:${created.id}`],
    );
    expect(audit.map((a) => a.action)).toEqual([
      'WEBHOOK_ENDPOINT_CREATED',
      'WEBHOOK_ENDPOINT_UPDATED',
      'WEBHOOK_SECRET_ROTATED',
      'WEBHOOK_ENDPOINT_DELETED',
    ]);
    expect(audit.every((a) => a.operator_id === 'alice')).toBe(true);
    const audited = JSON.stringify(audit);
    expect(audited).not.toContain(created.secret);
    expect(audited).not.toContain(newSecret);
  });

  it('should deliver every paid order to a flaky, slow, at first down endpoint and to a healthy one, each attempt sent once', async () => {
    const flaky = await newReceiver();
    const healthy = await newReceiver();
    const a = await createEndpoint(flaky);
    const b = await createEndpoint(healthy, { eventTypes: ['payment.succeeded'] });
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
    await eventually(
      'the healthy endpoint to accept every event',
      () => healthy.acceptedIds().size === PAYMENTS,
      30_000,
    );
    const healthyDone = Date.now();
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
    // accepted before the flaky one came back.
    expect(healthy.received.every((r) => r.attempt === 1)).toBe(true);
    expect(Math.max(...healthy.accepted().map((r) => r.receivedAt))).toBeLessThanOrEqual(healthyDone);

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
        (await count(
          pool,
          "SELECT COUNT(*) FROM webhook_delivery WHERE endpoint_id IN (?, ?) AND status = 'SUCCEEDED'",
          [a.id, b.id],
        )) ===
        2 * PAYMENTS,
      10_000,
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
      expect(attempts.at(-2)!.latency_ms).toBeGreaterThanOrEqual(TIMEOUT_MS);
      expect(attempts.at(-1)).toMatchObject({ status_code: 200, succeeded: 1 });
    }

    // The attempts API: filters, the status code, the latency, the error and the first 1 KB.
    const page = await clients[1].admin(
      'GET',
      `/admin/webhook-endpoints/${a.id}/attempts?eventId=${failedTwice[0]}&status=failed`,
      platforms.admins.viewer,
    );
    expect(page.status).toBe(200);
    const items = page.json<{ items: Array<Record<string, unknown>> }>().items;
    expect(items).toHaveLength((await attemptRows(a.id, failedTwice[0])).length - 1);
    expect(items.map((i) => i.attempt)).toEqual([...items.map((i) => i.attempt as number)].sort((x, y) => y - x));
    expect(items[0]).toMatchObject({ eventId: failedTwice[0], statusCode: 500, status: 'failed', error: 'HTTP 500' });
    expect((items[0].responseBody as string).length).toBe(1024);
    expect(typeof items[0].latencyMs).toBe('number');
  });

  it('should mark a message FAILED after the last attempt, then resend one and recover the rest', async () => {
    const receiver = await newReceiver();
    receiver.behaviour = () => ({ status: 503 });
    const endpoint = await createEndpoint(receiver);
    const since = new Date(Date.now() - 1000).toISOString();
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
    expect(
      (
        await clients[0].admin('POST', `/admin/webhook-endpoints/${endpoint.id}/resend`, platforms.admins.viewer, {
          eventId: eventIds[0],
        })
      ).status,
    ).toBe(403);
    const resent = await clients[0].admin('POST', `/admin/webhook-endpoints/${endpoint.id}/resend`, admin(), {
      eventId: eventIds[0],
    });
    expect(resent.status).toBe(202);
    await eventually('the resent message to be accepted', () => receiver.acceptedIds().has(eventIds[0]), 10_000);
    expect(receiver.accepted().find((r) => r.webhookId === eventIds[0])!.attempt).toBe(SCHEDULE_SECONDS.length + 1);

    const recovered = await clients[1].admin('POST', `/admin/webhook-endpoints/${endpoint.id}/recover`, admin(), {
      since,
    });
    expect(recovered.status).toBe(202);
    expect(recovered.json()).toMatchObject({ queued: eventIds.length - 1 });
    await eventually('every message to be accepted', () => receiver.acceptedIds().size === eventIds.length, 15_000);
    expect(receiver.repeatedAttempts()).toEqual([]);
    const actions = await pool.query<Array<RowDataPacket & { action: string }>>(
      'SELECT action FROM admin_audit WHERE target = ? ORDER BY id',
      [`webhook-endpoint:${endpoint.id}`],
    );
    expect(actions[0].map((r) => r.action)).toEqual([
      'WEBHOOK_ENDPOINT_CREATED',
      'WEBHOOK_RESENT',
      'WEBHOOK_RECOVERED',
    ]);
    await clients[0].admin('PATCH', `/admin/webhook-endpoints/${endpoint.id}`, admin(), { enabled: false });
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
    await eventually('a first failure', async () => (await failingSince()) !== null, 10_000);
    const since = (await failingSince())!.getTime();
    await sleep(Math.max(0, since + DISABLE_AFTER_SECONDS * 1000 - Date.now()) + 200);
    await payAll(stormPayments(1, 'WD', 901));

    const view = async () =>
      (await clients[1].admin('GET', '/admin/webhook-endpoints', platforms.admins.viewer))
        .json<Array<{ id: string; enabled: boolean; disabledReason: string | null }>>()
        .find((e) => e.id === endpoint.id)!;
    await eventually('the endpoint to be disabled', async () => !(await view()).enabled, 10_000);
    expect((await view()).disabledReason).toMatch(/^every attempt failed since \d{4}-/);
    const metrics = await (await fetch(`${replicas[0].managementUrl}/metrics`)).text();
    expect(metrics).toContain(`webhook_endpoints_disabled_for_failing{endpoint="${endpoint.id}"} 1`);
    // The replicas share one process, so one registry: disabled once, by one of them.
    expect(metrics).toContain(`webhook_endpoints_disabled_total{endpoint="${endpoint.id}"} 1`);

    // Nothing more is sent to it while it is disabled.
    const sent = receiver.received.length;
    await sleep(2500);
    expect(receiver.received.length).toBe(sent);

    receiver.behaviour = () => ({ status: 200 });
    const enabled = await clients[0].admin('PATCH', `/admin/webhook-endpoints/${endpoint.id}`, admin(), {
      enabled: true,
    });
    expect(enabled.json()).toMatchObject({ enabled: true, disabledReason: null, failingSince: null });
    await eventually('the waiting message to be accepted', () => receiver.acceptedIds().size === 1, 10_000);
  });

  it('should sign with both secrets for a day after a rotation, so a receiver can verify with either', async () => {
    const receiver = await newReceiver();
    const endpoint = await createEndpoint(receiver);
    const rotated = await clients[0].admin('POST', `/admin/webhook-endpoints/${endpoint.id}/rotate-secret`, admin());
    const newSecret = rotated.json<Endpoint>().secret;

    receiver.secrets = [endpoint.secret];
    const [first] = await payAll(stormPayments(1, 'WR', 700));
    await eventually('the message verified with the old secret', () => receiver.acceptedIds().has(first), 10_000);
    receiver.secrets = [newSecret];
    const [second] = await payAll(stormPayments(1, 'WR', 800));
    await eventually('the message verified with the new secret', () => receiver.acceptedIds().has(second), 10_000);
    expect(receiver.accepted().every((r) => r.signatures === 2)).toBe(true);
  });
});
