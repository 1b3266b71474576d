/**
 * Real signed deliveries as WeChat Pay (APIv3) sends them: real RSA keys, real signatures, real AES-256-GCM
 * encryption, and a platform certificate. Shared by the verifiers' unit specs, the e2e suites, the benchmark and the
 * simulator, so nothing here imports the code under test: the signing side is written from the platform's docs.
 */
import 'reflect-metadata'; // @peculiar/x509 resolves its services through tsyringe, which needs the Reflect polyfill
import { createCipheriv, createPublicKey, KeyObject, randomUUID, sign, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { beijingRfc3339, randomAlphanumeric, RsaKeyPair } from '../signing';

// Node's webcrypto is the standard Web Crypto API; the casts only bridge Node's and the DOM's type names.
x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const RSA_SHA256 = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const;

/**
 * A self-signed PEM X.509 certificate for `keys` with serial number `serialHex` (an even number of hex
 * digits, e.g. WeChat's 40), standing in for a WeChat Pay platform certificate. Node reads the serial
 * back in upper case, without leading 00 bytes.
 */
export async function generateCertificate(
  keys: Pick<RsaKeyPair, 'privateKey' | 'publicKeyPem'>,
  serialHex: string,
  validity: { notBefore?: Date; notAfter?: Date } = {},
): Promise<string> {
  const subtle = webcrypto.subtle;
  const pkcs8 = keys.privateKey.export({ type: 'pkcs8', format: 'der' });
  const spki = createPublicKey(keys.publicKeyPem).export({ type: 'spki', format: 'der' });
  const cryptoKeys = {
    privateKey: await subtle.importKey('pkcs8', pkcs8, RSA_SHA256, false, ['sign']),
    publicKey: await subtle.importKey('spki', spki, RSA_SHA256, true, ['verify']),
  };
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialHex,
    name: 'C=CN, O=Tenpay.com, OU=Tenpay.com CA Center, CN=Tenpay.com Platform Test',
    notBefore: validity.notBefore ?? new Date(now - 24 * 3600 * 1000),
    notAfter: validity.notAfter ?? new Date(now + 5 * 365 * 24 * 3600 * 1000),
    signingAlgorithm: RSA_SHA256,
    keys: cryptoKeys,
  });
  return cert.toString('pem');
}

export interface WechatpaySigner {
  privateKey: KeyObject;
  /** Sent as Wechatpay-Serial: a PUB_KEY_ID_… in public key mode, the certificate serial in certificate mode. */
  serial: string;
  /** The merchant's 32-character APIv3 key, used as the AES-256-GCM key. */
  apiV3Key: string;
}

export interface WechatpayEvent {
  eventType?: string;
  /** The plaintext resource, JSON-encoded and then encrypted. */
  resource: object;
  /** Unix seconds; defaults to now. */
  timestamp?: number;
  nonce?: string;
  id?: string;
  /** resource.original_type and associated_data: 'transaction' for payments, 'refund' for refunds. */
  originalType?: string;
}

export interface WechatpayHttpDelivery {
  headers: Record<string, string>;
  body: string;
}

export interface EncryptedResource {
  original_type: string;
  algorithm: 'AEAD_AES_256_GCM';
  ciphertext: string;
  associated_data: string;
  nonce: string;
}

/** AEAD_AES_256_GCM as WeChat Pay uses it: a 12-character nonce, ciphertext = base64(ciphertext || 16-byte tag). */
export function encryptWechatpayResource(
  apiV3Key: string,
  plaintext: string,
  originalType = 'transaction',
): EncryptedResource {
  const nonce = randomAlphanumeric(12);
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(apiV3Key, 'utf8'), Buffer.from(nonce, 'utf8'));
  cipher.setAAD(Buffer.from(originalType, 'utf8'));
  const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return {
    original_type: originalType,
    algorithm: 'AEAD_AES_256_GCM',
    ciphertext: sealed.toString('base64'),
    associated_data: originalType,
    nonce,
  };
}

