import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  DEFAULT_PLATFORM_PORT,
  DEFAULT_SERVICE_PORT,
  formatMinor,
  parseCommand,
  positiveInteger,
  print,
  UsageError,
} from './cli';
import { DEFAULT_DATABASE_URL } from '../../src/platform/config/database.config';
import { DEFAULT_METRICS_PORT } from '../../src/platform/config/server.config';
import { createDevKeys, envFileText, keysExist, tokenEnvironment, writeSecret } from './dev-keys';
import {
  channelOptions,
  channelsEnvironment,
  channelUsage,
  checkChannelOptions,
  CHANNEL_SIMULATORS,
  commandParts,
  createChannelKeys,
} from './channels';

/** Each channel's options of `init` (WeChat Pay's --dialect, Alipay's --alipay-cert …). */
const CHANNEL_PARTS = commandParts((channel) => channel.keySet.init);

export const INIT_USAGE = `init [--keys .simulator] [--env-local .env.local] [--port 3000] [--metrics-port 9464] [--database payments] [--platform-port 3100]${channelUsage(CHANNEL_PARTS)} [--force]`;

/** The database and management port of a checkout whose service listens on `port`, unless given. */
export function checkoutDefaults(port: number): { database: string; metricsPort: number } {
  // 3000 → payments and 9464, the service's own defaults; another port → its own database and
  // management port, so that a second checkout collides on neither.
  if (port === DEFAULT_SERVICE_PORT) return { database: 'payments', metricsPort: DEFAULT_METRICS_PORT };
  return { database: `payments_${port}`, metricsPort: port + (DEFAULT_METRICS_PORT - DEFAULT_SERVICE_PORT) };
}

const DATABASE_NAME = /^[A-Za-z0-9_]{1,64}$/;

/** Refunds of 1,000.00 CNY or more wait for a second admin: the reason `init` creates two. */
export const APPROVAL_THRESHOLD = 100_000;

/**
 * Writes a new key set and the `.env.local` that configures the service with it; refuses to overwrite either.
 * The channels' own options say how their keys are made (WeChat Pay's --dialect partner: a service provider's;
 * Alipay's --alipay-cert: certificate mode).
 */
export async function init(args: string[]): Promise<number> {
  const { values } = parseCommand(args, {
    port: { type: 'string', default: String(DEFAULT_SERVICE_PORT) },
    'metrics-port': { type: 'string' },
    database: { type: 'string' },
    'platform-port': { type: 'string', default: String(DEFAULT_PLATFORM_PORT) },
    force: { type: 'boolean', default: false },
    ...channelOptions(CHANNEL_PARTS),
  });
  checkChannelOptions(CHANNEL_PARTS, values);
  const port = positiveInteger(values.port, 'port')!;
  const platformPort = positiveInteger(values['platform-port'], 'platform-port')!;
  if (port > 65535 || platformPort > 65535) throw new UsageError('--port and --platform-port must be at most 65535');
  const defaults = checkoutDefaults(port);
  const metricsPort = positiveInteger(values['metrics-port'], 'metrics-port') ?? defaults.metricsPort;
  if (metricsPort > 65535) {
    throw new UsageError(`--metrics-port must be at most 65535 (${metricsPort} follows from --port ${port}; give one)`);
  }
  if (new Set([port, metricsPort, platformPort]).size !== 3) {
    throw new UsageError('--port, --metrics-port and --platform-port must be three different ports');
  }
  const database = values.database ?? defaults.database;
  if (!DATABASE_NAME.test(database)) throw new UsageError('--database must be 1 to 64 letters, digits or _');
  const databaseUrl = new URL(DEFAULT_DATABASE_URL);
  databaseUrl.pathname = `/${database}`;
  const envFile = resolve(values['env-local']);
  if (!values.force && (keysExist(values.keys) || existsSync(envFile))) {
    throw new UsageError(`${values.keys} or ${envFile} exists already; pass --force to replace both`);
  }
  const keys = await createDevKeys(values.keys, platformPort, (dir) => createChannelKeys(dir, values));
  writeSecret(
    envFile,
    envFileText(keys, {
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
      // Where the platform notifies the payments the service creates (POST /payment-orders with method).
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      DATABASE_URL: databaseUrl.toString(),
      REFUND_APPROVAL_THRESHOLD: String(APPROVAL_THRESHOLD),
      // Development: webhook endpoints on this machine (http://127.0.0.1:…) are allowed.
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      ...tokenEnvironment(keys),
      ...channelsEnvironment(keys, port),
    }),
  );
  print(`key set written to ${keys.dir}:`);
  for (const channel of CHANNEL_SIMULATORS) channel.keySet.describe(keys).forEach((line) => print(line));
  print(`  tokens      INTERNAL_API_TOKEN, admins ${keys.admins.map((admin) => admin.id).join(' and ')}`);
  print(
    `service configuration written to ${envFile}: PORT ${port}, METRICS_PORT ${metricsPort}, DATABASE_URL ${databaseUrl.toString()},`,
  );
  print(
    `  webhooks to private addresses allowed (WEBHOOK_ALLOW_PRIVATE_URLS), refunds from ${formatMinor(APPROVAL_THRESHOLD)} CNY wait for a second admin (REFUND_APPROVAL_THRESHOLD)`,
  );
  print();
  print('next:');
  print(`  npm run build && npm run db:create:local  # the database ${database}, if it is not there yet`);
  print(
    `  npm run simulate -- platform            # the fake platform APIs on 127.0.0.1:${platformPort} (the key set's)`,
  );
  print(`  npm run start:local                      # the service with every channel enabled, on port ${port}`);
  print('  npm run simulate -- tokens              # the order API and admin tokens');
  return 0;
}
