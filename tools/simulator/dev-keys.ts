/**
 * The local development key set `simulate init` writes: both sides of every key pair (the platforms' signing keys
 * stay with the simulator, their public halves and the merchant's private keys go to the service), the tokens,
 * and a description the other commands load. Never for production: the keys are made on this machine for it.
 */
import { createPrivateKey, createPublicKey, KeyObject, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DevAlipayCertMode, writeDevAlipayCertMode } from './alipay/alipay-cert-keys';
import { UsageError } from './cli';
import { FakePlatformOptions } from './fake-platform';
import { generateRsaKeyPair, randomAlphanumeric } from './platform-signers';
import { createUnionpayDevKeys, unionpayServiceEnvironment } from './unionpay/unionpay-dev-keys';

const DESCRIPTION_FILE = 'keys.json';

export interface DevKeys {
  dir: string;
  platformPort: number;
  internalApiToken: string;
  /** Two admins, so that one can approve the other's refund (four eyes). */
  admins: Array<{ id: string; token: string }>;
  wechatpay: {
    mchid: string;
    appid: string;
    apiV3Key: string;
    publicKeyId: string;
    merchantSerialNo: string;
    /** A service provider's key set (`init --dialect partner`): mchid and appid are then the sp_ ones. */
    subMchids?: string[];
    /** Absent in key sets made before APIv2 notifications existed. */
    apiV2Key?: string;
  };
  /** certMode: Alipay's certificate mode (`init --alipay-cert`) instead of the bare public key. */
  alipay: { appId: string; sellerId: string; certMode?: DevAlipayCertMode };
}

/** The PEM files of a key set, by role. */
const PEM = {
  wechatpayPlatformKey: 'wechatpay-platform-key.pem',
  wechatpayPlatformPub: 'wechatpay-platform-pub.pem',
  wechatpayMerchantKey: 'wechatpay-merchant-key.pem',
  wechatpayMerchantPub: 'wechatpay-merchant-pub.pem',
  alipayKey: 'alipay-key.pem',
  alipayPub: 'alipay-pub.pem',
  alipayAppKey: 'alipay-app-key.pem',
  alipayAppPub: 'alipay-app-pub.pem',
} as const;

export function keysExist(dir: string): boolean {
  return existsSync(join(dir, DESCRIPTION_FILE));
}

/** Generates a new key set into `dir` (created if missing); files readable by the owner only. */
export function createDevKeys(dir: string, platformPort: number, options: { subMchids?: string[] } = {}): DevKeys {
  const absolute = resolve(dir);
  mkdirSync(absolute, { recursive: true, mode: 0o700 });
  const pairs = {
    wechatpayPlatform: generateRsaKeyPair(),
    wechatpayMerchant: generateRsaKeyPair(),
    alipay: generateRsaKeyPair(),
    alipayApp: generateRsaKeyPair(),
  };
  const pems: Record<keyof typeof PEM, string> = {
    wechatpayPlatformKey: pairs.wechatpayPlatform.privateKeyPem,
    wechatpayPlatformPub: pairs.wechatpayPlatform.publicKeyPem,
    wechatpayMerchantKey: pairs.wechatpayMerchant.privateKeyPem,
    wechatpayMerchantPub: pairs.wechatpayMerchant.publicKeyPem,
    alipayKey: pairs.alipay.privateKeyPem,
    alipayPub: pairs.alipay.publicKeyPem,
    alipayAppKey: pairs.alipayApp.privateKeyPem,
    alipayAppPub: pairs.alipayApp.publicKeyPem,
  };
  for (const role of Object.keys(PEM) as Array<keyof typeof PEM>) writeSecret(join(absolute, PEM[role]), pems[role]);
  createUnionpayDevKeys(absolute);
  const keys: DevKeys = {
    dir: absolute,
    platformPort,
    internalApiToken: randomAlphanumeric(40),
    admins: [
      { id: 'alice', token: randomAlphanumeric(40) },
      { id: 'bob', token: randomAlphanumeric(40) },
    ],
    wechatpay: {
      mchid: '1900000109',
      appid: 'wxd930ea5d5a258f4f',
      apiV3Key: randomAlphanumeric(32),
      publicKeyId: `PUB_KEY_ID_0119000001092025${randomDigits(12)}`,
      merchantSerialNo: randomBytes(20).toString('hex').toUpperCase(),
      ...(options.subMchids?.length ? { subMchids: options.subMchids } : {}),
      apiV2Key: randomAlphanumeric(32),
    },
    alipay: { appId: '2021000199600001', sellerId: '2088101117955611' },
  };
  const { dir: _dir, ...description } = keys;
  writeSecret(join(absolute, DESCRIPTION_FILE), `${JSON.stringify(description, null, 2)}\n`);
  return keys;
}

/** Switches the key set's Alipay app to certificate mode: certificates around its existing keys, beside them. */
export async function addAlipayCertMode(keys: DevKeys): Promise<DevKeys> {
  const privateKey = createPrivateKey(readFileSync(join(keys.dir, PEM.alipayKey)));
  const alipayKey = {
    privateKey,
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString(),
  };
  const appPublicKeyPem = readFileSync(join(keys.dir, PEM.alipayAppPub), 'utf8');
  const certMode = await writeDevAlipayCertMode(keys.dir, keys.alipay, alipayKey, appPublicKeyPem);
  const updated = { ...keys, alipay: { ...keys.alipay, certMode } };
  const { dir: _dir, ...description } = updated;
  writeSecret(join(keys.dir, DESCRIPTION_FILE), `${JSON.stringify(description, null, 2)}\n`);
  return updated;
}

