import { createHash, KeyObject, verify } from 'node:crypto';
import { DomainError } from '../../domain/domain-error';
import { parseDecimalAmount } from '../../domain/money';
import { loadAlipayCertMode } from './alipay.certificates';
import { AlipayConfig, DEFAULT_NOTIFY_MAX_AGE_SECONDS } from './alipay.config';
import { headerValue, loadPublicKey } from '../key-loading';
import { decodeStrictBase64, replayKeyOf } from '../signature-bytes';
import {
  Channel,
  Clock,
  MALFORMED,
  malformedNotification,
  RawDelivery,
  RefundNoticeStatus,
  VerifiedNotification,
} from '../../domain/notification';

const PAID_STATUSES = new Set(['TRADE_SUCCESS', 'TRADE_FINISHED']);
const UNPAID_STATUSES = new Set(['WAIT_BUYER_PAY', 'TRADE_CLOSED']);
/** Alipay's timestamps are Beijing time without a zone. */
const ALIPAY_TIME = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})$/;
const FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded';
/** Clocks disagree a little: a notify_time this far ahead of ours is still taken as now. */
const MAX_CLOCK_SKEW_MS = 5 * 60 * 1000;

/** A certificate-mode notification or answer names the certificate that signed it; it is not signed itself. */
const CERT_SN_PARAMETER = 'alipay_cert_sn';

/** One key an app's notifications may be signed with. */
export interface AlipayKey {
  publicKey: KeyObject;
  /** The certificate's SN in certificate mode; public keys have no id. */
  sn?: string;
  /** Names the key in a refusal: `SN …`, or the SHA-256 of a bare public key. */
  name: string;
  /** A certificate's validity, checked at each use; a bare public key has none. */
  validFrom?: Date;
  validTo?: Date;
}

function validAt(key: AlipayKey, now: number): boolean {
  return (key.validFrom?.getTime() ?? -Infinity) <= now && now <= (key.validTo?.getTime() ?? Infinity);
}

/** An app's Alipay keys, loaded once; notifications are routed to their app by app_id. */
export interface AlipayApp {
  account: AlipayConfig;
  /** The public key, or each configured Alipay certificate's (several during a rotation). */
  keys: AlipayKey[];
  /** Certificate mode: what API requests carry (app_cert_sn needs the app certificate). */
  certMode?: { rootCertSn: string; appCertSn?: string };
}

/** Alipay asynchronous notification: RSA2 (SHA256withRSA) over the sorted, decoded parameters. */
export class AlipayVerifier {
  readonly channel = Channel.Alipay;
  readonly enabled: boolean;
  private readonly apps = new Map<string, AlipayApp>();

  private readonly notifyMaxAgeMs: number;

  constructor(
    accounts: AlipayConfig[],
    { notifyMaxAgeSeconds = DEFAULT_NOTIFY_MAX_AGE_SECONDS }: { notifyMaxAgeSeconds?: number } = {},
    private readonly now: Clock = Date.now,
  ) {
    this.notifyMaxAgeMs = notifyMaxAgeSeconds * 1000;
    this.enabled = accounts.length > 0;
    for (const account of accounts) this.apps.set(account.appId, loadApp(account, new Date(now())));
  }

  /** The app ids, for the start-up log. */
  appIds(): string[] {
    return [...this.apps.keys()];
  }

  /** Certificate mode's SNs, for the start line: each Alipay certificate's, the app's, the root bundle's. */
  certSns(): string[] {
    const sns = [...this.apps.values()].flatMap((app) => [
      ...app.keys.flatMap((key) => (key.sn ? [`alipay_cert_sn=${key.sn}`] : [])),
      ...(app.certMode?.appCertSn ? [`app_cert_sn=${app.certMode.appCertSn}`] : []),
      ...(app.certMode ? [`alipay_root_cert_sn=${app.certMode.rootCertSn}`] : []),
    ]);
    return [...new Set(sns)];
  }

