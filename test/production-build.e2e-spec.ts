import { ChildProcess, execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseEnv, promisify } from 'node:util';
import { createPool, Pool } from 'mysql2/promise';
import { freePort } from './support/simulator-suite';
import { runSimulator } from './support/simulator-process';
import { count, uniqueId } from './support/test-app';
import { ADMIN_URL, assertTestDatabase, TEST_DATABASE_PREFIX, withAdminConnection } from './support/test-database';

const ROOT = join(__dirname, '..');
const DOCKERFILE = join(ROOT, 'docker/Dockerfile');
const BUILD_SCRIPT = 'docker/build-production.sh';
const BUILD_TIMEOUT_MS = 12 * 60_000;
const READY_TIMEOUT_MS = 90_000;
const run = promisify(execFile);

/** The build stage's `COPY <source…> <destination>` lines: what the image's build gets of the tree. */
function buildStageCopies(): Array<{ sources: string[]; destination: string }> {
  const buildStage = readFileSync(DOCKERFILE, 'utf8').split(/^FROM .* AS runtime$/m)[0];
  return [...buildStage.matchAll(/^COPY (?!--from)(.+)$/gm)].map((match) => {
    const words = match[1].trim().split(/\s+/);
    return { sources: words.slice(0, -1), destination: words[words.length - 1] };
  });
}

/** A build context as Docker would see it: only what the Dockerfile's build stage copies, where it copies it. */
function copyBuildContext(into: string): void {
  for (const { sources, destination } of buildStageCopies()) {
    for (const source of sources) {
      const intoFolder = destination.endsWith('/') || sources.length > 1;
      const target = intoFolder ? join(into, destination, source.split('/').pop()!) : join(into, destination);
      mkdirSync(dirname(target), { recursive: true });
      cpSync(join(ROOT, source), target, { recursive: true });
    }
  }
}

/** The environment a user's deployment gives the service: its own configuration and nothing of this test run's. */
function userEnvironment(config: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/root', NODE_ENV: 'production', ...config };
}

interface StartedBuild {
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

function startBuild(folder: string, env: Record<string, string>): StartedBuild {
  const child = spawn(process.execPath, ['dist/src/main.js'], { cwd: folder, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return {
    child,
    output: () => output,
    async stop() {
      child.kill('SIGTERM');
      const killed = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(killed);
    },
  };
}

async function untilReady(url: string, build: StartedBuild): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (build.child.exitCode !== null) throw new Error(`the production build exited:\n${build.output()}`);
    const status = await fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(5000) }).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`the production build was not ready within ${READY_TIMEOUT_MS} ms:\n${build.output()}`);
}

function databaseUrlFor(scheme: 'mysql' | 'mariadb', database: string): string {
  return `${ADMIN_URL.replace(/\/$/, '').replace(/^\w+:/, `${scheme}:`)}/${database}`;
}

/**
 * What a user deploys: the tree the Dockerfile copies, built by the image's own script (npm ci,
 * build, prune --omit=dev), started as the image starts it, against a fresh database, with the
 * settings a user writes. It must become ready, apply a signed payment once across repeats, answer
 * an admin read, and serve the console and the metrics.
 */
