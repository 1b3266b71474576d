import { ChildProcess, spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { peakRssMiB, processCpuSeconds } from './proc-stat';

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  cpuSeconds(): number;
  peakRssMiB(): number;
  stop(): Promise<void>;
}

const ROOT = join(__dirname, '..');

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
export const SERVICE_NODE_OPTIONS = '--max-old-space-size=256';

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
      // Several services on one machine: each its own free management port (/metrics), not 9464.
      METRICS_PORT: '0',
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
  return {
    url,
    child,
    cpuSeconds: () => processCpuSeconds(child.pid!),
    peakRssMiB: () => peakRssMiB(child.pid!),
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

/** N production builds of the service on one database, as several replicas behind a load balancer. */
export interface Replicas {
  urls: string[];
  /** CPU seconds of all replicas together. */
  cpuSeconds(): number;
  /** Each replica's peak RSS, in the order of `urls`. */
  peakRssMiB(): number[];
  /** Stops the replicas still running. */
  stop(): Promise<void>;
}

/** --replicas as given: an integer from 1 to 32. */
export function parseReplicas(text: string): number {
  const count = Number(text);
  if (!/^\d+$/.test(text) || count < 1 || count > 32) {
    throw new BenchUsageError(`--replicas must be an integer from 1 to 32, not "${text}"`);
  }
  return count;
}

/** The replicas' ports: `base`, `base + 1`, … */
export function replicaPorts(base: number, count: number): number[] {
  const ports = Array.from({ length: count }, (_, i) => base + i);
  if (ports[ports.length - 1] > 65535) {
    throw new BenchUsageError(`--port ${base} with --replicas ${count} goes beyond port 65535`);
  }
  return ports;
}

/** Starts one service per port, each logging to `logFile(i)`; if one fails to start, the others are stopped. */
export async function startReplicas(
  env: Record<string, string>,
  ports: number[],
  logFile: (replica: number) => string,
  profileDir?: string,
): Promise<Replicas> {
  const started = await Promise.allSettled(ports.map((port, i) => startService(env, port, logFile(i), profileDir)));
  const services = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const stop = () => Promise.all(services.filter(isRunning).map((service) => service.stop())).then(() => undefined);
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }
  return {
    urls: services.map((service) => service.url),
    cpuSeconds: () => services.reduce((sum, service) => sum + service.cpuSeconds(), 0),
    peakRssMiB: () => services.map((service) => service.peakRssMiB()),
    stop,
  };
}

function isRunning(service: ServiceProcess): boolean {
  return service.child.exitCode === null && service.child.signalCode === null;
}
