import 'reflect-metadata';
import { createApp } from './app.factory';
import { loadServerConfig } from './config/server.config';
import { ConfigurationError } from './config/validate-env';

async function bootstrap(): Promise<void> {
  const { port } = loadServerConfig();
  const app = await createApp();
  await app.listen(port, '0.0.0.0');
}

bootstrap().catch((error: unknown) => {
  // A configuration mistake deserves one clear line, not a stack trace.
  const message = error instanceof ConfigurationError ? error.message : ((error as Error)?.stack ?? String(error));
  process.stderr.write(`payment-callback-service failed to start: ${message}\n`);
  process.exit(1);
});