  /** What a certificate-mode app's API requests carry; undefined in public key mode. */
  requestCertSns(appId: string): { app_cert_sn?: string; alipay_root_cert_sn: string } | undefined {
    const certMode = this.apps.get(appId)?.certMode;
    if (!certMode) return undefined;
    return { app_cert_sn: certMode.appCertSn, alipay_root_cert_sn: certMode.rootCertSn };
  }

  verify(delivery: RawDelivery): VerifiedNotification {
    const contentType = headerValue(delivery.headers, 'content-type') ?? '';
    if (!contentType.toLowerCase().startsWith(FORM_CONTENT_TYPE)) {
      throw new DomainError('MalformedRequest', `Alipay notifications must be ${FORM_CONTENT_TYPE}`);
    }
    const params = parseForm(delivery.body);
    const app = this.verifySignature(params);
    checkSeller(params, app.account);
    checkAuthorizedApp(params, app.account);
    this.checkNotifyTime(params);
    const base = {
      channel: this.channel,
      merchantId: app.account.appId,
      rawBody: signedPartOf(delivery.body),
      headers: { 'content-type': contentType },
      replayKey: sendingKeyOf(params),
    };
    try {
      return Object.assign(
        base,
        params.get('out_biz_no') && params.get('refund_fee') ? readRefund(params) : readTrade(params),
      );
    } catch (error) {
      if (!(error instanceof DomainError) || error.code !== MALFORMED) throw error;
      const ids = { outTradeNo: params.get('out_trade_no'), transactionId: params.get('trade_no') };
      return malformedNotification({ ...base, eventType: params.get('trade_status') ?? '' }, ids, error.message);
    }
  }

  /**
   * A signed notification replayed after Alipay stopped retrying, or dated ahead of our clock, is
   * not a delivery Alipay is making now: refused, so a captured notification cannot be replayed forever.
   */
  private checkNotifyTime(params: Map<string, string>): void {
    const sentAt = parseAlipayTime(requireParam(params, 'notify_time')).getTime();
    const now = this.now();
    if (sentAt > now + MAX_CLOCK_SKEW_MS) {
      throw new DomainError('TimestampExpired', 'notify_time is in the future');
    }
    if (now - sentAt > this.notifyMaxAgeMs) {
      throw new DomainError(
        'TimestampExpired',
        `notify_time is more than ${this.notifyMaxAgeMs / 1000} s old (ALIPAY_NOTIFY_MAX_AGE_SECONDS)`,
      );
    }
  }

  /**
   * An openapi response to `appId`'s request: `sign` covers the exact text of the response object. In
   * certificate mode the answer's alipay_cert_sn names the certificate; an SN not configured verifies nothing.
   */
  verifyResponse(appId: string, signedText: string, sign: string, certSn?: string): boolean {
    const app = this.apps.get(appId);
    if (!app) return false;
    const named = app.certMode && certSn !== undefined ? app.keys.filter((key) => key.sn === certSn) : app.keys;
    const keys = named.filter((key) => validAt(key, this.now()));
    const signature = Buffer.from(sign, 'base64');
    return keys.some((key) => verify('sha256', Buffer.from(signedText, 'utf8'), key.publicKey, signature));
  }

  private appOf(params: Map<string, string>): AlipayApp {
    const appId = params.get('app_id');
    const app = appId === undefined ? undefined : this.apps.get(appId);
    if (!app) throw new DomainError('MerchantMismatch', `app_id ${appId ?? '(none)'} is not one of our applications`);
    return app;
  }

