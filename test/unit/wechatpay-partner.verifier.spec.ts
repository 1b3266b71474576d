import { createCipheriv } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { WechatpayConfig } from '../../src/channels/wechatpay/wechatpay.config';
import { WechatpayVerifier } from '../../src/channels/wechatpay/wechatpay.verifier';
import { DomainError } from '../../src/domain/domain-error';
import { RawDelivery } from '../../src/domain/notification';
import { generateRsaKeyPair, signWechatpayBody } from '../../tools/simulator/platform-signers';
import { VECTORS_DIR } from '../support/vectors';

/**
 * Service-provider (partner) notifications through the APIv3 verifier, with the real-world partner samples of
 * test/fixtures/vectors/wechatpay-v3-partner (provenance in its README).
 */
const DIR = path.join(VECTORS_DIR, 'wechatpay-v3-partner');
/** The sample's bytes exactly as published: a UTF-8 byte order mark, then the JSON. */
const TRANSACTION_PLAINTEXT = readFileSync(path.join(DIR, 'PartnerTransactionResource.json'));
const REFUND_PLAINTEXT = readFileSync(path.join(DIR, 'PartnerRefundResource.json'));
const SYNTHETIC = JSON.parse(readFileSync(path.join(DIR, 'SYNTHETIC-notification.json'), 'utf8')) as {
  apiV3Key: string;
  headers: Record<string, string>;
  body: string;
};

const PUBLIC_KEY_ID = 'PUB_KEY_ID_0112300001092025000000000000';
const API_V3_KEY = 'Pv7Lm2Vb9Rt4Wn6Pz8Ks1Hd3Fg5Jc0Ye';
const NOW_MS = Date.UTC(2026, 11, 1, 8, 0, 0);
const platformKey = generateRsaKeyPair();
const keyDir = readyKeyDir();

function readyKeyDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'wx-partner-vectors-'));
  writeFileSync(path.join(dir, 'pub.pem'), platformKey.publicKeyPem);
  return dir;
}

/** The sample's own provider, app and sub-merchant: sp_mchid 1230000109, sp_appid wx8888888888888888, sub_mchid 1900000109. */
function provider(overrides: Partial<WechatpayConfig> = {}): WechatpayConfig {
  return {
    mchid: '1230000109',
    appids: ['wx8888888888888888'],
    apiV3Key: API_V3_KEY,
    publicKey: { id: PUBLIC_KEY_ID, path: path.join(keyDir, 'pub.pem') },
    platformCertPaths: [],
    subMchids: ['1900000109', '1900000110'],
    ...overrides,
  };
}

/** The plaintext's bytes as they are, encrypted (AEAD_AES_256_GCM) in the APIv3 envelope and signed now. */
function envelopeOf(plaintext: Buffer, eventType: string, originalType: string): RawDelivery {
  const nonce = 'a1b2c3d4e5f6';
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(API_V3_KEY, 'utf8'), Buffer.from(nonce, 'utf8'));
  cipher.setAAD(Buffer.from(originalType, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]).toString('base64');
  const body = JSON.stringify({
    id: 'EV-2018022511223320873',
    create_time: '2015-05-20T13:29:35+08:00',
    resource_type: 'encrypt-resource',
    event_type: eventType,
    summary: '支付成功',
    resource: {
      original_type: originalType,
      algorithm: 'AEAD_AES_256_GCM',
      ciphertext,
      associated_data: originalType,
      nonce,
    },
  });
  const headers = signWechatpayBody({ privateKey: platformKey.privateKey, serial: PUBLIC_KEY_ID }, body, {
    timestamp: NOW_MS / 1000,
  });
  return { headers, body: Buffer.from(body, 'utf8') };
}

function codeOf(call: () => unknown): string {
  try {
    call();
  } catch (error) {
    return error instanceof DomainError ? error.code : `non-domain error: ${String(error)}`;
  }
  return 'no error';
}

describe('WechatpayVerifier in service-provider mode', () => {
  it("should read the SDKs' partner TRANSACTION.SUCCESS resource as it is (byte order mark included)", () => {
    expect(TRANSACTION_PLAINTEXT.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    const sut = new WechatpayVerifier([provider()], () => NOW_MS);

    const notification = sut.verify(envelopeOf(TRANSACTION_PLAINTEXT, 'TRANSACTION.SUCCESS', 'transaction'));

    expect(notification).toMatchObject({
      channel: 'WECHATPAY',
      merchantId: '1230000109',
      subMerchantId: '1900000109',
      eventType: 'TRANSACTION.SUCCESS',
      paid: true,
      outTradeNo: '1217752501201407033233368018',
      transactionId: '1217752501201407033233368018',
      amount: 100,
      currency: 'CNY',
      paidAt: new Date('2018-06-08T02:34:56Z'),
    });
    expect(notification.malformed).toBeUndefined();
  });

  it('should refuse the same resource when its sub-merchant, provider or sp_appid is not configured', () => {
    const delivery = envelopeOf(TRANSACTION_PLAINTEXT, 'TRANSACTION.SUCCESS', 'transaction');
    const verify = (config: WechatpayConfig) => () => new WechatpayVerifier([config], () => NOW_MS).verify(delivery);

    expect(codeOf(verify(provider({ subMchids: ['1900000110'] })))).toBe('MerchantMismatch');
    expect(codeOf(verify(provider({ mchid: '1230000999' })))).toBe('MerchantMismatch');
    expect(codeOf(verify(provider({ appids: ['wx9999999999999999'] })))).toBe('MerchantMismatch');
    // A direct merchant's account has no sub-merchants: a provider's notification is not its.
    expect(codeOf(verify(provider({ subMchids: [] })))).toBe('MerchantMismatch');
  });

  it("should read the SDKs' partner REFUND.SUCCESS resource and name its sub-merchant", () => {
    const sut = new WechatpayVerifier([provider({ mchid: '1900000100' })], () => NOW_MS);

    const notification = sut.verify(envelopeOf(REFUND_PLAINTEXT, 'REFUND.SUCCESS', 'refund'));

    expect(notification).toMatchObject({
      merchantId: '1900000100',
      subMerchantId: '1900000109',
      paid: false,
      transactionId: '1008450740201411110005820873',
      refund: {
        refundNo: '7752501201407033233368018',
        channelRefundId: '50200207182018070300011301001',
        status: 'SUCCEEDED',
      },
    });
  });

  it('should verify the SYNTHETIC envelope (not signed by WeChat Pay) with its own key, and refuse it once a byte changes', () => {
    const synthetic = provider({
      apiV3Key: SYNTHETIC.apiV3Key,
      publicKey: {
        id: SYNTHETIC.headers['Wechatpay-Serial'],
        path: path.join(DIR, 'SYNTHETIC-platform-public-key.pem'),
      },
    });
    const at = Number(SYNTHETIC.headers['Wechatpay-Timestamp']) * 1000;
    const sut = new WechatpayVerifier([synthetic], () => at);
    const headers = Object.fromEntries(Object.entries(SYNTHETIC.headers).map(([k, v]) => [k.toLowerCase(), v]));
    const delivery = { headers: { ...headers, 'content-type': 'application/json' }, body: Buffer.from(SYNTHETIC.body) };

    expect(sut.verify(delivery)).toMatchObject({ merchantId: '1230000109', subMerchantId: '1900000109', amount: 100 });
    const tampered = {
      ...delivery,
      body: Buffer.from(SYNTHETIC.body.replace('"summary":"支付成功"', '"summary":"支付失败"')),
    };
    expect(codeOf(() => sut.verify(tampered))).toBe('InvalidSignature');
  });
});
