import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { AddressInfo, createServer as createTcpServer, Socket } from 'node:net';
import { parseArgs } from 'node:util';
import { createPool } from 'mysql2/promise';
import { Webhook } from 'standardwebhooks';
import { createApp } from '../src/start/app.factory';
import { ADMIN_URL, runAsAdmin } from './admin-database';

/**
 * npm run bench:webhooks: messages/s from the outbox to a fast receiver (which verifies every
 * signature with standardwebhooks), alone, then beside a dead endpoint (accepts connections, never
 * answers) subscribed to the same events. The events are written straight to the outbox, as the
 * settlement's transaction writes them, so that the figure is the webhooks' own. Prints figures;
 * asserts nothing about time.
 */
const { values: args } = parseArgs({
  options: {
    messages: { type: 'string', default: '2000' },
    'timeout-ms': { type: 'string', default: '5000' },
    concurrency: { type: 'string', default: '8' },
  },
});
const MESSAGES = Number(args.messages);
const say = (line: string) => process.stdout.write(`${line}\n`);
const ADMIN_TOKEN = `bench-${randomUUID()}`;

interface Receiver {
  url: string;
  accepted: Set<string>;
  close(): Promise<void>;
}

async function fastReceiver(secret: () => string): Promise<Receiver> {
  const accepted = new Set<string>();
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        new Webhook(secret()).verify(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>);
        accepted.add(String(req.headers['webhook-id']));
        res.writeHead(204).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    accepted,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Takes every connection and never answers: each attempt costs the sender its whole timeout. */
async function deadReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

async function main(): Promise<void> {
  const database = `pcs_bench_wh_${Date.now().toString(36)}`;
  await runAsAdmin([`CREATE DATABASE ${database}`]);
  const databaseUrl = `${ADMIN_URL}/${database}`;
  Object.assign(process.env, {
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'silent',
    RECONCILE_AT: 'off',
    ADMIN_TOKENS: `bench:${ADMIN_TOKEN}:admin`,
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_TIMEOUT_MS: args['timeout-ms'],
    WEBHOOK_ENDPOINT_CONCURRENCY: args.concurrency,
    WEBHOOK_POLL_INTERVAL_MS: '50',
  });
  const app = await createApp();
  await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  const pool = createPool({ uri: databaseUrl, connectionLimit: 4 });
  let secret = '';
  const fast = await fastReceiver(() => secret);
  const dead = await deadReceiver();
  try {
    secret = (await createEndpoint(base, fast.url)).secret;
    say(`${MESSAGES} messages per run, WEBHOOK_ENDPOINT_CONCURRENCY=${args.concurrency}, one replica, receiver in-process`);
    await run(pool, fast, 'warm-up (not counted)');
    const alone = await run(pool, fast, 'alone');
    await createEndpoint(base, dead.url);
    const besideDead = await run(pool, fast, `beside a dead endpoint (WEBHOOK_TIMEOUT_MS=${args['timeout-ms']})`);
    say(`one dead endpoint costs the fast one ${(100 * (1 - besideDead / alone)).toFixed(0)} % of its rate`);
  } finally {
    await app.close();
    await pool.end();
    await fast.close();
    await dead.close();
    await runAsAdmin([`DROP DATABASE IF EXISTS ${database}`]);
  }
}

async function createEndpoint(base: string, url: string): Promise<{ id: string; secret: string }> {
  const answer = await fetch(`${base}/admin/webhook-endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  });
  if (answer.status !== 201) throw new Error(`creating the endpoint: ${answer.status} ${await answer.text()}`);
  return (await answer.json()) as { id: string; secret: string };
}

/** Writes MESSAGES events to the outbox and times the fast receiver's acceptance of all of them. */
async function run(pool: ReturnType<typeof createPool>, fast: Receiver, label: string): Promise<number> {
  const before = fast.accepted.size;
  const started = Date.now();
  for (let i = 0; i < MESSAGES; i += 500) {
    const rows = Array.from({ length: Math.min(500, MESSAGES - i) }, (_, j) => {
      const event = {
        eventId: randomUUID(),
        type: 'payment.succeeded',
        occurredAt: new Date().toISOString(),
        orderNo: `BENCH${i + j}`,
        transactionId: `T${randomUUID().replace(/-/g, '')}`,
        channel: 'WECHATPAY',
        amount: 100 + i + j,
        currency: 'CNY',
      };
      return [event.eventId, event.type, event.orderNo, JSON.stringify(event), new Date(), new Date()];
    });
    // Published already: the broker's relay is not what this measures.
    await pool.query(
      'INSERT INTO outbox_event (event_id, type, order_no, payload, created_at, published_at) VALUES ?',
      [rows],
    );
  }
  const deadline = Date.now() + 600_000;
  while (fast.accepted.size - before < MESSAGES) {
    if (Date.now() > deadline) throw new Error(`only ${fast.accepted.size - before} of ${MESSAGES} accepted`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const seconds = (Date.now() - started) / 1000;
  const rate = MESSAGES / seconds;
  say(`${label}: ${MESSAGES} messages in ${seconds.toFixed(2)} s, ${rate.toFixed(0)} messages/s`);
  return rate;
}

main().catch((error: Error) => {
  process.stderr.write(`${error.stack ?? error.message}\n`);
  process.exitCode = 1;
});