  /** Checks `sign` with the public key of the app the parameters name; returns that app. */
  verifySignature(params: Map<string, string>): AlipayApp {
    const sign = params.get('sign');
    if (!sign) throw new DomainError('MalformedRequest', 'missing parameter sign');
    const signType = params.get('sign_type') ?? 'RSA2';
    if (signType !== 'RSA2')
      throw new DomainError('InvalidSignature', `sign_type ${signType} is not accepted, only RSA2`);
    const app = this.appOf(params);
    const signature = decodeStrictBase64(sign, 'sign');
    const certSn = (app.certMode && params.get(CERT_SN_PARAMETER)) || undefined;
    const now = this.now();
    if (certSn === undefined) {
      const content = Buffer.from(signedContent(params), 'utf8');
      const keys = app.keys.filter((key) => validAt(key, now));
      if (keys.some((key) => verify('sha256', content, key.publicKey, signature))) return app;
      throw new DomainError(
        'InvalidSignature',
        `sign does not verify with the Alipay ${app.certMode ? 'certificates' : 'public key'} of app_id ${app.account.appId} (${app.keys.map((k) => k.name).join(', ')})`,
      );
    }
    const key = app.keys.find((k) => k.sn === certSn && validAt(k, now));
    if (!key) {
      throw new DomainError(
        'InvalidSignature',
        `alipay_cert_sn ${certSn.slice(0, 64)} is not one of the Alipay certificates of app_id ${app.account.appId} valid now`,
      );
    }
    // The SN is left out of the signed string; a signature that covers it too is Alipay's word all the same.
    const contents = [signedContent(params, ['sign', 'sign_type', CERT_SN_PARAMETER]), signedContent(params)];
    if (contents.some((content) => verify('sha256', Buffer.from(content, 'utf8'), key.publicKey, signature))) {
      return app;
    }
    throw new DomainError(
      'InvalidSignature',
      `sign does not verify with the Alipay certificate ${key.name} of app_id ${app.account.appId}`,
    );
  }
}

/** An app's keys, read and (in certificate mode) checked at `now`: a refused certificate stops the start. */
function loadApp(account: AlipayConfig, now: Date): AlipayApp {
  if (account.certificates) {
    const certMode = loadAlipayCertMode(account.certificates, now);
    return {
      account,
      keys: certMode.alipayCerts.map(({ publicKey, sn, validFrom, validTo }) => ({
        publicKey,
        sn,
        name: `SN ${sn}`,
        validFrom,
        validTo,
      })),
      certMode: { rootCertSn: certMode.rootCertSn, appCertSn: certMode.appCertSn },
    };
  }
  const paths = [account.publicKeyPath ?? '', ...(account.nextPublicKeyPath ? [account.nextPublicKeyPath] : [])];
  const keys = paths.map((path) => {
    const publicKey = loadPublicKey(path, 'ALIPAY_PUBLIC_KEY_PATH');
    return { publicKey, name: `SHA-256 ${fingerprintOf(publicKey)}` };
  });
  return { account, keys };
}

/**
 * Alipay's signature is the same for every sending of a notification, and leaves empty-valued
 * parameters out: the same signed content and signature again, padded or not, is a replay. So is
 * the same one with its (unsigned) alipay_cert_sn left out.
 */
function sendingKeyOf(params: Map<string, string>): string {
  const signed = signedContent(params, ['sign', 'sign_type', CERT_SN_PARAMETER]);
  return replayKeyOf(signed, decodeStrictBase64(params.get('sign') ?? '', 'sign'));
}

/**
 * The form as received, less its empty-valued parameters: those are not signed, so anyone can add
 * them (up to the body limit) to a captured notification; what is kept is what the signature covers.
 */
function signedPartOf(body: Buffer): Buffer {
  const kept = body
    .toString('latin1')
    .split('&')
    .filter((pair) => !/^[^=]*=?$/.test(pair));
  return Buffer.from(kept.join('&'), 'latin1');
}

/**
 * `auth_app_id`, the app the merchant authorised, is the account's own app whenever Alipay sends
 * it: another of our apps is no more this account's than a stranger's.
 */
function checkAuthorizedApp(params: Map<string, string>, account: AlipayConfig): void {
  const authAppId = params.get('auth_app_id');
  if (authAppId && authAppId !== account.appId) {
    throw new DomainError(
      'MerchantMismatch',
      `auth_app_id ${authAppId.slice(0, 32)} is not the app of this notification`,
    );
  }
}

