import { createDecipheriv, KeyObject, verify } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { DomainError } from '../../domain/domain-error';
import { isValidMinorAmount } from '../../domain/money';
import { ConfigurationError } from '../../platform/config/env-validation';
import { WechatpayConfig } from './wechatpay.config';
import { decodeStrictBase64, replayKeyOf } from '../signature-bytes';
import { headerValue, loadCertificate, loadPublicKey } from '../key-loading';
import { asDirectResource } from './wechatpay.partner';
import {
  Channel,
  Clock,
  MALFORMED,
  malformedNotification,
  RawDelivery,
  RefundNoticeStatus,
  VerifiedNotification,
} from '../../domain/notification';

const MAX_CLOCK_SKEW_MS = 5 * 60 * 1000;
const SIGNATURE_PROBE_PREFIX = 'WECHATPAY/SIGNTEST/';
const GCM_TAG_BYTES = 16;
const SIGNATURE_HEADERS = ['wechatpay-timestamp', 'wechatpay-nonce', 'wechatpay-signature', 'wechatpay-serial'];
const KEPT_HEADERS = [
  'wechatpay-serial',
  'wechatpay-signature',
  'wechatpay-timestamp',
  'wechatpay-nonce',
  'content-type',
];

const REFUND_EVENTS = new Set(['REFUND.SUCCESS', 'REFUND.ABNORMAL', 'REFUND.CLOSED']);
const REFUND_STATUSES: Record<string, RefundNoticeStatus | undefined> = {
  SUCCESS: RefundNoticeStatus.Succeeded,
  CLOSED: RefundNoticeStatus.Closed,
  ABNORMAL: RefundNoticeStatus.Abnormal,
};

interface EncryptedResource {
  algorithm: string;
  ciphertext: string;
  nonce: string;
  associated_data?: string;
}

/** The Wechatpay-* headers a sending is signed with, each present. */
interface SignatureHeaders {
  timestamp: string;
  nonce: string;
  signature: string;
  serial: string;
}

/** A platform key and the account it belongs to: the Wechatpay-Serial routes a notification to its account. */
export interface PlatformKey {
  key: KeyObject;
  account: WechatpayConfig;
  apiV3Key: Buffer;
}

/** WeChat Pay APIv3: SHA256withRSA over `timestamp\nnonce\nbody\n`, then AEAD_AES_256_GCM resource decryption. */
export class WechatpayVerifier {
  readonly channel = Channel.Wechatpay;
  readonly enabled: boolean;
  private readonly keysBySerial = new Map<string, PlatformKey>();

  constructor(
    accounts: WechatpayConfig[],
    private readonly now: Clock = Date.now,
  ) {
    this.enabled = accounts.length > 0;
    // An APIv2-only account has no platform key: an APIv3 notification for it is refused as from an unknown key.
    for (const account of accounts.filter((a) => a.apiV3Key !== undefined)) this.loadKeys(account);
  }

  private loadKeys(account: WechatpayConfig): void {
    const apiV3Key = Buffer.from(account.apiV3Key!, 'utf8');
    const add = (serial: string, key: KeyObject) => {
      const holder = this.keysBySerial.get(serial)?.account;
      if (holder && holder.mchid !== account.mchid) {
        throw new ConfigurationError(
          `Invalid configuration: platform key ${serial} is listed for mchid ${holder.mchid} and ${account.mchid}`,
        );
      }
      this.keysBySerial.set(serial, { key, account, apiV3Key });
    };
    if (account.publicKey) {
      add(account.publicKey.id, loadPublicKey(account.publicKey.path, 'WECHATPAY_PUBLIC_KEY_PATH'));
    }
    if (account.nextPublicKey) {
      if (account.nextPublicKey.id === account.publicKey?.id) {
        throw new ConfigurationError(
          `Invalid configuration: the next platform public key of mchid ${account.mchid} needs an id of its own (not ${account.publicKey.id})`,
        );
      }
      add(account.nextPublicKey.id, loadPublicKey(account.nextPublicKey.path, 'WECHATPAY_PUBLIC_KEY_PATH'));
    }
    for (const path of account.platformCertPaths) {
      const cert = loadCertificate(path, 'WECHATPAY_PLATFORM_CERT_PATHS');
      if (cert.validTo.getTime() < this.now()) {
        new Logger(WechatpayVerifier.name).warn(
          `platform certificate ${cert.serial} expired on ${cert.validTo.toISOString()}`,
        );
      }
      add(cert.serial, cert.publicKey);
    }
  }

