import { get } from 'node:http';
import { connect, Socket } from 'node:net';
import { sleep } from './support/eventually';
import { createTestPlatforms, notificationsOnly, RunningApp, startApp } from './support/test-app';

const FLOOD_CONNECTIONS = 300;
const PROBES = 20;

/** A connection that sends a request's headers a byte at a time, and never finishes them. */
async function trickle(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => {
    socket.once('connect', () => resolve());
    socket.once('close', () => resolve());
  });
  if (!socket.destroyed) socket.write('GET /health/live HTTP/1.1\r\nHost: x\r\n');
  return socket;
}

/** The answer's status within 2 s, or 0: refused, reset or timed out. */
async function probe(url: string): Promise<number> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(2000) })).status;
  } catch {
    return 0;
  }
}

/** One GET on a connection of its own, closed after the answer: none is left to the flood below. */
function getOnce(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = get(url, { agent: false, headers: { connection: 'close' }, timeout: 5000 }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('timeout', () => request.destroy(new Error(`${url}: no answer in 5 s`)));
    request.on('error', reject);
  });
}

describe('the management port (METRICS_PORT) under a flood of slow connections on the public port', () => {
  let app: RunningApp;
  let management: string;
  let flood: Socket[] = [];

  beforeAll(async () => {
    const platforms = await createTestPlatforms();
    app = await startApp({
      ...notificationsOnly(platforms.env),
      HTTP_MAX_CONNECTIONS: String(FLOOD_CONNECTIONS),
      // The trickle stays connected for the whole test.
      HTTP_HEADERS_TIMEOUT_MS: '60000',
      HTTP_REQUEST_TIMEOUT_MS: '60000',
    });
    management = app.managementUrl;
  });
  afterAll(async () => {
    for (const socket of flood) socket.destroy();
    await app?.close();
  });

  // Before the flood below, which takes the public port for the rest of the suite.
  it('should give the public port only the readiness status, and the report and /metrics to the management port', async () => {
    const publicReady = await getOnce(`${app.url}/health/ready`);
    expect(publicReady.status).toBe(200);
    expect(JSON.parse(publicReady.body)).toEqual({ status: 'ok' });
    expect((await getOnce(`${app.url}/metrics`)).status).toBe(404);

    const report = await fetch(`${management}/health/ready`);
    expect(report.status).toBe(200);
    const body = (await report.json()) as { status: string; details: Record<string, unknown> };
    expect(body.status).toBe('ok');
    expect(Object.keys(body.details)).toEqual(expect.arrayContaining(['database', 'outbox', 'spool']));
    const metrics = await fetch(`${management}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('payment_notifications_total');
  });

  it('should answer liveness, readiness and /metrics on the management port while the public port is full', async () => {
    expect(await probe(`${management}/health/live`)).toBe(200);
    const port = Number(new URL(app.url).port);
    flood = await Promise.all(Array.from({ length: FLOOD_CONNECTIONS }, () => trickle(port)));
    const keepTrickling = setInterval(() => {
      for (const socket of flood) if (!socket.destroyed) socket.write('x', () => undefined);
    }, 500);
    try {
      // The public port is taken: its own probe fails, as the kubelet's did.
      expect(await probe(`${app.url}/health/live`)).toBe(0);
      // Each within probe()'s 2 s, under the manifest's 3 s probe timeout.
      const answers: number[] = [];
      for (let i = 0; i < PROBES; i++) {
        for (const path of ['/health/live', '/health/ready', '/metrics']) answers.push(await probe(management + path));
        await sleep(100);
      }
      expect(answers).toEqual(Array(PROBES * 3).fill(200));
      expect(flood.filter((s) => !s.destroyed).length).toBe(FLOOD_CONNECTIONS);
    } finally {
      clearInterval(keepTrickling);
    }
  });

  it('should answer nothing else on the management port', async () => {
    expect(await probe(`${management}/payment-orders/x`)).toBe(404);
    expect(await probe(`${management}/health`)).toBe(404);
  });
});