function checkSeller(params: Map<string, string>, account: AlipayConfig): void {
  if (account.sellerId && params.get('seller_id') !== account.sellerId) {
    throw new DomainError('MerchantMismatch', `seller_id ${params.get('seller_id') ?? '(none)'} is not this seller`);
  }
}

/**
 * Non-empty parameters but `excluded`, sorted by key, `k=v` joined with `&`. Notifications exclude
 * sign and sign_type; requests to the gateway exclude only sign.
 */
export function signedContent(params: Map<string, string>, excluded = ['sign', 'sign_type']): string {
  return [...params.entries()]
    .filter(([key, value]) => !excluded.includes(key) && value !== '')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
}

export function parseForm(body: Buffer): Map<string, string> {
  const text = body.toString('latin1');
  // A form body is percent-encoded ASCII; raw bytes beyond that mean a client that did not encode it.
  if (!/^[\x20-\x7e]+$/.test(text))
    throw new DomainError('MalformedRequest', 'form body must be non-empty, percent-encoded ASCII');
  const params = new Map<string, string>();
  for (const [key, value] of new URLSearchParams(text)) {
    if (params.has(key)) throw new DomainError('MalformedRequest', `parameter ${key} appears twice`);
    params.set(key, value);
  }
  const charset = (params.get('charset') ?? 'utf-8').toLowerCase();
  if (charset !== 'utf-8' && charset !== 'utf8') {
    throw new DomainError(
      'MalformedRequest',
      `charset ${charset} is not supported; configure the Alipay app for utf-8`,
    );
  }
  return params;
}

function readTrade(params: Map<string, string>) {
  const eventType = params.get('trade_status');
  if (!eventType) throw new DomainError('MalformedRequest', 'missing parameter trade_status');
  if (!PAID_STATUSES.has(eventType) && !UNPAID_STATUSES.has(eventType)) {
    throw new DomainError('MalformedRequest', `unknown trade_status ${eventType}`);
  }
  const totalAmount = params.get('total_amount');
  return {
    eventType,
    paid: PAID_STATUSES.has(eventType),
    outTradeNo: requireParam(params, 'out_trade_no'),
    transactionId: requireParam(params, 'trade_no'),
    amount: parseDecimalAmount(totalAmount ?? '', 'total_amount'),
    currency: 'CNY',
    paidAt: parseAlipayTime(params.get('gmt_payment') || requireParam(params, 'notify_time')),
  };
}

/**
 * A refund notification: Alipay sends trade_status_sync again, with the refund request's number in
 * out_biz_no and the trade's cumulative refund_fee. It pays nothing.
 */
function readRefund(params: Map<string, string>) {
  return {
    eventType: `REFUND/${requireParam(params, 'trade_status')}`,
    paid: false,
    outTradeNo: requireParam(params, 'out_trade_no'),
    transactionId: requireParam(params, 'trade_no'),
    refund: { refundNo: requireParam(params, 'out_biz_no'), status: RefundNoticeStatus.Succeeded },
  };
}

function requireParam(params: Map<string, string>, name: string): string {
  const value = params.get(name);
  if (!value || value.length > 64)
    throw new DomainError('MalformedRequest', `parameter ${name} must be 1 to 64 characters`);
  return value;
}

export function parseAlipayTime(text: string): Date {
  const match = ALIPAY_TIME.exec(text);
  const date = match ? new Date(`${match[1]}T${match[2]}+08:00`) : new Date(NaN);
  if (Number.isNaN(date.getTime()))
    throw new DomainError('MalformedRequest', `time ${text} is not yyyy-MM-dd HH:mm:ss`);
  return date;
}

/** The first 16 hex digits of the SHA-256 of the key's DER (SPKI): `openssl pkey -pubin -outform DER | sha256sum` shows it. */
export function fingerprintOf(publicKey: KeyObject): string {
  return createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 16);
}