  /** The serials (public key ids, certificate serials) of the platform keys, for the start-up log. */
  keyIds(): string[] {
    return [...this.keysBySerial.keys()];
  }

  verify(delivery: RawDelivery): VerifiedNotification {
    const contentType = headerValue(delivery.headers, 'content-type') ?? '';
    if (!contentType.toLowerCase().startsWith('application/json')) {
      throw new DomainError('MalformedRequest', 'WeChat Pay notifications must be application/json');
    }
    const sent = signatureHeaders(delivery);
    const signer = this.checkSignature(delivery.body, sent);
    const envelope = parseJsonObject(delivery.body.toString('utf8'), 'notification body');
    const eventType = requireString(envelope, 'event_type', 'notification');
    // A service provider's resource (sp_mchid, sub_mchid) is checked against its account, then read as a direct one.
    const { resource, subMerchantId } = asDirectResource(
      decrypt(requireResource(envelope), signer.apiV3Key),
      signer.account,
    );
    const base = {
      channel: this.channel,
      eventType,
      rawBody: delivery.body,
      headers: keptHeaders(delivery),
      replayKey: sendingKeyOf(sent),
      ...(subMerchantId === undefined ? {} : { subMerchantId }),
    };
    try {
      // Object.assign, not `{ ...base, ...fields }`: Node 20's V8 copies a spread followed by more
      // properties on a slow path, which cost about as much as the RSA check on every delivery.
      return Object.assign(base, readResource(eventType, resource, signer.account));
    } catch (error) {
      if (!(error instanceof DomainError) || error.code !== MALFORMED) throw error;
      const ids = { outTradeNo: resource.out_trade_no, transactionId: resource.transaction_id };
      return malformedNotification({ ...base, merchantId: signer.account.mchid }, ids, error.message);
    }
  }

  /**
   * Checks the Wechatpay-* signature headers over the body (a notification's, or an API answer's)
   * and returns the platform key that signed it, with its account.
   */
  verifySignature(delivery: RawDelivery): PlatformKey {
    return this.checkSignature(delivery.body, signatureHeaders(delivery));
  }

  /**
   * The APIv3 resource of a delivery verified when it came, decrypted again for an admin: with the
   * key of its Wechatpay-Serial's account, else with each account's APIv3 key (a key rotated out of
   * the platform's serials); the GCM tag tells which one sealed it. No signature or time check: the
   * bytes were checked on arrival. The plaintext is returned, never logged.
   */
  decryptKeptResource(delivery: RawDelivery): Record<string, unknown> {
    const envelope = parseJsonObject(delivery.body.toString('utf8'), 'notification body');
    const resource = requireResource(envelope);
    const serial = headerValue(delivery.headers, 'wechatpay-serial');
    const bySerial = serial === undefined ? undefined : this.keysBySerial.get(serial)?.apiV3Key;
    const keys = new Map<string, Buffer>();
    if (bySerial) keys.set(bySerial.toString('hex'), bySerial);
    for (const { apiV3Key } of this.keysBySerial.values()) keys.set(apiV3Key.toString('hex'), apiV3Key);
    for (const key of keys.values()) {
      try {
        return decrypt(resource, key);
      } catch (error) {
        if (!(error instanceof DomainError) || error.code !== 'Undecryptable') throw error;
      }
    }
    throw new DomainError('Undecryptable', 'the resource does not decrypt with any configured APIv3 key');
  }