/** The Wechatpay-* headers for an arbitrary raw body: SHA256withRSA over `timestamp\nnonce\nbody\n`. */
export function signWechatpayBody(
  signer: Pick<WechatpaySigner, 'privateKey' | 'serial'>,
  body: string,
  options: { timestamp?: number; nonce?: string } = {},
): Record<string, string> {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const nonce = options.nonce ?? randomAlphanumeric(32);
  const signature = sign('sha256', Buffer.from(`${timestamp}\n${nonce}\n${body}\n`, 'utf8'), signer.privateKey);
  return {
    'content-type': 'application/json',
    'wechatpay-timestamp': String(timestamp),
    'wechatpay-nonce': nonce,
    'wechatpay-signature': signature.toString('base64'),
    'wechatpay-serial': signer.serial,
  };
}

/** A complete APIv3 notification: encrypted resource in the standard envelope, signed headers. */
export function wechatpayDelivery(signer: WechatpaySigner, event: WechatpayEvent): WechatpayHttpDelivery {
  const timestamp = event.timestamp ?? Math.floor(Date.now() / 1000);
  const originalType = event.originalType ?? 'transaction';
  const body = JSON.stringify({
    id: event.id ?? randomUUID(),
    create_time: beijingRfc3339(new Date(timestamp * 1000)),
    resource_type: 'encrypt-resource',
    event_type: event.eventType ?? 'TRANSACTION.SUCCESS',
    summary: '支付成功',
    resource: encryptWechatpayResource(signer.apiV3Key, JSON.stringify(event.resource), originalType),
  });
  return { headers: signWechatpayBody(signer, body, { timestamp, nonce: event.nonce }), body };
}

export interface WechatpayTransactionParams {
  mchid: string;
  appid?: string;
  outTradeNo: string;
  transactionId: string;
  /** Fen. */
  total: number;
  currency?: string;
  tradeState?: string;
  successTime?: Date;
}

/** A decrypted JSAPI payment resource, shaped like the ones WeChat Pay sends. */
export function wechatpayTransaction(p: WechatpayTransactionParams): object {
  const currency = p.currency ?? 'CNY';
  const tradeState = p.tradeState ?? 'SUCCESS';
  return {
    mchid: p.mchid,
    appid: p.appid ?? 'wxd678efh567hg6787',
    out_trade_no: p.outTradeNo,
    transaction_id: p.transactionId,
    trade_type: 'JSAPI',
    trade_state: tradeState,
    trade_state_desc: tradeState === 'SUCCESS' ? '支付成功' : tradeState,
    bank_type: 'CMC',
    attach: '',
    success_time: beijingRfc3339(p.successTime ?? new Date()),
    payer: { openid: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o' },
    amount: { total: p.total, payer_total: p.total, currency, payer_currency: currency },
  };
}

export interface WechatpayRefundParams {
  mchid: string;
  outTradeNo: string;
  transactionId: string;
  outRefundNo: string;
  refundId: string;
  /** SUCCESS, CLOSED or ABNORMAL. */
  refundStatus?: string;
  /** Fen. */
  total: number;
  refund: number;
}

/** A decrypted refund resource (original_type 'refund'), sent with REFUND.SUCCESS / REFUND.ABNORMAL / REFUND.CLOSED. */
export function wechatpayRefund(p: WechatpayRefundParams): object {
  return { mchid: p.mchid, ...refundResourceBody(p) };
}

/** A refund resource's fields after its merchant's (direct: mchid; partner: sp_mchid and sub_mchid). */
export function refundResourceBody(p: Omit<WechatpayRefundParams, 'mchid'>): object {
  const status = p.refundStatus ?? 'SUCCESS';
  return {
    out_trade_no: p.outTradeNo,
    transaction_id: p.transactionId,
    out_refund_no: p.outRefundNo,
    refund_id: p.refundId,
    refund_status: status,
    ...(status === 'SUCCESS' ? { success_time: beijingRfc3339(new Date()) } : {}),
    user_received_account: '招商银行信用卡0403',
    amount: { total: p.total, refund: p.refund, payer_total: p.total, payer_refund: p.refund },
  };
}
