import 'reflect-metadata';
import { execSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createConnection } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { loadDatabaseConfig } from '../src/platform/config/database.config';
import { buildDataSourceOptions } from '../src/platform/database/data-source-options';
import { createTestPlatforms } from '../test/support/test-app';
import {
  arrivalOrder,
  Delivery,
  Payment,
  planPayments,
  seededRandom,
  SignedDeliveries,
  signDeliveries,
} from './delivery-mix';
import { exactlyOnceViolations } from './exactly-once';
import { drive, LoadResult, percentile } from './http-load';
import { prefill, retentionProgress } from './prefill';
import { insertOrdersDirectly, rawSqlRun } from './raw-sql';
import { databaseCpu, DatabaseCpu, msPer, netOfIdle } from './database-cpu';
import { ADMIN_URL, runAsAdmin } from './admin-database';
import {
  assertPortFree,
  BenchUsageError,
  parsePort,
  parseReplicas,
  replicaPorts,
  SERVICE_NODE_OPTIONS,
  startReplicas,
} from './service-process';

const { values: args } = parseArgs({
  options: {
    orders: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '64' },
    prefill: { type: 'string', default: '0' },
    /** Age of the prefilled history: beyond the retention horizons, the service prunes it during the run. */
    'prefill-age-days': { type: 'string', default: '0' },
    'duplicates-only': { type: 'boolean', default: false },
    /** Only each payment's first delivery: the population that needs a transaction. */
    'first-deliveries-only': { type: 'boolean', default: false },
    rabbitmq: { type: 'string' },
    /** `off`: run without the example after-payment handlers, to measure the callback path alone. */
    handlers: { type: 'string', default: 'on' },
    /** The first replica's port (the next ones count up from it); a port already in use is refused (two benchmarks at once would measure each other). */
    port: { type: 'string', default: '3901' },
    /** Service processes on the one database; deliveries go to them in turn. */
    replicas: { type: 'string', default: '1' },
    /** REDIS_URL for every replica. */
    redis: { type: 'string' },
    /** Writes a V8 CPU profile of the service (open it in Chrome DevTools) to bench/results/profiles. */
    profile: { type: 'boolean', default: false },
  },
});
const ORDERS = Number(args.orders);
const CONCURRENCY = Number(args.concurrency);
const PREFILL = Number(args.prefill);
const PREFILL_AGE_DAYS = Number(args['prefill-age-days']);
const say = (line: string) => process.stdout.write(`${line}\n`);

/**
 * Without a population flag, every population in turn, each on databases of its own: the mix as
 * the platforms send it, then each payment's first delivery alone, then repeats alone.
 */
async function main(): Promise<void> {
  const modes = modesOf(args['duplicates-only'], args['first-deliveries-only']);
  const ports = replicaPorts(parsePort(args.port), parseReplicas(args.replicas));
  for (const port of ports) await assertPortFree(port);
  const dbCpu = await databaseCpu(ADMIN_URL);
  const summary: string[] = [];
  for (const mode of modes) summary.push(await benchOne(mode, ports, dbCpu));
  if (modes.length > 1) {
    say('');
    say('  populations, same sitting:');
    for (const line of summary) say(`    ${line}`);
  }
}

/** One population on fresh databases; answers its one-line summary. */
async function benchOne(mode: Mode, ports: number[], dbCpu: DatabaseCpu): Promise<string> {
  const runId = Date.now().toString(36);
  const { scheme, version } = await serverKind();
  const databases = { service: `pcs_bench_${runId}`, raw: `pcs_bench_${runId}_raw` };
  const url = (name: string) => `${ADMIN_URL.replace(/^\w+:/, scheme)}/${name}`;
  await runAsAdmin(Object.values(databases).map((db) => `CREATE DATABASE ${db}`));
  try {
    for (const db of Object.values(databases)) await migrate(url(db));
    if (PREFILL > 0) {
      say(`prefilling ${PREFILL} earlier payments, ${PREFILL_AGE_DAYS} days old, in both databases…`);
      for (const db of Object.values(databases)) await prefill(url(db), PREFILL, PREFILL_AGE_DAYS);
    }
    const result = await runBenchmark(mode, runId, url(databases.service), url(databases.raw), ports, dbCpu);
    if (result.violations.length > 0) process.exitCode = 1;
    return report({ ...result, mode, database: version });
  } finally {
    await runAsAdmin(Object.values(databases).map((db) => `DROP DATABASE IF EXISTS ${db}`));
  }
}