  private checkSignature(body: Buffer, { timestamp, nonce, signature, serial }: SignatureHeaders): PlatformKey {
    if (signature.startsWith(SIGNATURE_PROBE_PREFIX)) {
      throw new DomainError('InvalidSignature', 'signature probe (WECHATPAY/SIGNTEST/) rejected as required');
    }
    if (!/^\d{1,12}$/.test(timestamp))
      throw new DomainError('MalformedRequest', 'Wechatpay-Timestamp must be Unix seconds');
    if (Math.abs(this.now() - Number(timestamp) * 1000) > MAX_CLOCK_SKEW_MS) {
      throw new DomainError('TimestampExpired', 'Wechatpay-Timestamp is more than 5 minutes off');
    }
    const platformKey = this.keysBySerial.get(serial);
    if (!platformKey)
      throw new DomainError('UnknownSigningKey', `no platform key or certificate with serial ${serial}`);
    const message = Buffer.concat([Buffer.from(`${timestamp}\n${nonce}\n`), body, Buffer.from('\n')]);
    if (!verify('sha256', message, platformKey.key, decodeStrictBase64(signature, 'Wechatpay-Signature'))) {
      throw new DomainError(
        'InvalidSignature',
        `Wechatpay-Signature does not verify with platform key ${serial} (of mchid ${platformKey.account.mchid})`,
      );
    }
    return platformKey;
  }
}

