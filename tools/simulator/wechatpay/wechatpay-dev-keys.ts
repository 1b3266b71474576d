/**
 * The WeChat Pay part of the simulator's local key set (`simulate init`): the platform's key pair (its private half
 * signs notifications and answers, its public half goes to the service), the merchant's key pair (the service signs
 * its requests with the private half, the fake platform checks them with the public one), the APIv3 and APIv2 keys.
 * A key set made with `init --dialect partner` is a service provider's, for two sub-merchants. Never for production.
 */
import { createPrivateKey, KeyObject, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../cli';
import { ChannelKeySet, OptionValues } from '../channel-simulator';
import { DevKeys, writeSecret } from '../dev-keys';
import { generateRsaKeyPair, randomAlphanumeric } from '../signing';

export interface WechatpayDevKeys {
  mchid: string;
  appid: string;
  apiV3Key: string;
  publicKeyId: string;
  merchantSerialNo: string;
  /** A service provider's key set (`init --dialect partner`): mchid and appid are then the sp_ ones. */
  subMchids?: string[];
  /** Absent in key sets made before APIv2 notifications existed. */
  apiV2Key?: string;
}

declare module '../dev-keys' {
  interface DevKeys {
    wechatpay: WechatpayDevKeys;
  }
}

/** The sub-merchants of a partner key set. */
export const DEV_SUB_MCHIDS = ['1900000111', '1900000112'];
/** The dialects of a key set: a direct merchant's (v3) or a service provider's (partner). */
export const KEY_SET_DIALECTS = ['v3', 'partner'] as const;

const PEM = {
  platformKey: 'wechatpay-platform-key.pem',
  platformPub: 'wechatpay-platform-pub.pem',
  merchantKey: 'wechatpay-merchant-key.pem',
  merchantPub: 'wechatpay-merchant-pub.pem',
} as const;

/** The key WeChat Pay signs notifications and API answers with. */
export function wechatpayPlatformKey(keys: DevKeys): KeyObject {
  return createPrivateKey(readFileSync(join(keys.dir, PEM.platformKey)));
}

export const wechatpayKeySet: ChannelKeySet = {
  init: {
    options: { dialect: { type: 'string', default: 'v3' } },
    usage: '[--dialect v3|partner]',
    check: (values) => dialectOf(values),
  },

  async create(dir: string, values: OptionValues): Promise<WechatpayDevKeys> {
    const platform = generateRsaKeyPair();
    const merchant = generateRsaKeyPair();
    writeSecret(join(dir, PEM.platformKey), platform.privateKeyPem);
    writeSecret(join(dir, PEM.platformPub), platform.publicKeyPem);
    writeSecret(join(dir, PEM.merchantKey), merchant.privateKeyPem);
    writeSecret(join(dir, PEM.merchantPub), merchant.publicKeyPem);
    return Promise.resolve({
      mchid: '1900000109',
      appid: 'wxd930ea5d5a258f4f',
      apiV3Key: randomAlphanumeric(32),
      publicKeyId: `PUB_KEY_ID_0119000001092025${randomDigits(12)}`,
      merchantSerialNo: randomBytes(20).toString('hex').toUpperCase(),
      ...(dialectOf(values) === 'partner' ? { subMchids: DEV_SUB_MCHIDS } : {}),
      apiV2Key: randomAlphanumeric(32),
    });
  },

  serviceEnvironment(keys: DevKeys, { platformPort }): Record<string, string> {
    const wechatpay = keys.wechatpay;
    return {
      WECHATPAY_MCHID: wechatpay.mchid,
      WECHATPAY_APPIDS: wechatpay.appid,
      WECHATPAY_APIV3_KEY: wechatpay.apiV3Key,
      WECHATPAY_PUBLIC_KEY_ID: wechatpay.publicKeyId,
      WECHATPAY_PUBLIC_KEY_PATH: join(keys.dir, PEM.platformPub),
      WECHATPAY_MERCHANT_PRIVATE_KEY_PATH: join(keys.dir, PEM.merchantKey),
      WECHATPAY_MERCHANT_SERIAL_NO: wechatpay.merchantSerialNo,
      ...(wechatpay.apiV2Key ? { WECHATPAY_APIV2_KEY: wechatpay.apiV2Key } : {}),
      WECHATPAY_API_BASE_URL: `http://127.0.0.1:${platformPort}`,
      ...(wechatpay.subMchids?.length ? { WECHATPAY_SUB_MCHIDS: wechatpay.subMchids.join(',') } : {}),
    };
  },

  describe(keys: DevKeys): string[] {
    const { mchid, publicKeyId, subMchids } = keys.wechatpay;
    return [
      `  WeChat Pay  mchid ${mchid}, platform key ${publicKeyId}, APIv3 key, merchant key`,
      ...(subMchids
        ? [`              a service provider (partner mode) for sub-merchants ${subMchids.join(', ')}`]
        : []),
    ];
  },

  fakePlatformAccounts(keys: DevKeys) {
    return {
      wechatpay: {
        mchid: keys.wechatpay.mchid,
        merchantSerialNo: keys.wechatpay.merchantSerialNo,
        merchantPublicKeyPem: readFileSync(join(keys.dir, PEM.merchantPub), 'utf8'),
        platformSigner: { privateKey: wechatpayPlatformKey(keys), serial: keys.wechatpay.publicKeyId },
        subMchids: keys.wechatpay.subMchids,
      },
    };
  },
};

function dialectOf(values: OptionValues): (typeof KEY_SET_DIALECTS)[number] {
  const dialect = values.dialect as (typeof KEY_SET_DIALECTS)[number];
  if (!KEY_SET_DIALECTS.includes(dialect)) throw new UsageError(`--dialect must be ${KEY_SET_DIALECTS.join(' or ')}`);
  return dialect;
}

function randomDigits(length: number): string {
  return randomBytes(length).reduce((text, byte) => text + (byte % 10), '');
}
