/**
 * Several merchant accounts per channel, as PAYMENT_ACCOUNTS_FILE describes them: each with its own real keys
 * written to files, the accounts file itself, and the fake platform's view of the same accounts.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeAlipayApp, FakePlatformOptions, FakeWechatpayMerchant } from '../../tools/simulator/fake-platform';
import {
  generateRsaKeyPair,
  randomAlphanumeric,
  RsaKeyPair,
  WechatpaySigner,
} from '../../tools/simulator/platform-signers';
import { TestPlatforms } from './test-app';

export interface WechatpayTestAccount {
  mchid: string;
  appids: string[];
  apiV3Key: string;
  /** Signs this account's notifications and API answers (platform public key mode). */
  signer: WechatpaySigner;
  publicKeyPath: string;
  /** Certificate mode too, for the account of createTestPlatforms. */
  platformCertPaths: string[];
  merchantSerialNo: string;
  merchantKey: Pick<RsaKeyPair, 'publicKeyPem'>;
  merchantPrivateKeyPath: string;
}

export interface AlipayTestAccount {
  appId: string;
  sellerId: string;
  /** Alipay's key for this app: signs its notifications and gateway answers. */
  alipayKey: Pick<RsaKeyPair, 'privateKey'>;
  alipayPublicKeyPath: string;
  appKey: Pick<RsaKeyPair, 'publicKeyPem'>;
  appPrivateKeyPath: string;
}

export interface TestAccounts {
  wechatpay: WechatpayTestAccount[];
  alipay: AlipayTestAccount[];
}

/** The variables the env shorthand configures one account with; none may be set beside PAYMENT_ACCOUNTS_FILE. */
export const PER_ACCOUNT_VARIABLES = [
  'WECHATPAY_MCHID',
  'WECHATPAY_APPID',
  'WECHATPAY_APPIDS',
  'WECHATPAY_APIV3_KEY',
  'WECHATPAY_PUBLIC_KEY_ID',
  'WECHATPAY_PUBLIC_KEY_PATH',
  'WECHATPAY_PLATFORM_CERT_PATHS',
  'WECHATPAY_MERCHANT_PRIVATE_KEY_PATH',
  'WECHATPAY_MERCHANT_SERIAL_NO',
  'ALIPAY_APP_ID',
  'ALIPAY_PUBLIC_KEY_PATH',
  'ALIPAY_SELLER_ID',
  'ALIPAY_APP_PRIVATE_KEY_PATH',
];

export function withoutAccountVariables(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !PER_ACCOUNT_VARIABLES.includes(name)));
}

/** The WeChat Pay account createTestPlatforms configures through the env shorthand, with more appids. */
export function wechatpayAccountOf(platforms: TestPlatforms, extraAppids: string[] = []): WechatpayTestAccount {
  const { wechatpay, refunds, env } = platforms;
  return {
    mchid: wechatpay.mchid,
    appids: [wechatpay.appid, ...extraAppids],
    apiV3Key: wechatpay.apiV3Key,
    signer: wechatpay.publicKeySigner,
    publicKeyPath: env.WECHATPAY_PUBLIC_KEY_PATH,
    platformCertPaths: [env.WECHATPAY_PLATFORM_CERT_PATHS],
    merchantSerialNo: refunds.merchantSerialNo,
    merchantKey: refunds.merchantKey,
    merchantPrivateKeyPath: env.WECHATPAY_MERCHANT_PRIVATE_KEY_PATH,
  };
}

/** The Alipay app createTestPlatforms configures through the env shorthand. */
export function alipayAccountOf(platforms: TestPlatforms): AlipayTestAccount {
  const { alipay, refunds, env } = platforms;
  return {
    appId: alipay.appId,
    sellerId: alipay.sellerId,
    alipayKey: { privateKey: alipay.privateKey },
    alipayPublicKeyPath: env.ALIPAY_PUBLIC_KEY_PATH,
    appKey: refunds.alipayAppKey,
    appPrivateKeyPath: env.ALIPAY_APP_PRIVATE_KEY_PATH,
  };
}

