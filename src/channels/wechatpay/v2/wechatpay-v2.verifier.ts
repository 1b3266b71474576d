import { DomainError } from '../../../domain/domain-error';
import { isValidMinorAmount } from '../../../domain/money';
import {
  Channel,
  Clock,
  MALFORMED,
  malformedNotification,
  RawDelivery,
  RefundNoticeStatus,
  VerifiedNotification,
} from '../../../domain/notification';
import { headerValue } from '../../key-loading';
import { WechatpayConfig } from '../wechatpay.config';
import { checkSubAppid, v2SubMerchant } from '../wechatpay.partner';
import { decryptReqInfo, readSignType, v2SignatureHolds } from './wechatpay-v2.sign';
import { readV2Xml } from './wechatpay-v2.xml';
import { replayKeyOf } from '../../signature-bytes';

const SUCCESS = 'SUCCESS';
const REFUND_STATUSES: Record<string, RefundNoticeStatus | undefined> = {
  SUCCESS: RefundNoticeStatus.Succeeded,
  REFUNDCLOSE: RefundNoticeStatus.Closed,
  CHANGE: RefundNoticeStatus.Abnormal,
};
/** Beijing time (UTC+8, no daylight saving), in which v2 writes `time_end` and `success_time`. */
const BEIJING_OFFSET_MS = 8 * 60 * 60 * 1000;
/**
 * How old a payment result's `time_end` may be. WeChat notifies at once and retries for about 24 h
 * (15 s … 6 h apart) until acked; an older one is a captured notification replayed, never a retry.
 */
export const V2_MAX_TIME_END_AGE_MS = 26 * 3600 * 1000;
/** Clocks disagree a little: a `time_end` this far ahead of ours is still taken as now. */
const MAX_CLOCK_SKEW_MS = 5 * 60 * 1000;

/** An account whose APIv2 key is configured: only those are heard at the v2 endpoint. */
type V2Account = WechatpayConfig & { apiV2Key: string };

/**
 * WeChat Pay APIv2 notifications (XML): a payment result signed with the merchant's API key (MD5
 * or HMAC-SHA256), or a refund result whose `req_info` is encrypted with MD5(API key) and unsigned.
 * Every check runs here, before anything is written.
 */
export class WechatpayV2Verifier {
  private readonly accounts = new Map<string, V2Account>();

  constructor(
    accounts: WechatpayConfig[],
    private readonly now: Clock = Date.now,
  ) {
    for (const account of accounts) {
      if (account.apiV2Key !== undefined) this.accounts.set(account.mchid, account as V2Account);
    }
  }

  get enabled(): boolean {
    return this.accounts.size > 0;
  }

  verify(delivery: RawDelivery): VerifiedNotification {
    const fields = readV2Xml(delivery.body, 'xml', 'notification');
    if (fields.return_code !== SUCCESS) {
      throw new DomainError(
        'MalformedRequest',
        `return_code is ${fields.return_code ?? '(none)'}, not SUCCESS: the notification carries no result (${fields.return_msg ?? 'no return_msg'})`,
      );
    }
    const account = this.accountOf(fields);
    const base = {
      channel: Channel.Wechatpay,
      merchantId: account.mchid,
      rawBody: delivery.body,
      headers: kept(delivery),
    };
    if (fields.req_info !== undefined) {
      // A provider's refund notice names its sub-merchant as its payments do.
      const subMerchant = v2SubMerchant(fields.sub_mch_id || undefined, account);
      const refund = Object.assign(base, { replayKey: refundNoticeKeyOf(fields) }, readRefund(fields, account));
      return subMerchant === undefined ? refund : Object.assign(refund, { subMerchantId: subMerchant });
    }

    const signType = readSignType(fields.sign_type);
    if (!signType)
      throw new DomainError('InvalidSignature', `sign_type ${fields.sign_type} is neither MD5 nor HMAC-SHA256`);
    if (!fields.sign) throw new DomainError('InvalidSignature', 'the notification carries no sign');
    if (!v2SignatureHolds(fields, account.apiV2Key, signType)) {
      throw new DomainError(
        'InvalidSignature',
        `sign does not verify (${signType}) with the APIv2 key of mch_id ${account.mchid}`,
      );
    }
    checkAppid(fields, account);
    const subMerchantId = v2SubMerchant(fields.sub_mch_id || undefined, account);
    if (subMerchantId !== undefined) checkSubAppid(fields.sub_appid, subMerchantId, account);
    this.checkFresh(fields.time_end);
    Object.assign(base, { replayKey: paymentKeyOf(fields) });
    try {
      return Object.assign(base, readPayment(fields), subMerchantId === undefined ? {} : { subMerchantId });
    } catch (error) {
      if (!(error instanceof DomainError) || error.code !== MALFORMED) throw error;
      const ids = { outTradeNo: fields.out_trade_no, transactionId: fields.transaction_id };
      return malformedNotification({ ...base, eventType: eventType(fields) }, ids, error.message);
    }
  }

  /**
   * A signed payment result whose `time_end` is past WeChat's retries, or ahead of our clock, is not
   * a delivery WeChat is making now: refused, so that a captured notification cannot be replayed
   * for ever. A FAIL result carries no `time_end`; one that does not read is kept as malformed below.
   */
  private checkFresh(timeEnd: string | undefined): void {
    if (timeEnd === undefined) return;
    let paidAt: number;
    try {
      paidAt = readBeijingTime(timeEnd).getTime();
    } catch {
      return;
    }
    const age = this.now() - paidAt;
    if (age < -MAX_CLOCK_SKEW_MS) throw new DomainError('TimestampExpired', 'time_end is in the future');
    if (age > V2_MAX_TIME_END_AGE_MS) {
      throw new DomainError(
        'TimestampExpired',
        `time_end is more than ${V2_MAX_TIME_END_AGE_MS / 3600_000} h old: past WeChat's retries`,
      );
    }
  }

