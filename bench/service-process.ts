import { ChildProcess, spawn } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  cpuSeconds(): number;
  peakRssMiB(): number;
  stop(): Promise<void>;
}

const ROOT = join(__dirname, '..');
const CLOCK_TICKS = 100; // USER_HZ on Linux

/** A usage mistake: bench.ts prints the message alone, without a stack, and exits 2. */
export class BenchUsageError extends Error {}

/** A port as --port gives it: an integer from 1 to 65535. */
export function parsePort(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port < 1 || port > 65535) {
    throw new BenchUsageError(`--port must be an integer from 1 to 65535, not "${text}"`);
  }
  return port;
}

/**
 * Refuses a port something already listens on: the readiness poll would otherwise find that other
 * process (another engineer's benchmark, a dev server) ready and measure it instead of this build.
 */
export async function assertPortFree(port: number): Promise<void> {
  const server = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '0.0.0.0', resolve);
    });
  } catch (error) {
    const inUse = (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
    throw new BenchUsageError(
      inUse
        ? `port ${port} is already in use (another benchmark or service?): choose a free one with --port <n>`
        : `cannot listen on port ${port}: ${(error as Error).message}`,
    );
  }
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** As docker/Dockerfile runs the service. */
export const SERVICE_NODE_OPTIONS = '--max-old-space-size=192';

/** The production build (`node dist/src/main.js`), configured only by its environment, as a user runs it; its log goes to `logFile`. */
export async function startService(
  env: Record<string, string>,
  port: number,
  logFile: string,
  profileDir?: string,
): Promise<ServiceProcess> {
  // Checked again right before the start: the port may have been taken since bench.ts began.
  await assertPortFree(port);
  const profiling = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const child = spawn(process.execPath, [...profiling, join(ROOT, 'dist/src/main.js')], {
    cwd: ROOT,
    // The Docker image's heap bound by default; SERVICE_NODE_OPTIONS tries other runtime flags on the service alone.
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      // No channel API call may leave the machine: a loopback port nobody listens on.
      WECHATPAY_API_BASE_URL: 'http://127.0.0.1:9',
      ALIPAY_GATEWAY_URL: 'http://127.0.0.1:9/gateway.do',
      NODE_OPTIONS: process.env.SERVICE_NODE_OPTIONS ?? SERVICE_NODE_OPTIONS,
      // Nobody routes traffic to it: stop without the load balancer's drain.
      SHUTDOWN_DRAIN_MS: '0',
      ...env,
      PORT: String(port),
    },
    stdio: ['ignore', openSync(logFile, 'w'), 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}`);
    try {
      // Ready, and still ours: a child that lost the port to someone else has exited by now or soon.
      if ((await fetch(`${url}/health/ready`)).ok && child.exitCode === null) break;
    } catch {
      /* not listening yet */
    }
    if (i > 300) throw new Error('the service did not become ready in 30 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const proc = (file: string) => readFileSync(`/proc/${child.pid}/${file}`, 'utf8');
  return {
    url,
    child,
    cpuSeconds: () => {
      const fields = proc('stat').split(') ')[1].split(' ');
      return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS; // utime + stime
    },
    peakRssMiB: () => Number(/VmHWM:\s+(\d+) kB/.exec(proc('status'))![1]) / 1024,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}
