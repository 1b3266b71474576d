import { startMedium } from './medium';
import { notifyModules } from './medium-events';

/**
 * A medium instance (the order service, the notify use case, the outbox relay and the example
 * handlers, no HTTP) as a child process of a test (test/support/instance-process.ts), so that the
 * test can SIGKILL it; its configuration is the JSON map in MEDIUM_ENV.
 */
async function main(): Promise<void> {
  const env = JSON.parse(process.env.MEDIUM_ENV ?? '{}') as Record<string, string>;
  await startMedium(() => env, { imports: notifyModules(), fake: false });
  process.stdout.write('ready\n');
}

main().catch((error: Error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