  private accountOf(fields: Record<string, string>): V2Account {
    const mchid = fields.mch_id;
    if (!mchid) throw new DomainError('MalformedRequest', 'the notification carries no mch_id');
    const account = this.accounts.get(mchid);
    if (!account)
      throw new DomainError('MerchantMismatch', `mch_id ${mchid.slice(0, 32)} is no account with an APIv2 key here`);
    return account;
  }
}

/**
 * WeChat sends a v2 notification again unchanged (same nonce_str, same sign) until it is acked:
 * the same signed fields and sign again are one sending, not a new delivery.
 */
function paymentKeyOf(fields: Record<string, string>): string {
  return replayKeyOf(fieldsText(fields, 'sign'), Buffer.from(fields.sign.toUpperCase(), 'utf8'));
}

/** A refund notice is not signed: what names one sending is its visible fields and its req_info's bytes. */
function refundNoticeKeyOf(fields: Record<string, string>): string {
  return replayKeyOf(fieldsText(fields, 'req_info'), Buffer.from(fields.req_info, 'base64'));
}

function fieldsText(fields: Record<string, string>, left: string): string {
  return Object.keys(fields)
    .filter((name) => name !== left)
    .sort()
    .map((name) => `${name}=${fields[name]}`)
    .join('&');
}

function eventType(fields: Record<string, string>): string {
  return `V2.PAY.${fields.result_code ?? 'NONE'}`;
}

/** A signed payment result; a MalformedRequest for fields that cannot apply. */
export function readPayment(fields: Record<string, string>) {
  const paid = fields.result_code === SUCCESS;
  const ids = {
    eventType: eventType(fields),
    outTradeNo: requireField(fields, 'out_trade_no'),
    transactionId: paid ? requireField(fields, 'transaction_id') : fields.transaction_id || undefined,
  };
  if (!paid) return { ...ids, paid: false };
  return {
    ...ids,
    paid: true,
    amount: readFen(fields.total_fee, 'total_fee'),
    currency: readCurrency(fields.fee_type),
    paidAt: readBeijingTime(requireField(fields, 'time_end')),
  };
}

/**
 * A refund result. It carries no sign: that `req_info` decrypts with this account's key is what
 * there is, and the refund settlement checks its ids and amount against the refund we asked for.
 */
function readRefund(fields: Record<string, string>, account: V2Account) {
  checkAppid(fields, account);
  let plaintext: string;
  try {
    plaintext = decryptReqInfo(fields.req_info, account.apiV2Key);
  } catch {
    throw new DomainError('Undecryptable', `req_info does not decrypt with the APIv2 key of mch_id ${account.mchid}`);
  }
  const refund = readV2Xml(plaintext, 'root', 'decrypted req_info');
  const refundStatus = requireField(refund, 'refund_status');
  const status = REFUND_STATUSES[refundStatus];
  if (!status) throw new DomainError('MalformedRequest', `unknown refund_status ${refundStatus.slice(0, 32)}`);
  return {
    eventType: `V2.REFUND.${refundStatus}`,
    paid: false,
    outTradeNo: requireField(refund, 'out_trade_no'),
    transactionId: requireField(refund, 'transaction_id'),
    refund: {
      refundNo: requireField(refund, 'out_refund_no'),
      channelRefundId: requireField(refund, 'refund_id'),
      status,
      amount: readFen(refund.refund_fee, 'refund_fee'),
    },
  };
}

/** The payment must be of one of the account's applications, when those are listed. */
function checkAppid(fields: Record<string, string>, account: V2Account): void {
  const appid = fields.appid;
  if (account.appids.length > 0 && !account.appids.includes(appid ?? '')) {
    throw new DomainError(
      'MerchantMismatch',
      `appid ${(appid ?? '(none)').slice(0, 32)} is not an application of mch_id ${account.mchid}`,
    );
  }
}

function readFen(value: string | undefined, name: string): number {
  const fen = /^\d{1,15}$/.test(value ?? '') ? Number(value) : NaN;
  if (!isValidMinorAmount(fen)) throw new DomainError('MalformedRequest', `${name} must be a positive integer (fen)`);
  return fen;
}

function readCurrency(feeType: string | undefined): string {
  if (feeType === undefined || feeType === '') return 'CNY';
  if (/^[A-Z]{3}$/.test(feeType)) return feeType;
  throw new DomainError('MalformedRequest', 'fee_type must be an ISO 4217 code such as CNY');
}

/** `time_end`: yyyyMMddHHmmss in Beijing time. */
export function readBeijingTime(value: string): Date {
  const parts = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(value);
  if (!parts) throw new DomainError('MalformedRequest', 'time_end must be yyyyMMddHHmmss');
  const [year, month, day, hour, minute, second] = parts.slice(1).map(Number);
  const utc = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(utc);
  if (check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) {
    throw new DomainError('MalformedRequest', 'time_end is not a date');
  }
  return new Date(utc - BEIJING_OFFSET_MS);
}

function requireField(fields: Record<string, string>, name: string): string {
  const value = fields[name];
  if (value === undefined || value === '' || value.length > 64) {
    throw new DomainError('MalformedRequest', `field ${name} must be a non-empty string of at most 64 characters`);
  }
  return value;
}

function kept({ headers }: RawDelivery): Record<string, string> {
  const contentType = headerValue(headers, 'content-type');
  return contentType === undefined ? {} : { 'content-type': contentType };
}
