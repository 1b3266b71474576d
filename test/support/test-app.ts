import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ModuleMetadata } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createPool, Pool, RowDataPacket } from 'mysql2/promise';
import { createApp } from '../../src/start/app.factory';
import { MetricsServer } from '../../src/platform/metrics/metrics-server';
import {
  alipayDelivery,
  alipayRefundParams,
  AlipayRefundNotifyParams,
  alipayTradeParams,
  AlipayTradeParams,
  generateCertificate,
  generateRsaKeyPair,
  randomAlphanumeric,
  RsaKeyPair,
  wechatpayDelivery,
  wechatpayRefund,
  WechatpayRefundParams,
  WechatpaySigner,
  wechatpayTransaction,
  WechatpayTransactionParams,
} from '../../tools/simulator/platform-signers';
import { assertTestDatabase } from './test-database';
import { FakePlatformOptions } from '../../tools/simulator/fake-platform';

/** The platforms as the tests play them: real keys, written to files the app loads like production keys. */
export interface TestPlatforms {
  wechatpay: {
    mchid: string;
    appid: string;
    apiV3Key: string;
    publicKeySigner: WechatpaySigner;
    certSigner: WechatpaySigner;
  };
  alipay: { appId: string; sellerId: string; privateKey: import('node:crypto').KeyObject };
  /** The merchant's side of the refund APIs: its request-signing keys, and the fake platform's view of them. */
  refunds: { merchantSerialNo: string; merchantKey: RsaKeyPair; alipayAppKey: RsaKeyPair };
  admins: { admin: string; admin2: string; viewer: string };
  internalApiToken: string;
  env: Record<string, string>;
}

export async function createTestPlatforms(): Promise<TestPlatforms> {
  const dir = mkdtempSync(join(tmpdir(), 'pcs-keys-'));
  const apiV3Key = randomAlphanumeric(32);
  const wechatPublicKey = generateRsaKeyPair();
  const wechatCertKey = generateRsaKeyPair();
  const alipayKey = generateRsaKeyPair();
  const merchantKey = generateRsaKeyPair();
  const alipayAppKey = generateRsaKeyPair();
  const merchantSerialNo = randomBytes(20).toString('hex').toUpperCase();
  const certSerial = `5157F09EFDC096DE15EBE81A47057A72${randomBytes(4).toString('hex').toUpperCase()}`;
  const publicKeyId = 'PUB_KEY_ID_0114232134912410000000000000';
  writeFileSync(join(dir, 'wechatpay-pub.pem'), wechatPublicKey.publicKeyPem);
  writeFileSync(join(dir, 'wechatpay-cert.pem'), await generateCertificate(wechatCertKey, certSerial));
  writeFileSync(join(dir, 'alipay-pub.pem'), alipayKey.publicKeyPem);
  writeFileSync(join(dir, 'merchant-key.pem'), merchantKey.privateKeyPem);
  writeFileSync(join(dir, 'alipay-app-key.pem'), alipayAppKey.privateKeyPem);
  const platforms = {
    wechatpay: {
      mchid: '1900009191',
      appid: 'wxd678efh567hg6787',
      apiV3Key,
      publicKeySigner: { privateKey: wechatPublicKey.privateKey, serial: publicKeyId, apiV3Key },
      certSigner: { privateKey: wechatCertKey.privateKey, serial: certSerial, apiV3Key },
    },
    alipay: { appId: '2021000117600001', sellerId: '2088531891668739', privateKey: alipayKey.privateKey },
    refunds: { merchantSerialNo, merchantKey, alipayAppKey },
    admins: { admin: randomAlphanumeric(40), admin2: randomAlphanumeric(40), viewer: randomAlphanumeric(40) },
    internalApiToken: randomAlphanumeric(40),
  };
  return {
    ...platforms,
    env: {
      WECHATPAY_MCHID: platforms.wechatpay.mchid,
      WECHATPAY_APPID: platforms.wechatpay.appid,
      WECHATPAY_APIV3_KEY: apiV3Key,
      WECHATPAY_PUBLIC_KEY_ID: publicKeyId,
      WECHATPAY_PUBLIC_KEY_PATH: join(dir, 'wechatpay-pub.pem'),
      WECHATPAY_PLATFORM_CERT_PATHS: join(dir, 'wechatpay-cert.pem'),
      ALIPAY_APP_ID: platforms.alipay.appId,
      ALIPAY_PUBLIC_KEY_PATH: join(dir, 'alipay-pub.pem'),
      ALIPAY_SELLER_ID: platforms.alipay.sellerId,
      INTERNAL_API_TOKEN: platforms.internalApiToken,
      ADMIN_TOKENS: [
        `alice:${platforms.admins.admin}:admin`,
        `bob:${platforms.admins.admin2}:admin`,
        `victor:${platforms.admins.viewer}:viewer`,
      ].join(','),
      WECHATPAY_MERCHANT_PRIVATE_KEY_PATH: join(dir, 'merchant-key.pem'),
      WECHATPAY_MERCHANT_SERIAL_NO: merchantSerialNo,
      ALIPAY_APP_PRIVATE_KEY_PATH: join(dir, 'alipay-app-key.pem'),
    },
  };
}

