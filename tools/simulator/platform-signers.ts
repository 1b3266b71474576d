/**
 * Real signed deliveries as WeChat Pay (APIv3) and Alipay send them: real RSA keys, real signatures,
 * real AES-256-GCM encryption. Shared by the verifiers' unit specs, the e2e suites and the benchmark,
 * so nothing here imports the code under test: the signing side is written from the platforms' docs.
 */
import 'reflect-metadata'; // @peculiar/x509 resolves its services through tsyringe, which needs the Reflect polyfill
import {
  createCipheriv,
  createPublicKey,
  generateKeyPairSync,
  KeyObject,
  randomBytes,
  randomInt,
  randomUUID,
  sign,
  webcrypto,
} from 'node:crypto';
import * as x509 from '@peculiar/x509';

// Node's webcrypto is the standard Web Crypto API; the casts only bridge Node's and the DOM's type names.
x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

export interface RsaKeyPair {
  privateKey: KeyObject;
  publicKeyPem: string;
  privateKeyPem: string;
}

export function generateRsaKeyPair(): RsaKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privateKey,
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

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

// ---------------------------------------------------------------------------------------------- WeChat Pay

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

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function randomAlphanumeric(length: number): string {
  return Array.from({ length }, () => ALPHANUMERIC[randomInt(ALPHANUMERIC.length)]).join('');
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
  const status = p.refundStatus ?? 'SUCCESS';
  return {
    mchid: p.mchid,
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

// ------------------------------------------------------------------------------------------------- Alipay

/**
 * The application/x-www-form-urlencoded body Alipay posts. The signed content is every parameter but
 * sign and sign_type with a non-empty value, sorted by key, joined raw (not encoded) as `k=v&k=v`.
 * RSA2 is SHA256withRSA; RSA (legacy, which the verifier must refuse) is SHA1withRSA.
 */
export function alipayDelivery(
  privateKey: KeyObject,
  params: Record<string, string>,
  options: { signType?: 'RSA2' | 'RSA' } = {},
): string {
  const signType = options.signType ?? 'RSA2';
  const content = Object.entries(params)
    .filter(([key, value]) => key !== 'sign' && key !== 'sign_type' && value !== '')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
  const signature = sign(signType === 'RSA2' ? 'sha256' : 'sha1', Buffer.from(content, 'utf8'), privateKey);
  const all = { ...params, sign: signature.toString('base64'), sign_type: signType };
  return Object.entries(all)
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`)
    .join('&');
}

export interface AlipayTradeParams {
  appId: string;
  outTradeNo: string;
  tradeNo: string;
  /** Yuan as Alipay writes it, e.g. "88.88". */
  totalAmount: string;
  tradeStatus?: string;
  sellerId?: string;
  /** When the payment happened; defaults to now. */
  paidAt?: Date;
  /** notify_time, when this delivery is sent; defaults to a second after paidAt. */
  notifiedAt?: Date;
}

/** A trade_status_sync notification's parameters, shaped like the ones Alipay sends. */
export function alipayTradeParams(p: AlipayTradeParams): Record<string, string> {
  const paidAt = p.paidAt ?? new Date();
  return {
    notify_time: beijingDateTime(p.notifiedAt ?? new Date(paidAt.getTime() + 1000)),
    notify_type: 'trade_status_sync',
    notify_id: `${beijingDateTime(paidAt).replace(/\D/g, '').slice(0, 8)}00222${randomDigits(17)}`,
    charset: 'utf-8',
    version: '1.0',
    app_id: p.appId,
    auth_app_id: p.appId,
    trade_no: p.tradeNo,
    out_trade_no: p.outTradeNo,
    trade_status: p.tradeStatus ?? 'TRADE_SUCCESS',
    total_amount: p.totalAmount,
    receipt_amount: p.totalAmount,
    buyer_id: `2088${randomDigits(12)}`,
    seller_id: p.sellerId ?? '2088531891668739',
    gmt_create: beijingDateTime(new Date(paidAt.getTime() - 2000)),
    gmt_payment: beijingDateTime(paidAt),
    subject: '测试商品 订单支付',
  };
}

export interface AlipayRefundNotifyParams extends AlipayTradeParams {
  /** The refund request's out_request_no, sent back as out_biz_no. */
  outBizNo: string;
  /** Yuan refunded on the trade so far, e.g. "88.88". */
  refundFee: string;
}

/**
 * The trade_status_sync notification Alipay sends after a refund: out_biz_no and refund_fee set,
 * trade_status TRADE_CLOSED after a full refund (TRADE_SUCCESS after a partial one).
 */
export function alipayRefundParams(p: AlipayRefundNotifyParams): Record<string, string> {
  const refundedAt = new Date();
  return {
    ...alipayTradeParams({ tradeStatus: 'TRADE_CLOSED', ...p }),
    out_biz_no: p.outBizNo,
    refund_fee: p.refundFee,
    gmt_refund: `${beijingDateTime(refundedAt)}.${String(refundedAt.getMilliseconds()).padStart(3, '0')}`,
    gmt_close: beijingDateTime(refundedAt),
  };
}

/** 8888 fen ⇔ '88.88', as Alipay writes amounts, by string and integer operations only. */
export function yuan(fen: number): string {
  return `${Math.floor(fen / 100)}.${String(fen % 100).padStart(2, '0')}`;
}

// -------------------------------------------------------------------------------------------------- time

const BEIJING_OFFSET_MS = 8 * 3600 * 1000;

/** 'YYYY-MM-DD HH:mm:ss' in Beijing time, as Alipay writes its timestamps. */
export function beijingDateTime(at: Date): string {
  return new Date(at.getTime() + BEIJING_OFFSET_MS).toISOString().slice(0, 19).replace('T', ' ');
}

/** RFC 3339 with +08:00, as WeChat Pay writes its timestamps. */
export function beijingRfc3339(at: Date): string {
  return `${new Date(at.getTime() + BEIJING_OFFSET_MS).toISOString().slice(0, 19)}+08:00`;
}

function randomDigits(length: number): string {
  return randomBytes(length).reduce((text, byte) => text + (byte % 10), '');
}
