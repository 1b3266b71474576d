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
import { addAlipayCertMode, createDevKeys, envFileText, keysExist, writeSecret } from './dev-keys';
import { DEV_SUB_MCHIDS, Dialect, DIALECTS } from './wechatpay/partner-dialect';

export const INIT_USAGE =
  'init [--keys .simulator] [--env-local .env.local] [--port 3000] [--platform-port 3100] [--dialect v3|partner] [--alipay-cert] [--force]';

/** Refunds of 1,000.00 CNY or more wait for a second admin: the reason `init` creates two. */
export const APPROVAL_THRESHOLD = 100_000;

/**
 * Writes a new key set and the `.env.local` that configures the service with it; refuses to overwrite either.
 * --alipay-cert: Alipay in certificate mode (a test root, the Alipay and app certificates) instead of its public key.
 */
export async function init(args: string[]): Promise<number> {
  const { values } = parseCommand(args, {
    port: { type: 'string', default: String(DEFAULT_SERVICE_PORT) },
    'platform-port': { type: 'string', default: String(DEFAULT_PLATFORM_PORT) },
    force: { type: 'boolean', default: false },
    dialect: { type: 'string', default: 'v3' },
    'alipay-cert': { type: 'boolean', default: false },
  });
  if (!DIALECTS.includes(values.dialect as Dialect)) throw new UsageError(`--dialect must be ${DIALECTS.join(' or ')}`);
  const port = positiveInteger(values.port, 'port')!;
  const platformPort = positiveInteger(values['platform-port'], 'platform-port')!;
  if (port > 65535 || platformPort > 65535) throw new UsageError('--port and --platform-port must be at most 65535');
  const envFile = resolve(values['env-local']);
  if (!values.force && (keysExist(values.keys) || existsSync(envFile))) {
    throw new UsageError(`${values.keys} or ${envFile} exists already; pass --force to replace both`);
  }
  const created = createDevKeys(values.keys, platformPort, {
    subMchids: values.dialect === 'partner' ? DEV_SUB_MCHIDS : undefined,
  });
  const keys = values['alipay-cert'] ? await addAlipayCertMode(created) : created;
  writeSecret(
    envFile,
    envFileText(keys, {
      PORT: String(port),
      // Where the platform notifies the payments the service creates (POST /payment-orders with method).
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      DATABASE_URL: DEFAULT_DATABASE_URL,
      REFUND_APPROVAL_THRESHOLD: String(APPROVAL_THRESHOLD),
    }),
  );
  print(`key set written to ${keys.dir}:`);
  print(
    `  WeChat Pay  mchid ${keys.wechatpay.mchid}, platform key ${keys.wechatpay.publicKeyId}, APIv3 key, merchant key`,
  );
  if (keys.wechatpay.subMchids) {
    print(`              a service provider (partner mode) for sub-merchants ${keys.wechatpay.subMchids.join(', ')}`);
  }
  print(`  Alipay      app ${keys.alipay.appId}, Alipay key pair, app key pair`);
  if (keys.alipay.certMode) {
    const { alipayCertSn, appCertSn, rootCertSn } = keys.alipay.certMode;
    print(`              certificate mode: alipay_cert_sn ${alipayCertSn}, app_cert_sn ${appCertSn},`);
    print(`              alipay_root_cert_sn ${rootCertSn} (a test root made now)`);
  }
  print(`  tokens      INTERNAL_API_TOKEN, admins ${keys.admins.map((admin) => admin.id).join(' and ')}`);
  print(
    `service configuration written to ${envFile}: PORT ${port}, DATABASE_URL ${DEFAULT_DATABASE_URL}, refunds from`,
  );
  print(`  ${formatMinor(APPROVAL_THRESHOLD)} CNY wait for a second admin (REFUND_APPROVAL_THRESHOLD)`);
  print();
  print('next:');
  print(
    `  npm run simulate -- platform            # the fake platform APIs on 127.0.0.1:${platformPort} (the key set's)`,
  );
  print(`  npm run build && npm run start:local    # the service with both channels enabled, on port ${port}`);
  print('  npm run simulate -- tokens              # the order API and admin tokens');
  return 0;
}