/**
 * Where the channels' APIs are unless a suite points them at its fake platform: a loopback port
 * nobody listens on, so that no test ever reaches a real payment platform.
 */
export const NO_PLATFORM_API = {
  WECHATPAY_API_BASE_URL: 'http://127.0.0.1:9',
  ALIPAY_GATEWAY_URL: 'http://127.0.0.1:9/gateway.do',
};

/** The service's configuration variables: cleared before each start, so that no app inherits another's. */
export const CONFIG_VARIABLES =
  /^(WECHATPAY_|ALIPAY_|UNIONPAY_|PAYMENT_|INTERNAL_API_TOKEN$|ADMIN_TOKENS(_FILE)?$|REFUND_|REFUSED_|PORT$|DATABASE_POOL_SIZE$|MIGRATIONS_RUN$|OPENAPI$|RABBITMQ_|OUTBOX_|HANDLER_|RETRY_|EXAMPLE_HANDLERS$|DATABASE_(QUERY|CONNECT|POOL)_|HTTP_|HEALTH_|SHUTDOWN_|METRICS_PORT$|RETENTION_|CURRENCIES$|PUBLIC_BASE_URL$|SPOOL_|RECONCILE_|BILL_|REDIS_|REPORTING_|ADMIN_READS_|CONSOLE$|WEBHOOK_)/;

/**
 * The development machine's MariaDB is shared by several test runs at once and stalls for seconds
 * at times; a suite about something else should not turn such a stall into a 503. The production
 * bounds are proven where they are the subject (bounded-waits.e2e-spec.ts sets its own), and a
 * suite may still set these.
 */
/**
 * Several apps run at once (replicas in one suite, suites side by side): each takes a free
 * management port of its own, found on RunningApp.managementUrl, instead of the default 9464.
 */
export const ANY_MANAGEMENT_PORT = { METRICS_PORT: '0' };

const SHARED_MACHINE_BOUNDS = { DATABASE_QUERY_TIMEOUT_MS: '30000', DATABASE_POOL_ACQUIRE_TIMEOUT_MS: '30000' };

export interface RunningApp {
  app: NestFastifyApplication;
  /** The public port: the API, the notifications, the probes' status. */
  url: string;
  /** The management port (METRICS_PORT, a free one per app unless given): /metrics and the readiness report. */
  managementUrl: string;
  close(): Promise<void>;
}

/** Starts the real application (Fastify, HTTP on a free loopback port) against the run's test database. */
export async function startApp(
  env: Record<string, string>,
  extraImports: ModuleMetadata['imports'] = [],
): Promise<RunningApp> {
  assertTestDatabase(process.env.TEST_DATABASE_NAME);
  for (const name of Object.keys(process.env)) if (CONFIG_VARIABLES.test(name)) delete process.env[name];
  Object.assign(
    process.env,
    {
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
      RECONCILE_AT: 'off',
      ...NO_PLATFORM_API,
      ...SHARED_MACHINE_BOUNDS,
      ...ANY_MANAGEMENT_PORT,
    },
    env,
  );
  const app = await createApp(extraImports);
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  return {
    app,
    url: `http://127.0.0.1:${address.port}`,
    managementUrl: `http://127.0.0.1:${app.get(MetricsServer).port}`,
    close: () => app.close(),
  };
}

/** A direct connection to the test database, for asserting effects (never for arranging them behind the app's back). */
export function testDatabasePool(): Pool {
  assertTestDatabase(process.env.TEST_DATABASE_NAME);
  return createPool({
    uri: process.env.DATABASE_URL!,
    connectionLimit: 4,
    supportBigNumbers: true,
    bigNumberStrings: false,
  });
}

export async function count(pool: Pool, sql: string, params: unknown[] = []): Promise<number> {
  const [rows] = await pool.query<RowDataPacket[]>(sql, params);
  return Number(Object.values(rows[0])[0]);
}

/** Unique per call, so that suites sharing the run's database never see each other's rows. */
export function uniqueId(prefix: string): string {
  return `${prefix}${Date.now().toString(36)}${randomBytes(5).toString('hex')}`;
}

export interface HttpAnswer {
  status: number;
  body: string;
  json<T = Record<string, unknown>>(): T;
}

async function answer(response: Response): Promise<HttpAnswer> {
  const body = await response.text();
  return { status: response.status, body, json: <T>() => JSON.parse(body) as T };
}

/** The platforms' signed notifications for these merchants: what an e2e suite posts and a medium suite verifies. */
export class SignedDeliveries {
  constructor(readonly platforms: TestPlatforms) {}