describe('the production build (docker/build-production.sh on what the Dockerfile copies)', () => {
  const folder = mkdtempSync(join(tmpdir(), 'pcs-production-build-'));
  const keys = mkdtempSync(join(tmpdir(), 'pcs-production-keys-'));
  let settings: Record<string, string>;
  let tokens: Record<string, string>;

  beforeAll(async () => {
    expect(readFileSync(DOCKERFILE, 'utf8')).toMatch(new RegExp(`^RUN .*sh ${BUILD_SCRIPT}$`, 'm'));
    copyBuildContext(folder);
    await run('sh', [BUILD_SCRIPT], { cwd: folder, timeout: BUILD_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 });

    const envFile = join(keys, '.env.local');
    const init = await runSimulator(['init', '--keys', keys, '--env-local', envFile, '--port', '3000']);
    expect(init.code).toBe(0);
    settings = parseEnv(readFileSync(envFile, 'utf8')) as Record<string, string>;
    const printed = await runSimulator(['tokens', '--shell', '--keys', keys]);
    tokens = parseEnv(printed.stdout) as Record<string, string>;
  }, BUILD_TIMEOUT_MS + 120_000);

  afterAll(() => {
    rmSync(folder, { recursive: true, force: true });
    rmSync(keys, { recursive: true, force: true });
  });

  it('should hold no development dependency after the prune', () => {
    expect(existsSync(join(folder, 'dist/src/main.js'))).toBe(true);
    expect(existsSync(join(folder, 'dist/console/index.html'))).toBe(true);
    for (const development of ['jest', '@nestjs/cli', 'eslint', 'vite', 'playwright-core'])
      expect([development, existsSync(join(folder, 'node_modules', development))]).toEqual([development, false]);
  });

  it('should hold nothing the running service never loads: no compiler, no ts-node, no type declarations', () => {
    // typescript and ts-node are optional peers of @nestjs/swagger and typeorm, which npm's prune keeps.
    for (const unused of ['typescript', 'ts-node', '@cspotcode/source-map-support', '@types', '@microsoft/tsdoc'])
      expect([unused, existsSync(join(folder, 'node_modules', unused))]).toEqual([unused, false]);
  });

  describe.each(['mysql', 'mariadb'] as const)('started with DATABASE_URL=%s://…', (scheme) => {
    const database = assertTestDatabase(uniqueId(`${TEST_DATABASE_PREFIX}prod_`).toLowerCase());
    let build: StartedBuild;
    let url: string;
    let managementUrl: string;
    let pool: Pool;

    beforeAll(async () => {
      await withAdminConnection((conn) => conn.query(`CREATE DATABASE \`${database}\``));
      pool = createPool({ uri: `${ADMIN_URL.replace(/\/$/, '')}/${database}`, connectionLimit: 2 });
      const [port, metricsPort] = [await freePort(), await freePort()];
      url = `http://127.0.0.1:${port}`;
      managementUrl = `http://127.0.0.1:${metricsPort}`;
      build = startBuild(
        folder,
        userEnvironment({
          ...settings,
          DATABASE_URL: databaseUrlFor(scheme, database),
          PORT: String(port),
          METRICS_PORT: String(metricsPort),
          RECONCILE_AT: 'off',
        }),
      );
      await untilReady(managementUrl, build);
    }, READY_TIMEOUT_MS + 30_000);

    afterAll(async () => {
      await build?.stop();
      await pool?.end();
      await withAdminConnection((conn) => conn.query(`DROP DATABASE IF EXISTS \`${database}\``));
    });

    it('should apply a signed payment delivered four times at once exactly once', async () => {
      const orderNo = uniqueId('PROD');
      const simulate = (...args: string[]) => runSimulator([...args, '--keys', keys, '--target', url]);
      const order = await simulate('order', orderNo, '--amount', '150000');
      expect([order.code, order.stdout + order.stderr]).toEqual([0, expect.any(String)]);
      const paid = await simulate('pay', orderNo, '--channel', 'wechatpay', '--times', '4', '--concurrent');
      expect([paid.code, paid.stdout + paid.stderr]).toEqual([0, expect.any(String)]);
      expect(paid.stdout).toMatch(/order \S+ is PAID/);
      expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE order_no = ?', [orderNo])).toBe(1);
      expect(
        await count(pool, "SELECT COUNT(*) FROM order_status_change WHERE order_no = ? AND to_status = 'PAID'", [
          orderNo,
        ]),
      ).toBe(1);
    });

    it('should answer an admin read with 200', async () => {
      const answer = await fetch(`${url}/admin/anomalies`, {
        headers: { authorization: `Bearer ${tokens.ALICE_TOKEN}` },
        signal: AbortSignal.timeout(10_000),
      });
      expect([answer.status, (await answer.text()).slice(0, 300)]).toEqual([200, expect.stringContaining('items')]);
    });

    it('should serve the console', async () => {
      const answer = await fetch(`${url}/console/`, { signal: AbortSignal.timeout(10_000) });
      expect(answer.status).toBe(200);
      expect(await answer.text()).toMatch(/<html/i);
    });

    it('should serve the metrics with the gauges read from the database', async () => {
      const answer = await fetch(`${managementUrl}/metrics`, { signal: AbortSignal.timeout(10_000) });
      expect(answer.status).toBe(200);
      expect(await answer.text()).toMatch(/^operations_gauges_up 1$/m);
    });
  });
});