/** A new WeChat Pay merchant with its own APIv3 key, platform public key and merchant API key. */
export function createWechatpayAccount(mchid: string, appids: string[]): WechatpayTestAccount {
  const dir = mkdtempSync(join(tmpdir(), `pcs-wechatpay-${mchid}-`));
  const apiV3Key = randomAlphanumeric(32);
  const platformKey = generateRsaKeyPair();
  const merchantKey = generateRsaKeyPair();
  const publicKeyPath = join(dir, 'wechatpay-pub.pem');
  const merchantPrivateKeyPath = join(dir, 'merchant-key.pem');
  writeFileSync(publicKeyPath, platformKey.publicKeyPem);
  writeFileSync(merchantPrivateKeyPath, merchantKey.privateKeyPem);
  return {
    mchid,
    appids,
    apiV3Key,
    signer: { privateKey: platformKey.privateKey, serial: `PUB_KEY_ID_${mchid}${randomDigits(12)}`, apiV3Key },
    publicKeyPath,
    platformCertPaths: [],
    merchantSerialNo: randomBytes(20).toString('hex').toUpperCase(),
    merchantKey,
    merchantPrivateKeyPath,
  };
}

/** A new Alipay app with its own Alipay public key and app private key. */
export function createAlipayAccount(appId: string, sellerId: string): AlipayTestAccount {
  const dir = mkdtempSync(join(tmpdir(), `pcs-alipay-${appId}-`));
  const alipayKey = generateRsaKeyPair();
  const appKey = generateRsaKeyPair();
  const alipayPublicKeyPath = join(dir, 'alipay-pub.pem');
  const appPrivateKeyPath = join(dir, 'app-key.pem');
  writeFileSync(alipayPublicKeyPath, alipayKey.publicKeyPem);
  writeFileSync(appPrivateKeyPath, appKey.privateKeyPem);
  return { appId, sellerId, alipayKey, alipayPublicKeyPath, appKey, appPrivateKeyPath };
}

/** The accounts file's document, in the shape of docs/configuration.md ("Merchant accounts"). */
export function accountsDocument(accounts: TestAccounts): { wechatpay: object[]; alipay: object[] } {
  return {
    wechatpay: accounts.wechatpay.map((a) => ({
      mchid: a.mchid,
      appids: a.appids,
      apiV3Key: a.apiV3Key,
      platformPublicKey: { id: a.signer.serial, path: a.publicKeyPath },
      ...(a.platformCertPaths.length > 0 ? { platformCertPaths: a.platformCertPaths } : {}),
      merchantPrivateKeyPath: a.merchantPrivateKeyPath,
      merchantSerialNo: a.merchantSerialNo,
    })),
    alipay: accounts.alipay.map((a) => ({
      appId: a.appId,
      sellerId: a.sellerId,
      alipayPublicKeyPath: a.alipayPublicKeyPath,
      appPrivateKeyPath: a.appPrivateKeyPath,
    })),
  };
}

/** Writes `document` (JSON) to a file of its own in a temporary directory; answers its path. */
export function writeAccountsFile(document: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'pcs-accounts-')), 'accounts.json');
  writeFileSync(path, JSON.stringify(document, null, 2));
  return path;
}

/** The fake platform serving these accounts, each answered with its own platform key. */
export function fakeAccountOptions(accounts: TestAccounts): Omit<FakePlatformOptions, 'hangMs'> {
  return {
    wechatpay: accounts.wechatpay.map((a): FakeWechatpayMerchant => ({
      mchid: a.mchid,
      merchantSerialNo: a.merchantSerialNo,
      merchantPublicKeyPem: a.merchantKey.publicKeyPem,
      platformSigner: a.signer,
    })),
    alipay: accounts.alipay.map((a): FakeAlipayApp => ({
      appId: a.appId,
      appPublicKeyPem: a.appKey.publicKeyPem,
      alipayPrivateKey: a.alipayKey.privateKey,
    })),
  };
}

function randomDigits(length: number): string {
  return randomBytes(length).reduce((text, byte) => text + (byte % 10), '');
}