  /** A signed, encrypted TRANSACTION.SUCCESS (or `eventType`) notification for this merchant. */
  wechatpayPayment(
    p: Omit<WechatpayTransactionParams, 'mchid'> & { mchid?: string },
    options: { signer?: WechatpaySigner; eventType?: string; timestamp?: number } = {},
  ) {
    const { wechatpay } = this.platforms;
    return wechatpayDelivery(options.signer ?? wechatpay.publicKeySigner, {
      eventType: options.eventType,
      timestamp: options.timestamp,
      resource: wechatpayTransaction({ mchid: wechatpay.mchid, appid: wechatpay.appid, ...p }),
    });
  }

  alipayPayment(p: Omit<AlipayTradeParams, 'appId'> & { appId?: string }): string {
    const { alipay } = this.platforms;
    return alipayDelivery(
      alipay.privateKey,
      alipayTradeParams({ appId: alipay.appId, sellerId: alipay.sellerId, ...p }),
    );
  }

  /** A signed, encrypted REFUND.* notification for this merchant. */
  wechatpayRefundNotice(p: Omit<WechatpayRefundParams, 'mchid'>, eventType = 'REFUND.SUCCESS') {
    const { wechatpay } = this.platforms;
    return wechatpayDelivery(wechatpay.publicKeySigner, {
      eventType,
      originalType: 'refund',
      resource: wechatpayRefund({ mchid: wechatpay.mchid, ...p }),
    });
  }

  alipayRefundNotice(p: Omit<AlipayRefundNotifyParams, 'appId'>): string {
    const { alipay } = this.platforms;
    return alipayDelivery(
      alipay.privateKey,
      alipayRefundParams({ appId: alipay.appId, sellerId: alipay.sellerId, ...p }),
    );
  }
}

/** Speaks to a running app the way the platforms and the internal callers do. */
export class TestClient extends SignedDeliveries {
  constructor(
    readonly baseUrl: string,
    platforms: TestPlatforms,
  ) {
    super(platforms);
  }

  async registerOrder(order: {
    orderNo: string;
    amount: number;
    userId?: string;
    currency?: string;
    /** The channel (and account) the order will be paid through, when known. */
    channel?: string;
    merchantId?: string;
  }): Promise<HttpAnswer> {
    return this.api('POST', '/payment-orders', { userId: 'u-1', currency: 'CNY', ...order });
  }

  /** The internal order API. */
  async api(
    method: string,
    path: string,
    body?: unknown,
    token = this.platforms.internalApiToken,
  ): Promise<HttpAnswer> {
    return this.sendJson(method, path, token, body);
  }

  /** The admin API as an operator: `token` is one of platforms.admins, or undefined for none. */
  async admin(method: string, path: string, token: string | undefined, body?: unknown): Promise<HttpAnswer> {
    return this.sendJson(method, path, token, body);
  }

  private async sendJson(method: string, path: string, token: string | undefined, body: unknown): Promise<HttpAnswer> {
    const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    return answer(
      await fetch(this.baseUrl + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
  }

  async postWechatpay(delivery: { headers: Record<string, string>; body: string }): Promise<HttpAnswer> {
    return answer(
      await fetch(`${this.baseUrl}/notify/wechatpay`, {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body,
      }),
    );
  }

  async postAlipay(
    form: string,
    contentType = 'application/x-www-form-urlencoded; charset=utf-8',
  ): Promise<HttpAnswer> {
    return answer(
      await fetch(`${this.baseUrl}/notify/alipay`, {
        method: 'POST',
        headers: { 'content-type': contentType },
        body: form,
      }),
    );
  }
}

/** The fake refund APIs' options matching these platforms' keys. */
export function fakePlatformOptions(platforms: TestPlatforms): FakePlatformOptions {
  return {
    wechatpay: {
      mchid: platforms.wechatpay.mchid,
      merchantSerialNo: platforms.refunds.merchantSerialNo,
      merchantPublicKeyPem: platforms.refunds.merchantKey.publicKeyPem,
      platformSigner: platforms.wechatpay.publicKeySigner,
    },
    alipay: {
      appId: platforms.alipay.appId,
      appPublicKeyPem: platforms.refunds.alipayAppKey.publicKeyPem,
      alipayPrivateKey: platforms.alipay.privateKey,
      sellerId: platforms.alipay.sellerId,
    },
  };
}

/**
 * The platforms' notification keys without the merchant API keys: no trade query, close or refund
 * ever leaves the machine, and closing an order closes it here only (its channel is UNAVAILABLE).
 */
export function notificationsOnly(env: Record<string, string>): Record<string, string> {
  const {
    WECHATPAY_MERCHANT_PRIVATE_KEY_PATH: _wechatpayKey,
    WECHATPAY_MERCHANT_SERIAL_NO: _wechatpaySerial,
    ALIPAY_APP_PRIVATE_KEY_PATH: _alipayKey,
    ...rest
  } = env;
  return rest;
}
