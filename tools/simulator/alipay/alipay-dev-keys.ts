/**
 * The Alipay part of the simulator's local key set (`simulate init`): Alipay's key pair (its private half signs
 * notifications and gateway answers, its public half goes to the service) and the app's key pair (the service signs
 * its requests with the private half). With `init --alipay-cert`, certificate mode: a test root, the Alipay
 * certificate and the app certificate around those keys, instead of the bare public key. Never for production.
 */
import { createPrivateKey, KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ChannelKeySet } from '../channel-simulator';
import { DevKeys, writeSecret } from '../dev-keys';
import { generateRsaKeyPair } from '../signing';
import { DevAlipayCertMode, writeDevAlipayCertMode } from './alipay-cert-keys';

export interface AlipayDevKeys {
  appId: string;
  sellerId: string;
  /** Alipay's certificate mode (`init --alipay-cert`) instead of the bare public key. */
  certMode?: DevAlipayCertMode;
}

declare module '../dev-keys' {
  interface DevKeys {
    alipay: AlipayDevKeys;
  }
}

const PEM = {
  alipayKey: 'alipay-key.pem',
  alipayPub: 'alipay-pub.pem',
  appKey: 'alipay-app-key.pem',
  appPub: 'alipay-app-pub.pem',
} as const;

/** The key Alipay signs notifications and gateway answers with. */
export function alipayPlatformKey(keys: DevKeys): KeyObject {
  return createPrivateKey(readFileSync(join(keys.dir, PEM.alipayKey)));
}

export const alipayKeySet: ChannelKeySet = {
  init: { options: { 'alipay-cert': { type: 'boolean', default: false } }, usage: '[--alipay-cert]' },

  async create(dir, values): Promise<AlipayDevKeys> {
    const alipay = generateRsaKeyPair();
    const app = generateRsaKeyPair();
    writeSecret(join(dir, PEM.alipayKey), alipay.privateKeyPem);
    writeSecret(join(dir, PEM.alipayPub), alipay.publicKeyPem);
    writeSecret(join(dir, PEM.appKey), app.privateKeyPem);
    writeSecret(join(dir, PEM.appPub), app.publicKeyPem);
    const account = { appId: '2021000199600001', sellerId: '2088101117955611' };
    if (values['alipay-cert'] !== true) return account;
    // Certificates around the keys just made, beside them.
    return { ...account, certMode: await writeDevAlipayCertMode(dir, account, alipay, app.publicKeyPem) };
  },

  serviceEnvironment(keys, { platformPort }) {
    return {
      ALIPAY_APP_ID: keys.alipay.appId,
      ALIPAY_SELLER_ID: keys.alipay.sellerId,
      ...publicKeyEnvironment(keys),
      ALIPAY_APP_PRIVATE_KEY_PATH: join(keys.dir, PEM.appKey),
      ALIPAY_GATEWAY_URL: `http://127.0.0.1:${platformPort}/gateway.do`,
    };
  },

  describe(keys) {
    const lines = [`  Alipay      app ${keys.alipay.appId}, Alipay key pair, app key pair`];
    const certMode = keys.alipay.certMode;
    if (certMode) {
      const { alipayCertSn, appCertSn, rootCertSn } = certMode;
      lines.push(`              certificate mode: alipay_cert_sn ${alipayCertSn}, app_cert_sn ${appCertSn},`);
      lines.push(`              alipay_root_cert_sn ${rootCertSn} (a test root made now)`);
    }
    return lines;
  },

  fakePlatformAccounts(keys) {
    const { appId, sellerId, certMode } = keys.alipay;
    return {
      alipay: {
        appId,
        appPublicKeyPem: readFileSync(join(keys.dir, PEM.appPub), 'utf8'),
        alipayPrivateKey: alipayPlatformKey(keys),
        sellerId,
        certMode: certMode && {
          appCertSn: certMode.appCertSn,
          rootCertSn: certMode.rootCertSn,
          alipayCertSn: certMode.alipayCertSn,
        },
      },
    };
  },
};

/** The bare public key, or in certificate mode the three certificates. */
function publicKeyEnvironment(keys: DevKeys): Record<string, string> {
  const certMode = keys.alipay.certMode;
  if (!certMode) return { ALIPAY_PUBLIC_KEY_PATH: join(keys.dir, PEM.alipayPub) };
  return {
    ALIPAY_PUBLIC_CERT_PATHS: join(keys.dir, certMode.files.publicCert),
    ALIPAY_ROOT_CERT_PATH: join(keys.dir, certMode.files.rootCert),
    ALIPAY_APP_CERT_PATH: join(keys.dir, certMode.files.appCert),
  };
}
