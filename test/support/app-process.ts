import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { assertTestDatabase } from './test-database';
import { ANY_MANAGEMENT_PORT, CONFIG_VARIABLES, NO_PLATFORM_API } from './test-app';

export interface AppProcess {
  url: string;
  /** Its management port: /metrics and the readiness report. */
  managementUrl: string;
  child: ChildProcess;
  /** Resolves with the exit signal or code. */
  exited: Promise<string>;
  /** Everything it wrote to stdout so far (its log lines, with LOG_LEVEL set). */
  output(): string;
}

/** Starts the real app in a separate Node process (so that a test can SIGKILL it) against the run's database. */
export async function startAppProcess(env: Record<string, string>): Promise<AppProcess> {
  assertTestDatabase(process.env.TEST_DATABASE_NAME);
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', join(__dirname, 'app-main.ts')], {
    cwd: join(__dirname, '../..'),
    env: {
      ...process.env,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
      ...NO_PLATFORM_API,
      ...ANY_MANAGEMENT_PORT,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<string>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? String(code))));
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  let stdout = '';
  const [port, managementPort] = await new Promise<[number, number]>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const match = /listening (\d+) management (\d+)/.exec(stdout);
      if (match) resolve([Number(match[1]), Number(match[2])]);
    });
    void exited.then((how) => reject(new Error(`app process exited (${how}) before listening:\n${stderr}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    managementUrl: `http://127.0.0.1:${managementPort}`,
    child,
    exited,
    output: () => stdout,
  };
}

/**
 * Starts the app in a child process with exactly `env` as its configuration (none inherited from this process)
 * and expects it to refuse to start: resolves with what it wrote to stderr and how it exited. A start-up that
 * succeeds, or takes longer than `timeoutMs`, is killed and rejected.
 */
export async function failedStartup(
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<{ stderr: string; exit: string }> {
  assertTestDatabase(process.env.TEST_DATABASE_NAME);
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !CONFIG_VARIABLES.test(name)));
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', join(__dirname, 'app-main.ts')], {
    cwd: join(__dirname, '../..'),
    env: {
      ...inherited,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
      ...NO_PLATFORM_API,
      ...ANY_MANAGEMENT_PORT,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exit = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the app neither failed nor started within ${timeoutMs} ms`));
    }, timeoutMs);
    child.stdout.on('data', () => {
      if (!/listening \d+/.test(stdout)) return;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error('the app started, but it should have refused to'));
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(signal ?? String(code));
    });
  });
  return { stderr, exit };
}

/** One JSON log line of the service. */
export type LogLine = Record<string, unknown> & { msg?: string; level?: number; context?: string };

export interface MainProcess {
  child: ChildProcess;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** The output's JSON lines (anything else is not a log line and is left out). */
  logLines(): LogLine[];
  /** Resolves with the exit code, or the signal that ended it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Runs src/main.ts itself (configuration check, .env, start line, signal handling) as production
 * does, with exactly `env` on top of a clean environment: nothing of the test run leaks in.
 */
export function spawnMain(env: Record<string, string>, cwd = join(__dirname, '../..')): MainProcess {
  const child = spawn(
    process.execPath,
    ['-r', require.resolve('ts-node/register/transpile-only'), join(__dirname, '../../src/main.ts')],
    {
      cwd,
      // A free management port unless `env` names one: suites run side by side, and 9464 is one port.
      env: {
        PATH: process.env.PATH ?? '',
        TS_NODE_PROJECT: join(__dirname, '../../tsconfig.json'),
        ...ANY_MANAGEMENT_PORT,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    output: () => output,
    logLines: () =>
      output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as LogLine),
    exited,
  };
}

/** Waits for the start line (context Lifecycle) and returns it; fails with the output if the process ends first. */
export async function startLineOf(main: MainProcess, timeoutMs = 60000): Promise<LogLine> {
  const deadline = Date.now() + timeoutMs;
  let ended = false;
  void main.exited.then(() => (ended = true));
  for (;;) {
    const line = main.logLines().find((l) => l.context === 'Lifecycle' && String(l.msg).startsWith('started'));
    if (line) return line;
    if (ended || Date.now() > deadline) throw new Error(`no start line; output:\n${main.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
