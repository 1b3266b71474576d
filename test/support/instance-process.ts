import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { assertTestDatabase } from './test-database';

export interface InstanceProcess {
  child: ChildProcess;
  /** Resolves with the exit signal or code. */
  exited: Promise<string>;
}

/**
 * Starts a medium instance (test/support/instance-main.ts) in a separate Node process on the
 * suite's database, configured by `env` (the whole of it, as startMedium's `() => env`); resolves once its module is
 * initialized and its background workers run.
 */
export async function startInstanceProcess(env: Record<string, string>): Promise<InstanceProcess> {
  assertTestDatabase(process.env.TEST_DATABASE_NAME);
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', join(__dirname, 'instance-main.ts')],
    {
      cwd: join(__dirname, '../..'),
      env: { ...process.env, MEDIUM_ENV: JSON.stringify(env) },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exited = new Promise<string>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? String(code))));
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  await new Promise<void>((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      if (stdout.includes('ready\n')) resolve();
    });
    void exited.then((how) => reject(new Error(`instance process exited (${how}) before it was ready:\n${stderr}`)));
  });
  return { child, exited };
}
