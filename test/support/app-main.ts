import { createApp } from '../../src/start/app.factory';
import { MetricsServer } from '../../src/platform/metrics/metrics-server';

/** The app as a child process of a test (test/support/app-process.ts), configured by its environment. */
async function main(): Promise<void> {
  const app = await createApp();
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  process.stdout.write(`listening ${port} management ${app.get(MetricsServer).port}\n`);
}

main().catch((error: Error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
