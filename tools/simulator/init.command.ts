import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULT_ENV_FILE, DEFAULT_PLATFORM_PORT, parseCommand, positiveInteger, print, UsageError } from './cli';
import { createDevKeys, envFileText, keysExist, writeSecret } from './dev-keys';

export const INIT_USAGE = 'init [--keys .simulator] [--env-local .env.local] [--platform-port 3100] [--force]';

/** Writes a new key set and the `.env.local` that configures the service with it; refuses to overwrite either. */
export function init(args: string[]): number {
  const { values } = parseCommand(args, {
    'env-local': { type: 'string', default: DEFAULT_ENV_FILE },
    'platform-port': { type: 'string', default: String(DEFAULT_PLATFORM_PORT) },
    force: { type: 'boolean', default: false },
  });
  const platformPort = positiveInteger(values['platform-port'], 'platform-port')!;
  const envFile = resolve(values['env-local']);
  if (!values.force && (keysExist(values.keys) || existsSync(envFile))) {
    throw new UsageError(`${values.keys} or ${envFile} exists already; pass --force to replace both`);
  }
  const keys = createDevKeys(values.keys, platformPort);
  writeSecret(envFile, envFileText(keys));
  print(`key set written to ${keys.dir}:`);
  print(
    `  WeChat Pay  mchid ${keys.wechatpay.mchid}, platform key ${keys.wechatpay.publicKeyId}, APIv3 key, merchant key`,
  );
  print(`  Alipay      app ${keys.alipay.appId}, Alipay key pair, app key pair`);
  print(`  tokens      INTERNAL_API_TOKEN, admins ${keys.admins.map((admin) => admin.id).join(' and ')}`);
  print(`service configuration written to ${envFile}`);
  print();
  print('next:');
  print(`  npm run simulate -- platform            # the fake platform APIs on 127.0.0.1:${platformPort}`);
  print('  npm run build && npm run start:local    # the service with both channels enabled');
  return 0;
}
