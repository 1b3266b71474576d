import { DomainError } from '../../domain/domain-error';
import { isValidMinorAmount } from '../../domain/money';
import {
  Channel,
  Clock,
  MALFORMED,
  malformedNotification,
  MAX_IDENTIFIER_LENGTH,
  RawDelivery,
  RefundNoticeStatus,
  VerifiedNotification,
} from '../../domain/notification';
import { headerValue } from '../key-loading';
import { UnionpayCertificates } from './unionpay.certificates';
import { UnionpayAccount } from './unionpay.config';
import { parseForm, parseTxnTime, signatureHolds, signedString } from './unionpay.message';
import { replayKeyOf } from '../signature-bytes';

const FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded';

/** respCode 00 is success; A6 is success with a deficiency the merchant settles with UnionPay apart. */
export const SUCCESS_RESP_CODES = new Set(['00', 'A6']);
export const TxnType = { Query: '00', Consume: '01', Refund: '04', FileTransfer: '76' } as const;

/**
 * How old a notification's txnTime may be. UnionPay's retries end within the day of the
 * transaction; a payment may come up to the order's pay timeout after its txnTime, and a refund's
 * result after its own request: seven days leaves room for both.
 */
const MAX_TXN_AGE_MS = 7 * 24 * 3600 * 1000;
const MAX_CLOCK_SKEW_MS = 10 * 60 * 1000;

/** ISO 4217 numeric codes UnionPay writes in currencyCode, as the service's letters. */
const CURRENCIES: Record<string, string> = { '156': 'CNY' };

/**
 * UnionPay acp 5.1.0 back notifications (backUrl): a form post signed with signMethod 01 by the
 * certificate it carries in signPubKeyCert, which must chain to UnionPay's configured root.
 */
export class UnionpayVerifier {
  readonly channel = Channel.Unionpay;
  readonly enabled: boolean;
  private readonly merIds: Set<string>;

  constructor(
    accounts: UnionpayAccount[],
    private readonly certificates: UnionpayCertificates | undefined,
    private readonly now: Clock = Date.now,
  ) {
    this.merIds = new Set(accounts.map((a) => a.merId));
    this.enabled = accounts.length > 0 && certificates !== undefined;
  }

  merchantIds(): string[] {
    return [...this.merIds];
  }

  keyIds(): string[] {
    return this.certificates?.ids() ?? [];
  }

  verify(delivery: RawDelivery): VerifiedNotification {
    const contentType = headerValue(delivery.headers, 'content-type') ?? '';
    if (!contentType.toLowerCase().startsWith(FORM_CONTENT_TYPE)) {
      throw new DomainError('MalformedRequest', `UnionPay notifications must be ${FORM_CONTENT_TYPE}`);
    }
    const fields = parseForm(delivery.body);
    const merId = this.verifyFields(fields);
    this.checkFresh(fields);
    const base = {
      channel: this.channel,
      merchantId: merId,
      rawBody: delivery.body,
      headers: { 'content-type': contentType },
      replayKey: sendingKeyOf(fields),
    };
    try {
      return Object.assign(base, fields.get('txnType') === TxnType.Refund ? readRefund(fields) : readConsume(fields));
    } catch (error) {
      if (!(error instanceof DomainError) || error.code !== MALFORMED) throw error;
      const ids = { outTradeNo: fields.get('orderId'), transactionId: fields.get('queryId') };
      return malformedNotification({ ...base, eventType: eventTypeOf(fields) }, ids, error.message);
    }
  }

  /**
   * Checks a message (a notification or a gateway answer): version, signMethod, the certificate's
   * chain, the signature, and that it is about one of our merchants. Returns its merId.
   */
  verifyFields(fields: ReadonlyMap<string, string>, expectedMerId?: string): string {
    const encoding = (fields.get('encoding') ?? 'utf-8').toLowerCase();
    if (encoding !== 'utf-8' && encoding !== 'utf8') {
      throw new DomainError('MalformedRequest', `encoding ${encoding.slice(0, 16)} is not supported; use UTF-8`);
    }
    const version = fields.get('version');
    if (version !== '5.1.0') throw new DomainError('MalformedRequest', `version ${version ?? '(none)'} is not 5.1.0`);
    const signMethod = fields.get('signMethod');
    if (signMethod !== '01') {
      throw new DomainError('InvalidSignature', `signMethod ${signMethod ?? '(none)'} is not accepted, only 01`);
    }
    const pem = fields.get('signPubKeyCert');
    if (!pem || !fields.get('signature')) {
      throw new DomainError('MalformedRequest', 'signature and signPubKeyCert are required');
    }
    if (!this.certificates) throw new DomainError('ChannelDisabled', 'UnionPay is not configured');
    const publicKey = this.certificates.publicKeyOf(pem);
    if (!signatureHolds(fields, publicKey)) {
      throw new DomainError('InvalidSignature', 'signature does not verify with the signPubKeyCert it came with');
    }
    const merId = fields.get('merId') ?? '';
    if (!this.merIds.has(merId) || (expectedMerId !== undefined && merId !== expectedMerId)) {
      throw new DomainError('MerchantMismatch', `merId ${merId.slice(0, 32) || '(none)'} is not one of our merchants`);
    }
    return merId;
  }