type Mode = 'mixed' | 'duplicates-only' | 'first-deliveries-only';

async function runBenchmark(
  mode: Mode,
  runId: string,
  serviceDb: string,
  rawDb: string,
  ports: number[],
  dbCpu: DatabaseCpu,
) {
  const platforms = await createTestPlatforms();
  const signers = {
    wechatpay: {
      mchid: platforms.wechatpay.mchid,
      appid: platforms.wechatpay.appid,
      signer: platforms.wechatpay.publicKeySigner,
    },
    alipay: platforms.alipay,
  };
  const payments = planPayments(ORDERS, runId);
  const warmup = planPayments(Math.max(500, Math.round(ORDERS / 20)), `${runId}w`);
  const signed: SignedDeliveries = new Map();
  // Each set is signed right before it is sent: a WeChat Pay timestamp expires after 5 minutes,
  // which registering and warming up several replicas on a busy machine can take.
  const sign = (list: Payment[], copies: (p: Payment) => number) => {
    say(`signing ${list.length} notifications (RSA-2048, AES-256-GCM)…`);
    for (const p of list) signed.set(p, signDeliveries(p, signers, copies(p)));
  };
  // The warm-up is always the mix (each payment's own deliveries); the measured payments get the copies their mode sends.
  const measuredCopies = (p: Payment) =>
    ({ mixed: p.deliveries, 'duplicates-only': p.deliveries + 3, 'first-deliveries-only': 1 })[mode];
  const onePerPayment = (list: Payment[]) => list.map((payment) => ({ payment, ...signed.get(payment)![0] }));
  sign(warmup, (p) => p.deliveries);

  const service = await startReplicas(
    {
      ...platforms.env,
      DATABASE_URL: serviceDb,
      EXAMPLE_HANDLERS: args.handlers === 'off' ? 'false' : 'true',
      // RETENTION_RAW_DAYS=36500 RETENTION_EVENTS_DAYS=36500 npm run bench … runs without pruning, for comparison.
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('RETENTION_'))),
      ...(args.rabbitmq ? { RABBITMQ_URL: args.rabbitmq } : {}),
      ...(args.redis ? { REDIS_URL: args.redis } : {}),
    },
    ports,
    (replica) => join(__dirname, 'results', `service-${runId}-${replica}.log`),
    args.profile ? join(__dirname, 'results', 'profiles') : undefined,
  );
  try {
    say(`registering ${payments.length + warmup.length} orders through the API…`);
    await registerOrders(service.urls[0], platforms.internalApiToken, [...warmup, ...payments]);
    say(`warming up ${service.urls.length} replica(s)…`);
    await drive(service.urls, arrivalOrder(warmup, signed, seededRandom(7)), CONCURRENCY);
    sign(payments, measuredCopies);
    const random = seededRandom(42);
    const measured = {
      mixed: () => arrivalOrder(payments, signed, random),
      'duplicates-only': () => repeatsOnly(payments, signed, random),
      'first-deliveries-only': () => onePerPayment(payments),
    }[mode]();
    if (mode === 'duplicates-only') await drive(service.urls, onePerPayment(payments), CONCURRENCY);
    const dbIdleMsPerSecond = await databaseIdleMsPerSecond(dbCpu);
    say(
      `measuring ${measured.length} deliveries at concurrency ${CONCURRENCY} over ${service.urls.length} replica(s)…`,
    );
    const cpuBefore = service.cpuSeconds();
    const dbBefore = dbCpu();
    const load = await drive(service.urls, measured, CONCURRENCY);
    const dbCpuMsPerDelivery = msPer(dbBefore, dbCpu(), measured.length);
    const cpuSeconds = service.cpuSeconds() - cpuBefore;
    const peakRssMiB = service.peakRssMiB();
    const violations = await exactlyOnceViolations(serviceDb, payments, measured.length, acknowledged(load));
    const retention = await retentionProgress(serviceDb);
    await service.stop();

    say('measuring the raw SQL limit…');
    await insertOrdersDirectly(rawDb, payments);
    if (mode === 'duplicates-only') await rawSqlRun(rawDb, onePerPayment(payments), CONCURRENCY);
    const rawDbBefore = dbCpu();
    const raw = await rawSqlRun(rawDb, measured, CONCURRENCY);
    const rawDbCpuMsPerDelivery = msPer(rawDbBefore, dbCpu(), measured.length);
    return {
      load,
      measured: measured.length,
      cpuSeconds,
      peakRssMiB,
      dbCpuMsPerDelivery,
      dbIdleMsPerSecond,
      rawSeconds: raw.seconds,
      rawDbCpuMsPerDelivery,
      violations,
      retention,
    };
  } finally {
    await service.stop();
  }
}