export function loadDevKeys(dir: string): DevKeys {
  const absolute = resolve(dir);
  if (!keysExist(absolute)) {
    throw new UsageError(`no key set in ${absolute}: run \`npm run simulate -- init\` first (or pass --keys DIR)`);
  }
  const description = JSON.parse(readFileSync(join(absolute, DESCRIPTION_FILE), 'utf8')) as Omit<DevKeys, 'dir'>;
  return { ...description, dir: absolute };
}

/** The simulator's private keys: what the platforms sign notifications and API answers with. */
export function platformKeys(keys: DevKeys): { wechatpay: KeyObject; alipay: KeyObject } {
  return {
    wechatpay: createPrivateKey(readFileSync(join(keys.dir, PEM.wechatpayPlatformKey))),
    alipay: createPrivateKey(readFileSync(join(keys.dir, PEM.alipayKey))),
  };
}

/** The service's configuration for this key set, the platforms' APIs on the simulator's platform server. */
export function serviceEnvironment(keys: DevKeys, servicePort?: number): Record<string, string> {
  const platformUrl = `http://127.0.0.1:${keys.platformPort}`;
  return {
    INTERNAL_API_TOKEN: keys.internalApiToken,
    ADMIN_TOKENS: keys.admins.map((admin) => `${admin.id}:${admin.token}:admin`).join(','),
    WECHATPAY_MCHID: keys.wechatpay.mchid,
    WECHATPAY_APPIDS: keys.wechatpay.appid,
    WECHATPAY_APIV3_KEY: keys.wechatpay.apiV3Key,
    WECHATPAY_PUBLIC_KEY_ID: keys.wechatpay.publicKeyId,
    WECHATPAY_PUBLIC_KEY_PATH: join(keys.dir, PEM.wechatpayPlatformPub),
    WECHATPAY_MERCHANT_PRIVATE_KEY_PATH: join(keys.dir, PEM.wechatpayMerchantKey),
    WECHATPAY_MERCHANT_SERIAL_NO: keys.wechatpay.merchantSerialNo,
    ...(keys.wechatpay.apiV2Key ? { WECHATPAY_APIV2_KEY: keys.wechatpay.apiV2Key } : {}),
    WECHATPAY_API_BASE_URL: platformUrl,
    ...(keys.wechatpay.subMchids?.length ? { WECHATPAY_SUB_MCHIDS: keys.wechatpay.subMchids.join(',') } : {}),
    ALIPAY_APP_ID: keys.alipay.appId,
    ALIPAY_SELLER_ID: keys.alipay.sellerId,
    ...alipayKeyEnvironment(keys),
    ALIPAY_APP_PRIVATE_KEY_PATH: join(keys.dir, PEM.alipayAppKey),
    ALIPAY_GATEWAY_URL: `${platformUrl}/gateway.do`,
    ...unionpayServiceEnvironment(keys.dir, keys.platformPort, servicePort),
  };
}

/** The bare public key, or in certificate mode the three certificates. */
function alipayKeyEnvironment(keys: DevKeys): Record<string, string> {
  const certMode = keys.alipay.certMode;
  if (!certMode) return { ALIPAY_PUBLIC_KEY_PATH: join(keys.dir, PEM.alipayPub) };
  return {
    ALIPAY_PUBLIC_CERT_PATHS: join(keys.dir, certMode.files.publicCert),
    ALIPAY_ROOT_CERT_PATH: join(keys.dir, certMode.files.rootCert),
    ALIPAY_APP_CERT_PATH: join(keys.dir, certMode.files.appCert),
  };
}

/** `.env.local`: KEY="value" lines that both `node --env-file` and `set -a; . ./.env.local` read. */
export function envFileText(keys: DevKeys, service: Record<string, string> = {}): string {
  const servicePort = service.PORT === undefined ? undefined : Number(service.PORT);
  const lines = Object.entries({ ...service, ...serviceEnvironment(keys, servicePort) }).map(
    ([name, value]) => `${name}="${value}"`,
  );
  return [
    `# Written by \`npm run simulate -- init\` on ${new Date().toISOString()}: a local development key set from`,
    `# ${keys.dir}. Never for production. Start the service with it: npm run start:local`,
    ...lines,
    '',
  ].join('\n');
}

/** The platform server's view of the same accounts: it verifies the service's requests and signs its answers. */
export function fakePlatformAccounts(keys: DevKeys): Pick<FakePlatformOptions, 'wechatpay' | 'alipay'> {
  const privateKeys = platformKeys(keys);
  return {
    wechatpay: {
      mchid: keys.wechatpay.mchid,
      merchantSerialNo: keys.wechatpay.merchantSerialNo,
      merchantPublicKeyPem: readFileSync(join(keys.dir, PEM.wechatpayMerchantPub), 'utf8'),
      platformSigner: { privateKey: privateKeys.wechatpay, serial: keys.wechatpay.publicKeyId },
      subMchids: keys.wechatpay.subMchids,
    },
    alipay: {
      appId: keys.alipay.appId,
      appPublicKeyPem: readFileSync(join(keys.dir, PEM.alipayAppPub), 'utf8'),
      alipayPrivateKey: privateKeys.alipay,
      sellerId: keys.alipay.sellerId,
      certMode: keys.alipay.certMode && {
        appCertSn: keys.alipay.certMode.appCertSn,
        rootCertSn: keys.alipay.certMode.rootCertSn,
        alipayCertSn: keys.alipay.certMode.alipayCertSn,
      },
    },
  };
}

export function writeSecret(path: string, text: string): void {
  writeFileSync(path, text, { mode: 0o600 });
}

function randomDigits(length: number): string {
  return randomBytes(length).reduce((text, byte) => text + (byte % 10), '');
}
