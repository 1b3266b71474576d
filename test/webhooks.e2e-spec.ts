import { randomUUID } from 'node:crypto';
import { Pool, RowDataPacket } from 'mysql2/promise';
import {
  createTestPlatforms,
  RunningApp,
  startApp,
  TestClient,
  TestPlatforms,
  testDatabasePool,
} from './support/test-app';
import { startSummary } from '../src/start/start-line';

/**
 * The webhook endpoints' admin routes over HTTP: roles, status codes, the secret shown once, the
 * URL rule and the audit of every write. What the service does with the endpoints (fan-out,
 * signed delivery, retries, disabling, resend, recover, rotation) is in
 * test/medium/webhook-delivery.medium-spec.ts.
 */
describe('the webhook endpoints admin API', () => {
  let platforms: TestPlatforms;
  let app: RunningApp;
  let client: TestClient;
  let pool: Pool;
  const admin = () => platforms.admins.admin;
  const viewer = () => platforms.admins.viewer;

  beforeAll(async () => {
    platforms = await createTestPlatforms();
    pool = testDatabasePool();
    app = await startApp({ ...platforms.env, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
    client = new TestClient(app.url, platforms);
  });
  afterAll(async () => {
    await app?.close();
    await pool?.end();
  });

  it('should refuse http:// and private addresses unless WEBHOOK_ALLOW_PRIVATE_URLS=true, which the start line says', async () => {
    const strict = await startApp(platforms.env);
    try {
      const strictClient = new TestClient(strict.url, platforms);
      const refusal = async (url: string) => {
        const answer = await strictClient.admin('POST', '/admin/webhook-endpoints', admin(), { url });
        expect(answer.status).toBe(400);
        return answer.json<{ message: string }>().message;
      };
      expect(await refusal('http://shop.example.com/hooks')).toBe('url must be https://');
      expect(await refusal('https://127.0.0.1/hooks')).toMatch(
        /loopback, private, link-local or metadata address \(WEBHOOK_ALLOW_PRIVATE_URLS=true allows them/,
      );
      expect(await refusal('https://[::ffff:169.254.169.254]/latest')).toMatch(/metadata/);
      expect(startSummary(strict.app, 0, 0).msg).not.toContain('WEBHOOKS');
    } finally {
      await strict.close();
    }
    expect(startSummary(app.app, 0, 0).msg).toContain(
      'WEBHOOKS MAY CALL PRIVATE ADDRESSES AND http:// (WEBHOOK_ALLOW_PRIVATE_URLS=true)',
    );
  });

  it('should let admins write endpoints, viewers read them, audit every write and every refusal, and show the secret once', async () => {
    const url = 'http://127.0.0.1:9/hooks';
    const post = (path: string, token = admin(), body?: object) => client.admin('POST', path, token, body);
    expect((await post('/admin/webhook-endpoints', viewer(), { url })).status).toBe(403);
    expect((await post('/admin/webhook-endpoints', admin(), { url: 'ftp://example.com/x' })).status).toBe(400);
    expect((await post('/admin/webhook-endpoints', admin(), { url, eventTypes: ['payment.nothing'] })).status).toBe(
      400,
    );

    const answer = await post('/admin/webhook-endpoints', admin(), { url, eventTypes: ['refund.succeeded'] });
    expect(answer.status).toBe(201);
    const created = answer.json<{ id: string; secret: string }>();
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const path = `/admin/webhook-endpoints/${created.id}`;

    const listed = await client.admin('GET', '/admin/webhook-endpoints', viewer());
    expect(listed.status).toBe(200);
    expect(listed.body).not.toContain(created.secret);
    expect(listed.json()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: created.id, url, eventTypes: ['refund.succeeded'], enabled: true }),
      ]),
    );

    const patched = await client.admin('PATCH', path, admin(), { enabled: false, eventTypes: null });
    expect(patched.status).toBe(200);
    expect(patched.json()).toMatchObject({ enabled: false, eventTypes: null });
    expect(patched.body).not.toContain('whsec_');
    // null is no value for a field that is not nullable: a clear 400, the endpoint as it was.
    for (const body of [{ enabled: null }, { description: null }]) {
      const refused = await client.admin('PATCH', path, admin(), body);
      expect([refused.status, refused.json<{ message: string }>().message]).toEqual([
        400,
        expect.stringContaining(`${Object.keys(body)[0]} must not be null: leave it out instead`),
      ]);
    }
    expect((await client.admin('GET', '/admin/webhook-endpoints', viewer())).json()).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: created.id, enabled: false, eventTypes: null })]),
    );

    const rotated = await post(`${path}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const newSecret = rotated.json<{ secret: string }>().secret;
    expect(newSecret).not.toBe(created.secret);
    expect(rotated.json<{ previousSecretUntil: string }>().previousSecretUntil).not.toBeNull();

    // An event the endpoint never had, sent to it again from the outbox; then every failed one since.
    const eventId = randomUUID();
    await pool.query(
      `INSERT INTO outbox_event (event_id, type, order_no, payload, created_at) VALUES (?, 'payment.succeeded', ?, ?, NOW(3))`,
      [eventId, `WE-${eventId}`, JSON.stringify({ eventId, type: 'payment.succeeded', orderNo: `WE-${eventId}` })],
    );
    expect((await post(`${path}/resend`, viewer(), { eventId })).status).toBe(403);
    expect((await post(`${path}/resend`, admin(), { eventId })).status).toBe(202);
    expect((await post(`${path}/recover`, viewer(), { since: new Date().toISOString() })).status).toBe(403);
    expect((await post(`${path}/recover`, admin(), { since: new Date().toISOString() })).status).toBe(202);

    expect((await client.admin('DELETE', path, viewer())).status).toBe(403);
    expect((await client.admin('DELETE', path, admin())).status).toBe(200);
    expect((await client.admin('DELETE', path, admin())).status).toBe(404);

    const [audit] = await pool.query<Array<RowDataPacket & { action: string }>>(
      'SELECT operator_id, action, request_body, result FROM admin_audit WHERE target = ? ORDER BY id',
      [`webhook-endpoint:${created.id}`],
    );
    // Every write, and every refused one (each in a transaction of its own).
    expect(audit.map((a) => `${a.operator_id} ${a.action}`)).toEqual([
      'alice WEBHOOK_ENDPOINT_CREATED',
      'alice WEBHOOK_ENDPOINT_UPDATED',
      'alice WEBHOOK_ENDPOINT_UPDATE_REFUSED',
      'alice WEBHOOK_ENDPOINT_UPDATE_REFUSED',
      'alice WEBHOOK_SECRET_ROTATED',
      'victor WEBHOOK_RESEND_REFUSED',
      'alice WEBHOOK_RESENT',
      'victor WEBHOOK_RECOVER_REFUSED',
      'alice WEBHOOK_RECOVERED',
      'victor WEBHOOK_ENDPOINT_DELETE_REFUSED',
      'alice WEBHOOK_ENDPOINT_DELETED',
      'alice WEBHOOK_ENDPOINT_DELETE_REFUSED',
    ]);
    // A refused creation names no endpoint yet.
    const [refusedCreations] = await pool.query<Array<RowDataPacket & { action: string }>>(
      `SELECT operator_id, action FROM admin_audit WHERE target = 'webhook-endpoint:new' ORDER BY id`,
    );
    expect(refusedCreations.slice(-3).map((a) => `${a.operator_id} ${a.action}`)).toEqual([
      'victor WEBHOOK_ENDPOINT_CREATE_REFUSED',
      'alice WEBHOOK_ENDPOINT_CREATE_REFUSED',
      'alice WEBHOOK_ENDPOINT_CREATE_REFUSED',
    ]);
    const audited = JSON.stringify(audit);
    expect(audited).not.toContain(created.secret);
    expect(audited).not.toContain(newSecret);
  });
});
