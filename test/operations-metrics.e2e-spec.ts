import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { AppProcess, startAppProcess } from './support/app-process';
import { eventually } from './support/eventually';
import { yuan } from '../tools/simulator/platform-signers';
import { TcpProxy } from './support/tcp-proxy';
import { parse } from 'yaml';
import {
  createTestPlatforms,
  RunningApp,
  startApp,
  TestClient,
  testDatabasePool,
  TestPlatforms,
  uniqueId,
} from './support/test-app';

/**
 * The gauges operators alert on are read from the database, so every replica reports the same
 * figures: one replica in this process, one in a child process, both compared with the tables.
 * The child also shows the log lines of payments and anomalies.
 */

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

type Samples = Map<string, number>;

/** `name{labels} value` lines of the Prometheus text format, keyed by `name{labels}`. */
async function scrape(baseUrl: string): Promise<Samples> {
  const response = await fetch(`${baseUrl}/metrics`);
  expect(response.status).toBe(200);
  const samples: Samples = new Map();
  for (const line of (await response.text()).split('\n')) {
    const match = /^([a-z_]+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (match) samples.set(match[1], Number(match[2]));
  }
  return samples;
}

const PROMQL_WORDS = new Set([
  'by',
  'on',
  'and',
  'or',
  'unless',
  'without',
  'ignoring',
  'group_left',
  'group_right',
  'offset',
  'bool',
]);

/** The metric names a PromQL expression reads: identifiers that are not functions, keywords, labels or durations. */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"[^"]*"/g, '')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|on|without|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  return [...bare.matchAll(/\b[a-zA-Z_:][a-zA-Z0-9_:]*\b(?!\s*\()/g)]
    .map((m) => m[0])
    .filter((word) => !PROMQL_WORDS.has(word));
}

/** The names /metrics serves, histograms with their series. */
async function servedNames(baseUrl: string): Promise<Set<string>> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
  }
  return names;
}

interface DatabaseFigures {
  gauges: Record<string, number>;
  outboxOldestCreatedAt: Date | null;
  refundOldestOpenCreatedAt: Date | null;
}

/** What the gauges must say, counted by the test itself. */
async function databaseFigures(pool: Pool): Promise<DatabaseFigures> {
  // One row of a count (n) or of an oldest row's time (oldest).
  const one = async (sql: string) =>
    (await pool.query<Array<RowDataPacket & { n: string; oldest: Date | null }>>(sql))[0][0];
  const many = async (sql: string) => (await pool.query<RowDataPacket[]>(sql))[0];
  const gauges: Record<string, number> = {};
  const outbox = await one(
    'SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM outbox_event WHERE published_at IS NULL AND dead_lettered_at IS NULL',
  );
  gauges['outbox_pending_events'] = Number(outbox.n);
  gauges['event_dead_letters{stage="outbox"}'] = Number(
    (await one('SELECT COUNT(*) AS n FROM outbox_event WHERE dead_lettered_at IS NOT NULL')).n,
  );
  gauges['event_dead_letters{stage="handler"}'] = Number(
    (await one('SELECT COUNT(*) AS n FROM handler_retry WHERE dead_lettered_at IS NOT NULL')).n,
  );
  for (const type of ['DUPLICATE_PAYMENT', 'PAID_AFTER_CLOSE', 'AMOUNT_MISMATCH'])
    gauges[`payment_anomalies_open{type="${type}"}`] = 0;
  for (const r of await many("SELECT type, COUNT(*) AS n FROM payment_anomaly WHERE status = 'OPEN' GROUP BY type")) {
    gauges[`payment_anomalies_open{type="${r.type}"}`] = Number(r.n);
  }
  for (const status of [
    'AWAITING_APPROVAL',
    'PENDING',
    'PROCESSING',
    'SUCCEEDED',
    'CLOSED',
    'ABNORMAL',
    'RESOLVED_OFFLINE',
    'REJECTED',
  ])
    gauges[`refunds_by_status{status="${status}"}`] = 0;
  for (const r of await many('SELECT status, COUNT(*) AS n FROM refund GROUP BY status')) {
    gauges[`refunds_by_status{status="${r.status}"}`] = Number(r.n);
  }
  const refunds = await one("SELECT MIN(created_at) AS oldest FROM refund WHERE status IN ('PENDING', 'PROCESSING')");
  return { gauges, outboxOldestCreatedAt: outbox.oldest, refundOldestOpenCreatedAt: refunds.oldest };
}

function ageSeconds(since: Date | null): number {
  return since === null ? 0 : (Date.now() - new Date(since).getTime()) / 1000;
}