function modesOf(duplicatesOnly: boolean, firstDeliveriesOnly: boolean): Mode[] {
  if (duplicatesOnly && firstDeliveriesOnly) {
    throw new BenchUsageError('--duplicates-only and --first-deliveries-only measure different deliveries: choose one');
  }
  if (duplicatesOnly) return ['duplicates-only'];
  if (firstDeliveriesOnly) return ['first-deliveries-only'];
  return ['mixed', 'first-deliveries-only', 'duplicates-only'];
}

/** Three more deliveries of every payment, measured after each was delivered once (untimed). */
function repeatsOnly(payments: Payment[], signed: SignedDeliveries, random: () => number): Delivery[] {
  const repeats = payments.map((p) => ({ ...p, deliveries: 3 }));
  // The copies after the first delivery, which was sent (untimed) before.
  return arrivalOrder(repeats, new Map(repeats.map((p, i) => [p, signed.get(payments[i])!.slice(-3)])), random);
}

/**
 * The database's CPU over two quiet seconds before the measured window (the replicas idle but for
 * their polling workers): what other users of a shared server add to the figure per delivery.
 */
async function databaseIdleMsPerSecond(dbCpu: DatabaseCpu): Promise<number | undefined> {
  const before = dbCpu();
  await new Promise((resolve) => setTimeout(resolve, 2000));
  return msPer(before, dbCpu(), 2);
}

function acknowledged(load: LoadResult): number {
  return load.latenciesMs.length - load.nonSuccessAcks;
}

async function registerOrders(url: string, token: string, payments: Payment[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < payments.length) {
        const p = payments[next++];
        const response = await fetch(`${url}/payment-orders`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ orderNo: p.orderNo, userId: 'bench', amount: p.amount, currency: 'CNY' }),
        });
        if (response.status !== 201)
          throw new Error(`registering ${p.orderNo}: ${response.status} ${await response.text()}`);
      }
    }),
  );
}

function perDelivery(ms: number | null): string {
  return ms === null ? 'n/a' : `${ms.toFixed(2)} ms`;
}

