import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { Pool } from 'mysql2/promise';
import { CliRun, PlatformProcess, runSimulator, startPlatformProcess } from './simulator-process';
import { RunningApp, startApp, testDatabasePool } from './test-app';

/** What a simulator suite runs against: the key set `simulate init` made, the service it configured, the platform server. */
export interface SimulatorSuite {
  dir: string;
  keysDir: string;
  /** What `simulate init` printed. */
  init: CliRun;
  /** The `.env.local` it wrote: the service's whole configuration. */
  env: Record<string, string>;
  app: RunningApp;
  platform: PlatformProcess;
  pool: Pool;
  /** `npm run simulate -- <args>` with this key set, against this app. */
  simulate(...args: string[]): Promise<CliRun>;
  stop(): Promise<void>;
}

/**
 * `simulate init [initArgs]` in a fresh folder, as a person runs it; then the service configured by
 * nothing but the `.env.local` it wrote, and `simulate platform` on the key set.
 */
export async function startSimulatorSuite(folderPrefix: string, initArgs: string[] = []): Promise<SimulatorSuite> {
  const dir = mkdtempSync(join(tmpdir(), folderPrefix));
  const keysDir = join(dir, 'keys');
  const envFile = join(dir, '.env.local');
  const platformPort = String(await freePort());
  const init = await runSimulator([
    'init',
    ...initArgs,
    '--keys',
    keysDir,
    '--env-local',
    envFile,
    '--platform-port',
    platformPort,
  ]);
  if (init.code !== 0) throw new Error(`simulate init failed:\n${init.stdout}\n${init.stderr}`);
  const env = parseEnv(readFileSync(envFile, 'utf8')) as Record<string, string>;
  // All of it but the database, which is the test run's, not the development machine's `payments`,
  // and the management port, a free one (suites run side by side).
  const { DATABASE_URL: _developmentDatabase, METRICS_PORT: _developmentMetricsPort, ...service } = env;
  const app = await startApp({ ...service, REFUND_POLL_INTERVAL_MS: '200' });
  const platform = await startPlatformProcess(['--keys', keysDir]);
  const pool = testDatabasePool();
  return {
    dir,
    keysDir,
    init,
    env,
    app,
    platform,
    pool,
    simulate: (...args) => runSimulator([...args, '--keys', keysDir, '--target', app.url]),
    async stop() {
      await platform.stop();
      await app.close();
      await pool.end();
    },
  };
}

/** A port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