/** Scrapes while the tables stand still (other suites' leftovers may still move), so that the comparison is exact. */
async function scrapeSteady(pool: Pool, urls: string[]): Promise<{ figures: DatabaseFigures; scrapes: Samples[] }> {
  let result: { figures: DatabaseFigures; scrapes: Samples[] } | undefined;
  await eventually('a scrape while the tables stand still', async () => {
    const before = await databaseFigures(pool);
    const scrapes = await Promise.all(urls.map(scrape));
    const after = await databaseFigures(pool);
    if (JSON.stringify(before.gauges) !== JSON.stringify(after.gauges)) return false;
    result = { figures: after, scrapes };
    return true;
  });
  return result!;
}

describe('gauges and logs operators alert on', () => {
  let platforms: TestPlatforms;
  let pool: Pool;
  let replicaA: RunningApp;
  let replicaB: AppProcess;
  let client: TestClient;
  let logLines: Array<Record<string, unknown>>;
  let rawLog: string;

  beforeAll(async () => {
    platforms = await createTestPlatforms();
    pool = testDatabasePool();
    // The broker and the refund API are unreachable: events stay in the outbox, refunds stay PENDING.
    const env = {
      ...platforms.env,
      RABBITMQ_URL: `amqp://guest:guest@127.0.0.1:${await closedPort()}`,
      WECHATPAY_API_BASE_URL: `http://127.0.0.1:${await closedPort()}`,
      ALIPAY_GATEWAY_URL: `http://127.0.0.1:${await closedPort()}/gateway.do`,
      REFUND_RETRY_BASE_DELAY_MS: '600000',
      REFUND_RETRY_MAX_DELAY_MS: '600000',
    };
    replicaA = await startApp(env);
    replicaB = await startAppProcess({ ...env, LOG_LEVEL: 'info' });
    logLines = [];
    rawLog = '';
    let partial = '';
    replicaB.child.stdout!.on('data', (chunk: Buffer) => {
      rawLog += chunk.toString();
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop()!;
      for (const line of lines) if (line.startsWith('{')) logLines.push(JSON.parse(line) as Record<string, unknown>);
    });
    client = new TestClient(replicaA.url, platforms);
  });

  afterAll(async () => {
    replicaB?.child.kill('SIGKILL');
    await replicaB?.exited;
    await replicaA?.close();
    await pool?.end();
  });

  it('should report the same figures as the tables on every replica, and follow them', async () => {
    const before = await scrapeSteady(pool, [replicaA.managementUrl, replicaB.managementUrl]);

    // A payment (its event waits in the outbox), an amount mismatch, a duplicate payment refunded in an emergency.
    const paid = uniqueId('MO');
    expect((await client.registerOrder({ orderNo: paid, amount: 500 })).status).toBe(201);
    const paying = client.wechatpayPayment({ outTradeNo: paid, transactionId: uniqueId('T'), total: 500 });
    expect((await client.postWechatpay(paying)).status).toBe(204);
    const mismatched = uniqueId('MO');
    expect((await client.registerOrder({ orderNo: mismatched, amount: 500 })).status).toBe(201);
    const short = client.alipayPayment({ outTradeNo: mismatched, tradeNo: uniqueId('T'), totalAmount: yuan(499) });
    expect((await client.postAlipay(short)).status).toBe(200);
    const duplicateBy = uniqueId('D');
    const twice = client.wechatpayPayment({ outTradeNo: paid, transactionId: duplicateBy, total: 500 });
    expect((await client.postWechatpay(twice)).status).toBe(204);
    const refund = await client.admin('POST', '/admin/refunds/emergency', platforms.admins.admin, {
      orderNo: paid,
      transactionId: duplicateBy,
      reason: 'money taken twice',
    });
    expect(refund.status).toBe(202); // accepted: the refund API is unreachable, the refund stays PENDING

    const after = await scrapeSteady(pool, [replicaA.managementUrl, replicaB.managementUrl]);
    for (const scrape of after.scrapes) {
      expect(scrape.get('operations_gauges_up')).toBe(1);
      for (const [sample, value] of Object.entries(after.figures.gauges))
        expect([sample, scrape.get(sample)]).toEqual([sample, value]);
      // Ages are whole seconds, taken a moment apart from the test's own clock.
      expect(
        Math.abs(scrape.get('outbox_oldest_pending_age_seconds')! - ageSeconds(after.figures.outboxOldestCreatedAt)),
      ).toBeLessThanOrEqual(2);
      expect(
        Math.abs(scrape.get('refund_oldest_open_age_seconds')! - ageSeconds(after.figures.refundOldestOpenCreatedAt)),
      ).toBeLessThanOrEqual(2);
    }
    const grew = (sample: string) => after.figures.gauges[sample] - before.figures.gauges[sample];
    expect(grew('outbox_pending_events')).toBeGreaterThanOrEqual(1);
    expect(grew('payment_anomalies_open{type="AMOUNT_MISMATCH"}')).toBe(1);
    expect(grew('refunds_by_status{status="PENDING"}')).toBe(1);
    expect(after.figures.refundOldestOpenCreatedAt).not.toBeNull();
  });

  it('should log every payment at info and every anomaly at warn, without bodies or secrets', async () => {
    const B = new TestClient(`http://127.0.0.1:${new URL(replicaB.url).port}`, platforms);
    const orderNo = uniqueId('LO');
    const transactionId = uniqueId('T');
    expect((await B.registerOrder({ orderNo, amount: 700 })).status).toBe(201);
    const payment = B.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 700 });
    expect((await B.postWechatpay(payment)).status).toBe(204);
    expect((await B.postWechatpay(payment)).status).toBe(204);
    const mismatchOrder = uniqueId('LO');
    const mismatchTransaction = uniqueId('T');
    expect((await B.registerOrder({ orderNo: mismatchOrder, amount: 700 })).status).toBe(201);
    const form = B.alipayPayment({ outTradeNo: mismatchOrder, tradeNo: mismatchTransaction, totalAmount: yuan(701) });
    expect((await B.postAlipay(form)).status).toBe(200);

    const linesOf = (order: string) => logLines.filter((l) => l.orderNo === order);
    await eventually(
      'the log lines of both orders',
      () => linesOf(orderNo).length === 2 && linesOf(mismatchOrder).length === 1,
      60_000,
    );
    expect(linesOf(orderNo).map((l) => [l.level, l.channel, l.transactionId, l.outcome])).toEqual([
      [30, 'WECHATPAY', transactionId, 'PAID'],
      [30, 'WECHATPAY', transactionId, 'DUPLICATE'],
    ]);
    expect(linesOf(mismatchOrder).map((l) => [l.level, l.channel, l.transactionId, l.outcome])).toEqual([
      [40, 'ALIPAY', mismatchTransaction, 'AMOUNT_MISMATCH'],
    ]);
    const secrets = [
      platforms.wechatpay.apiV3Key,
      platforms.internalApiToken,
      platforms.admins.admin,
      payment.headers['wechatpay-signature'],
      (JSON.parse(payment.body) as { resource: { ciphertext: string } }).resource.ciphertext,
      new URLSearchParams(form).get('sign')!,
    ];
    for (const secret of secrets) expect(rawLog.includes(secret)).toBe(false);
  });

  // What the notify use case counts (a notification for an unknown order as REFUSED) is in
  // test/medium/notification-metrics.medium-spec.ts; here, what a scrape of /metrics serves.
  it('should serve every metric the alert rules and the Grafana dashboard read', async () => {
    const root = join(__dirname, '..');
    const rules = parse(readFileSync(join(root, 'docker/prometheus/alerts.yml'), 'utf8')) as {
      groups: Array<{ rules: Array<{ expr: string }> }>;
    };
    const dashboard = JSON.parse(readFileSync(join(root, 'docker/grafana/payment-callbacks.json'), 'utf8')) as {
      panels: Array<{ targets?: Array<{ expr: string }> }>;
    };
    const expressions = [
      ...rules.groups.flatMap((g) => g.rules.map((r) => r.expr)),
      ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
    ];
    const read = new Set(expressions.flatMap(metricNames));
    expect(read).toContain('outbox_oldest_pending_age_seconds');
    expect(read).toContain('payment_notification_duration_seconds_bucket');
    const served = await servedNames(replicaB.managementUrl);
    expect([...read].filter((name) => !served.has(name))).toEqual([]);
  });

  it('should answer /metrics without the gauges while the database is away, and resume', async () => {
    const databaseUrl = new URL(process.env.DATABASE_URL!);
    const proxy = new TcpProxy(databaseUrl.hostname, Number(databaseUrl.port || 3306));
    await proxy.start();
    databaseUrl.hostname = '127.0.0.1';
    databaseUrl.port = String(proxy.port);
    // A second's age makes the refund the first test left PENDING (its API unreachable) an unsettled one.
    const replica = await startAppProcess({
      ...platforms.env,
      DATABASE_URL: databaseUrl.toString(),
      REFUND_PROCESSING_MAX_AGE_SECONDS: '1',
    });
    const unsettled = (samples: Samples) => [...samples.keys()].filter((key) => key.startsWith('refunds_unsettled{'));
    try {
      const there = await scrape(replica.managementUrl);
      expect(there.get('operations_gauges_up')).toBe(1);
      expect(unsettled(there).length).toBeGreaterThan(0);

      await proxy.stop();
      const away = await scrape(replica.managementUrl);
      expect(away.get('operations_gauges_up')).toBe(0);
      expect(away.get('outbox_pending_events')).toBeNaN();
      expect(away.has('payment_anomalies_open{type="AMOUNT_MISMATCH"}')).toBe(false);
      // Not the last figures, which could be stale: no figure at all.
      expect(unsettled(away)).toEqual([]);
      expect(away.has('process_cpu_user_seconds_total')).toBe(true);

      await proxy.start();
      await eventually(
        'the gauges back',
        async () => (await scrape(replica.managementUrl)).get('operations_gauges_up') === 1,
        30_000,
      );
    } finally {
      replica.child.kill('SIGKILL');
      await replica.exited;
      await proxy.stop();
    }
  });
});
