import { connect, Socket } from 'node:net';
import { Pool } from 'mysql2/promise';
import { eventually } from './support/eventually';
import {
  count,
  createTestPlatforms,
  RunningApp,
  startApp,
  testDatabasePool,
  TestPlatforms,
  uniqueId,
} from './support/test-app';

/**
 * The HTTP server's own bounds: a body sent at a trickle, idle connections, a connection cap, and
 * the request id every answer carries. The use cases' bounded waits when the database or the
 * broker stalls are in test/medium/bounded-waits.medium-spec.ts.
 */
describe('bounded waits: HTTP limits', () => {
  let platforms: TestPlatforms;
  let pool: Pool;
  let running: RunningApp | undefined;

  beforeAll(async () => {
    platforms = await createTestPlatforms();
    pool = testDatabasePool();
    running = await startApp({ ...platforms.env, HTTP_REQUEST_TIMEOUT_MS: '1000', HTTP_HEADERS_TIMEOUT_MS: '1000' });
  });
  afterAll(async () => {
    await running?.close();
    await pool?.end();
  });

  const port = (app: RunningApp) => Number(new URL(app.url).port);

  it('should cut a body sent at a trickle with 408, and record nothing', async () => {
    const before = await count(pool, 'SELECT COUNT(*) FROM callback_delivery');
    const socket = await open(port(running!));
    const bodyLength = 200;
    socket.write(
      `POST /notify/alipay HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded; charset=utf-8\r\nContent-Length: ${bodyLength}\r\n\r\n`,
    );
    let sent = 0;
    const timer = setInterval(() => {
      if (!socket.destroyed) socket.write('a', () => undefined);
      sent++;
    }, 200);
    try {
      await eventually('the server to close the connection', () => socket.closed, 15000);
    } finally {
      clearInterval(timer);
    }

    expect(sent).toBeLessThan(bodyLength);
    expect(received(socket)).toMatch(/^HTTP\/1\.1 408 /);
    expect(await count(pool, 'SELECT COUNT(*) FROM callback_delivery')).toBe(before);
  });

  it('should close connections that never send a request', async () => {
    const idle = await Promise.all([1, 2, 3].map(() => open(port(running!))));

    await eventually('every idle connection to be closed', () => idle.every((s) => s.closed), 15000);
  });

  it('should refuse connections beyond HTTP_MAX_CONNECTIONS at once', async () => {
    const capped = await startApp({
      ...platforms.env,
      HTTP_MAX_CONNECTIONS: '3',
      // Far longer than the wait below: only the connection cap can close a connection within it.
      HTTP_HEADERS_TIMEOUT_MS: '120000',
      HTTP_REQUEST_TIMEOUT_MS: '120000',
    });
    try {
      const allowed = await Promise.all([1, 2, 3].map(() => open(port(capped))));
      const extra = await open(port(capped));

      await eventually('the extra connection to be closed', () => extra.closed, 60_000);
      expect(allowed.map((s) => s.closed)).toEqual([false, false, false]);
      for (const s of allowed) s.destroy();
    } finally {
      await capped.close();
    }
  });

  it('should echo X-Request-Id in every response, and make one up when none is sent', async () => {
    const given = uniqueId('req-');
    const answers = await Promise.all([
      fetch(`${running!.url}/health/live`, { headers: { 'x-request-id': given } }),
      fetch(`${running!.url}/no-such-path`, { headers: { 'x-request-id': given } }),
      fetch(`${running!.url}/notify/wechatpay`, {
        method: 'POST',
        headers: { 'x-request-id': given, 'content-type': 'application/json' },
        body: '{',
      }),
      fetch(`${running!.url}/payment-orders/x`, { headers: { 'x-request-id': given } }),
    ]);
    expect(answers.map((a) => [a.status, a.headers.get('x-request-id')])).toEqual([
      [200, given],
      [404, given],
      [400, given],
      [401, given],
    ]);

    const generated = (await fetch(`${running!.url}/health/live`)).headers.get('x-request-id');
    expect(generated).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const refused = (
      await fetch(`${running!.url}/health/live`, { headers: { 'x-request-id': 'not a token!' } })
    ).headers.get('x-request-id');
    expect(refused).not.toBe('not a token!');
    expect(refused).toMatch(/^[0-9a-f-]{36}$/);
  });
});

const receivedData = new WeakMap<Socket, string>();

/** A raw TCP connection to the app; `closed` turns true when either side ends it. */
async function open(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  receivedData.set(socket, '');
  socket.on('data', (chunk) => receivedData.set(socket, receivedData.get(socket) + String(chunk)));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return socket;
}

function received(socket: Socket): string {
  return receivedData.get(socket) ?? '';
}