  /**
   * UnionPay sends a back notification again, unchanged, until it is acked, for a few hours at most;
   * a notification whose txnTime is far older than that is a capture replayed, never a retry.
   */
  private checkFresh(fields: ReadonlyMap<string, string>): void {
    const age = this.now() - parseTxnTime(fields.get('txnTime') ?? '').getTime();
    if (age > MAX_TXN_AGE_MS || age < -MAX_CLOCK_SKEW_MS) {
      throw new DomainError('TimestampExpired', 'txnTime is outside the window in which UnionPay notifies');
    }
  }

  /** The clock the certificates are checked at; the channel's answers use the same. */
  get clock(): Clock {
    return this.now;
  }
}

/** The same signed message again (UnionPay's retries are byte-identical): one key, however its base64 is written. */
function sendingKeyOf(fields: ReadonlyMap<string, string>): string {
  return replayKeyOf(signedString(fields), Buffer.from(fields.get('signature') ?? '', 'base64'));
}

function eventTypeOf(fields: ReadonlyMap<string, string>): string {
  const txnType = fields.get('txnType') ?? '';
  const name = txnType === TxnType.Consume ? 'CONSUME' : txnType === TxnType.Refund ? 'REFUND' : `TXN_${txnType}`;
  return `${name}/${fields.get('respCode') ?? ''}`.slice(0, MAX_IDENTIFIER_LENGTH);
}

/** A consumption (txnType 01): pays when respCode says success. */
function readConsume(fields: ReadonlyMap<string, string>) {
  const txnType = fields.get('txnType');
  if (txnType !== TxnType.Consume) {
    throw new DomainError('MalformedRequest', `txnType ${txnType ?? '(none)'} is neither a consumption nor a refund`);
  }
  return {
    eventType: eventTypeOf(fields),
    paid: SUCCESS_RESP_CODES.has(fields.get('respCode') ?? ''),
    outTradeNo: requireField(fields, 'orderId'),
    transactionId: requireField(fields, 'queryId'),
    amount: readAmount(fields),
    currency: readCurrency(fields),
    paidAt: parseTxnTime(fields.get('txnTime') ?? ''),
  };
}

/**
 * A refund's result (txnType 04): its orderId is our refund number, its origQryId the refunded
 * payment's queryId. It pays nothing.
 */
function readRefund(fields: ReadonlyMap<string, string>) {
  const succeeded = SUCCESS_RESP_CODES.has(fields.get('respCode') ?? '');
  return {
    eventType: eventTypeOf(fields),
    paid: false,
    transactionId: requireField(fields, 'origQryId'),
    refund: {
      refundNo: requireField(fields, 'orderId'),
      channelRefundId: fields.get('queryId') || undefined,
      status: succeeded ? RefundNoticeStatus.Succeeded : RefundNoticeStatus.Closed,
    },
  };
}

export function readAmount(fields: ReadonlyMap<string, string>, name = 'txnAmt'): number {
  const text = fields.get(name) ?? '';
  const amount = /^[1-9]\d{0,15}$/.test(text) ? Number(text) : NaN;
  if (!isValidMinorAmount(amount)) throw new DomainError('MalformedRequest', `${name} is not an amount in fen`);
  return amount;
}

export function readCurrency(fields: ReadonlyMap<string, string>): string {
  const code = fields.get('currencyCode') ?? '';
  const currency = CURRENCIES[code];
  if (!currency) throw new DomainError('MalformedRequest', `currencyCode ${code.slice(0, 8)} is not supported`);
  return currency;
}

export function requireField(fields: ReadonlyMap<string, string>, name: string): string {
  const value = fields.get(name);
  if (!value || value.length > MAX_IDENTIFIER_LENGTH) {
    throw new DomainError('MalformedRequest', `field ${name} must be 1 to ${MAX_IDENTIFIER_LENGTH} characters`);
  }
  return value;
}