function decrypt(resource: EncryptedResource, apiV3Key: Buffer): Record<string, unknown> {
  if (resource.algorithm !== 'AEAD_AES_256_GCM') {
    throw new DomainError('Undecryptable', `unsupported resource algorithm ${resource.algorithm}`);
  }
  const sealed = Buffer.from(resource.ciphertext, 'base64');
  let plaintext: string;
  try {
    if (sealed.length <= GCM_TAG_BYTES) throw new Error('ciphertext too short');
    const decipher = createDecipheriv('aes-256-gcm', apiV3Key, Buffer.from(resource.nonce, 'utf8'));
    decipher.setAuthTag(sealed.subarray(sealed.length - GCM_TAG_BYTES));
    decipher.setAAD(Buffer.from(resource.associated_data ?? '', 'utf8'));
    plaintext = Buffer.concat([
      decipher.update(sealed.subarray(0, sealed.length - GCM_TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  } catch {
    throw new DomainError('Undecryptable', 'resource does not decrypt with the APIv3 key');
  }
  // A leading byte order mark is no part of the JSON (the partner sample of the SDKs' suites has one).
  return parseJsonObject(plaintext.replace(/^\uFEFF/, ''), 'decrypted resource');
}

/** The resource's fields by event type; a MalformedRequest for data that cannot apply. */
function readResource(eventType: string, resource: Record<string, unknown>, account: WechatpayConfig) {
  if (eventType === 'TRANSACTION.SUCCESS') return readTransaction(resource, account);
  if (REFUND_EVENTS.has(eventType)) return readRefund(resource, account);
  const mchid = optionalString(resource, 'mchid');
  if (mchid !== undefined) checkMerchant(mchid, account);
  return {
    paid: false,
    merchantId: account.mchid,
    outTradeNo: optionalString(resource, 'out_trade_no'),
    transactionId: optionalString(resource, 'transaction_id'),
  };
}

function readRefund(refund: Record<string, unknown>, account: WechatpayConfig) {
  const mchid = requireString(refund, 'mchid', 'refund');
  checkMerchant(mchid, account);
  const refundStatus = requireString(refund, 'refund_status', 'refund');
  const status = REFUND_STATUSES[refundStatus];
  if (!status) throw new DomainError('MalformedRequest', `unknown refund_status ${refundStatus}`);
  return {
    merchantId: mchid,
    paid: false,
    outTradeNo: requireString(refund, 'out_trade_no', 'refund'),
    transactionId: requireString(refund, 'transaction_id', 'refund'),
    refund: {
      refundNo: requireString(refund, 'out_refund_no', 'refund'),
      channelRefundId: requireString(refund, 'refund_id', 'refund'),
      status,
    },
  };
}

export function readTransaction(tx: Record<string, unknown>, account: WechatpayConfig) {
  const mchid = requireString(tx, 'mchid', 'transaction');
  checkMerchant(mchid, account);
  const appid = optionalString(tx, 'appid');
  if (account.appids.length > 0 && !account.appids.includes(appid ?? '')) {
    throw new DomainError('MerchantMismatch', `appid ${appid ?? '(none)'} is not an application of mchid ${mchid}`);
  }
  const amount = tx.amount as Record<string, unknown> | undefined;
  if (typeof amount !== 'object' || amount === null || !isValidMinorAmount(amount.total)) {
    throw new DomainError('MalformedRequest', 'transaction amount.total must be a positive integer (fen)');
  }
  const successTime = new Date(requireString(tx, 'success_time', 'transaction'));
  if (Number.isNaN(successTime.getTime())) throw new DomainError('MalformedRequest', 'success_time is not a date');
  return {
    merchantId: mchid,
    paid: requireString(tx, 'trade_state', 'transaction') === 'SUCCESS',
    outTradeNo: requireString(tx, 'out_trade_no', 'transaction'),
    transactionId: requireString(tx, 'transaction_id', 'transaction'),
    amount: amount.total,
    currency: readCurrency(amount.currency),
    paidAt: successTime,
  };
}

function readCurrency(currency: unknown): string {
  if (currency === undefined) return 'CNY';
  if (typeof currency === 'string' && /^[A-Z]{3}$/.test(currency)) return currency;
  throw new DomainError('MalformedRequest', 'transaction amount.currency must be an ISO 4217 code such as CNY');
}

/** The account that signed must be the one the payload names: a key of merchant B cannot speak for A. */
function checkMerchant(mchid: string, account: WechatpayConfig): void {
  if (mchid !== account.mchid) {
    throw new DomainError('MerchantMismatch', `mchid ${mchid} is not the merchant whose platform key signed`);
  }
}

/**
 * WeChat signs every sending afresh (a new timestamp and nonce): the same timestamp, nonce and
 * signature bytes twice is one sending delivered twice, by a proxy or by someone who captured it,
 * however its base64 was written.
 */
function sendingKeyOf({ timestamp, nonce, signature }: SignatureHeaders): string {
  return replayKeyOf(`${timestamp}\n${nonce}`, decodeStrictBase64(signature, 'Wechatpay-Signature'));
}

function signatureHeaders({ headers }: RawDelivery): SignatureHeaders {
  const [timestamp, nonce, signature, serial] = SIGNATURE_HEADERS.map((name) => {
    const value = headerValue(headers, name);
    if (!value) throw new DomainError('MalformedRequest', `missing header ${titleCase(name)}`);
    return value;
  });
  return { timestamp, nonce, signature, serial };
}

/** `wechatpay-serial` → `Wechatpay-Serial`, as the platform spells it. */
function titleCase(header: string): string {
  return header.replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => dash + letter.toUpperCase());
}

function keptHeaders({ headers }: RawDelivery): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = headerValue(headers, name);
    if (value !== undefined) kept[name] = value;
  }
  return kept;
}

function parseJsonObject(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new DomainError('MalformedRequest', `${what} is not valid JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new DomainError('MalformedRequest', `${what} must be a JSON object`);
  }
  return value as Record<string, unknown>;
}

function requireString(obj: Record<string, unknown>, field: string, what: string): string {
  const value = obj[field];
  if (typeof value !== 'string' || value === '' || value.length > 64) {
    throw new DomainError(
      'MalformedRequest',
      `${what} field ${field} must be a non-empty string of at most 64 characters`,
    );
  }
  return value;
}

function optionalString(obj: Record<string, unknown>, field: string): string | undefined {
  return obj[field] === undefined ? undefined : requireString(obj, field, 'resource');
}

function requireResource(envelope: Record<string, unknown>): EncryptedResource {
  const resource = envelope.resource;
  if (typeof resource !== 'object' || resource === null) {
    throw new DomainError('MalformedRequest', 'notification field resource must be an object');
  }
  const r = resource as Record<string, unknown>;
  for (const field of ['algorithm', 'ciphertext', 'nonce']) {
    if (typeof r[field] !== 'string') throw new DomainError('MalformedRequest', `resource.${field} must be a string`);
  }
  if (r.associated_data !== undefined && typeof r.associated_data !== 'string') {
    throw new DomainError('MalformedRequest', 'resource.associated_data must be a string');
  }
  return r as unknown as EncryptedResource;
}
