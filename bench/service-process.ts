import { ChildProcess, spawn } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
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

/** As docker/Dockerfile runs the service. */
export const SERVICE_NODE_OPTIONS = '--max-old-space-size=192';

/** The production build (`node dist/src/main.js`), configured only by its environment, as a user runs it; its log goes to `logFile`. */
export async function startService(
  env: Record<string, string>,
  port: number,
  logFile: string,
  profileDir?: string,
): Promise<ServiceProcess> {
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
      ...env,
      PORT: String(port),
    },
    stdio: ['ignore', openSync(logFile, 'w'), 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/health/ready`)).ok) break;
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
