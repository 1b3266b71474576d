import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '../..');
const CLI_TIMEOUT_MS = 120_000;

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `tools/simulator/<entry>.ts` with `args` in a child process, as `npm run simulate` / `npm run drill` do. */
export function runSimulator(args: string[], entry: 'simulate' | 'drill' = 'simulate'): Promise<CliRun> {
  const child = spawnEntry(entry, args);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${entry} ${args.join(' ')} ran longer than ${CLI_TIMEOUT_MS} ms:\n${stdout}\n${stderr}`));
    }, CLI_TIMEOUT_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface PlatformProcess {
  child: ChildProcess;
  output(): string;
  /** SIGTERM, then resolves with the exit code once it stopped. */
  stop(): Promise<number | null>;
}

/** `simulate platform` as a child process; resolves once it listens. */
export async function startPlatformProcess(args: string[]): Promise<PlatformProcess> {
  const child = spawnEntry('simulate', ['platform', ...args]);
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  child.stderr!.on('data', (chunk) => (output += chunk));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the platform did not listen within ${CLI_TIMEOUT_MS} ms`)),
      CLI_TIMEOUT_MS,
    );
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      if (!output.includes('platform listening on')) return;
      clearTimeout(timer);
      resolve();
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the platform exited (${code}) before listening:\n${output}`));
    });
  });
  return {
    child,
    output: () => output,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

function spawnEntry(entry: string, args: string[]): ChildProcess {
  return spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', join(ROOT, 'tools/simulator', `${entry}.ts`), ...args],
    {
      cwd: ROOT,
      env: { ...process.env, TS_NODE_PROJECT: join(ROOT, 'tsconfig.json') },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
}