function report(r: Awaited<ReturnType<typeof runBenchmark>> & { mode: Mode; database: string }): string {
  const sorted = [...r.load.latenciesMs].sort((a, b) => a - b);
  const deliveriesPerSecond = r.measured / r.load.seconds;
  const rawPerSecond = r.measured / r.rawSeconds;
  const figures = {
    mode: r.mode === 'mixed' ? 'mixed (3.2 deliveries per payment)' : r.mode,
    orders: ORDERS,
    deliveries: r.measured,
    concurrency: CONCURRENCY,
    prefilledPayments: PREFILL,
    prefillAgeDays: PREFILL_AGE_DAYS,
    broker: args.rabbitmq ? 'rabbitmq' : 'embedded',
    replicas: r.peakRssMiB.length,
    redis: args.redis !== undefined,
    exampleHandlers: args.handlers,
    serviceNodeOptions: process.env.SERVICE_NODE_OPTIONS ?? SERVICE_NODE_OPTIONS,
    deliveriesPerSecond: Math.round(deliveriesPerSecond),
    paymentsPerSecond: Math.round(ORDERS / r.load.seconds),
    latencyMs: {
      p50: percentile(sorted, 50),
      p95: percentile(sorted, 95),
      p99: percentile(sorted, 99),
      max: sorted[sorted.length - 1],
    },
    errors: r.load.errors,
    nonSuccessAcks: r.load.nonSuccessAcks,
    serviceCpuSeconds: r.cpuSeconds,
    serviceCpuMsPerDelivery: (r.cpuSeconds * 1000) / r.measured,
    servicePeakRssMiB: Math.round(Math.max(...r.peakRssMiB)),
    perReplicaPeakRssMiB: r.peakRssMiB.map(Math.round),
    dbCpuMsPerDelivery: r.dbCpuMsPerDelivery ?? null,
    dbCpuMsPerSecondIdle: r.dbIdleMsPerSecond ?? null,
    dbCpuMsPerDeliveryNetOfIdle:
      netOfIdle(r.dbCpuMsPerDelivery, r.dbIdleMsPerSecond, r.load.seconds, r.measured) ?? null,
    rawDbCpuMsPerDelivery: r.rawDbCpuMsPerDelivery ?? null,
    rawDeliveriesPerSecond: Math.round(rawPerSecond),
    ratioServiceToRaw: Number((deliveriesPerSecond / rawPerSecond).toFixed(2)),
    exactlyOnce: r.violations.length === 0 ? 'OK' : r.violations,
    retention: r.retention,
  };
  const machine = {
    cpus: cpus().length,
    cpu: cpus()[0]?.model,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    database: r.database,
  };
  const commit = git('rev-parse --short HEAD');
  const dir = join(__dirname, 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${commit}.json`);
  writeFileSync(file, JSON.stringify({ commit, date: new Date().toISOString(), machine, ...figures }, null, 2));

  const ms = (v: number) => `${v.toFixed(1)} ms`;
  say('');
  say(
    `  mode                  ${figures.mode}, ${figures.broker}, example handlers ${args.handlers}, prefill ${PREFILL}`,
  );
  say(`  replicas              ${figures.replicas}${figures.redis ? ', Redis' : ''}`);
  say(
    `  deliveries/s          ${figures.deliveriesPerSecond}   (${r.measured} deliveries in ${r.load.seconds.toFixed(1)} s)`,
  );
  say(`  payments/s            ${figures.paymentsPerSecond}`);
  say(
    `  latency p50/p95/p99   ${ms(figures.latencyMs.p50)} / ${ms(figures.latencyMs.p95)} / ${ms(figures.latencyMs.p99)}   max ${ms(figures.latencyMs.max)}`,
  );
  say(`  errors / non-success  ${figures.errors} / ${figures.nonSuccessAcks}`);
  say(
    `  service CPU           ${r.cpuSeconds.toFixed(1)} s (${figures.serviceCpuMsPerDelivery.toFixed(2)} ms per delivery, all replicas), peak RSS ${figures.perReplicaPeakRssMiB.join(' / ')} MiB (NODE_OPTIONS ${figures.serviceNodeOptions || 'none'})`,
  );
  say(
    `  database CPU per delivery  ${perDelivery(figures.dbCpuMsPerDelivery)}, ${perDelivery(figures.dbCpuMsPerDeliveryNetOfIdle)} net of its idle ${figures.dbCpuMsPerSecondIdle ?? 'n/a'} ms/s (raw SQL run ${perDelivery(figures.rawDbCpuMsPerDelivery)})`,
  );
  say(`  raw SQL limit         ${figures.rawDeliveriesPerSecond} deliveries/s`);
  say(`  ratio service/raw = ${figures.ratioServiceToRaw}`);
  if (PREFILL_AGE_DAYS > 0) {
    const { rawPruned, rawPrunedPerSecond, eventsLeft, processedLeft } = r.retention;
    say(
      `  retention             ${rawPruned} raw payloads pruned (${rawPrunedPerSecond}/s), prefilled events left ${eventsLeft}, old processed records left ${processedLeft}`,
    );
  }
  say(r.violations.length === 0 ? 'exactly-once: OK' : `exactly-once: VIOLATED\n  ${r.violations.join('\n  ')}`);
  say(`results: ${file}`);
  return `${r.mode.padEnd(22)} ${String(figures.deliveriesPerSecond).padStart(6)}/s  p99 ${figures.latencyMs.p99.toFixed(1)} ms  CPU ${(figures.serviceCpuMsPerDelivery * 1000).toFixed(0)} µs/delivery  ratio to raw SQL ${figures.ratioServiceToRaw}  exactly-once ${r.violations.length === 0 ? 'OK' : 'VIOLATED'}`;
}

async function migrate(url: string): Promise<void> {
  const dataSource = await new DataSource(
    buildDataSourceOptions({ ...loadDatabaseConfig({}), url, poolSize: 2 }),
  ).initialize();
  await dataSource.runMigrations({ transaction: 'each' });
  await dataSource.destroy();
}

async function serverKind(): Promise<{ scheme: string; version: string }> {
  const conn = await createConnection({ uri: ADMIN_URL });
  const [rows] = await conn.query('SELECT VERSION() AS v');
  await conn.end();
  const version = String((rows as Array<{ v: string }>)[0].v);
  return { scheme: /mariadb/i.test(version) ? 'mariadb:' : 'mysql:', version };
}

function git(command: string): string {
  try {
    return execSync(`git ${command}`, { cwd: __dirname, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    return 'unknown';
  }
}

main().catch((error: Error) => {
  if (error instanceof BenchUsageError) {
    process.stderr.write(`bench: ${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`bench failed: ${error.stack}\n`);
  process.exit(1);
});
