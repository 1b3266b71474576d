/** acp 5.1.0 messages as UnionPay signs them (signMethod 01), written from the specification's rules. */
import { createHash, KeyObject, sign, verify, randomInt } from 'node:crypto';
import { IssuedCertificate } from './unionpay-keys';

const BEIJING_OFFSET_MS = 8 * 3600 * 1000;

/** Every field but `signature`, sorted, `k=v&...`; SHA-256 in lower-case hex; that text SHA256withRSA. */
function digestHex(fields: Record<string, string>): Buffer {
  const text = Object.keys(fields)
    .filter((key) => key !== 'signature')
    .sort()
    .map((key) => `${key}=${fields[key]}`)
    .join('&');
  return Buffer.from(createHash('sha256').update(text, 'utf8').digest('hex'), 'utf8');
}

/** The fields with signPubKeyCert (the signer's PEM) and signature added. */
export function signUnionpay(
  fields: Record<string, string>,
  signer: Pick<IssuedCertificate, 'pem' | 'privateKey'>,
): Record<string, string> {
  const withCert = { ...fields, signPubKeyCert: signer.pem.replace(/\r?\n/g, '\r\n') };
  return { ...withCert, signature: sign('sha256', digestHex(withCert), signer.privateKey).toString('base64') };
}

/** A merchant's request: its signature checked with the certificate its certId names. */
export function unionpaySignatureHolds(fields: Record<string, string>, publicKey: KeyObject): boolean {
  return verify('sha256', digestHex(fields), publicKey, Buffer.from(fields.signature ?? '', 'base64'));
}

/** A notification's form body (application/x-www-form-urlencoded). */
export function unionpayForm(fields: Record<string, string>): string {
  return new URLSearchParams(Object.entries(fields)).toString();
}

/** A gateway answer: raw `k=v&k=v`, not percent-encoded, as UnionPay answers. */
export function unionpayAnswer(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
}

export function txnTime(at: Date = new Date()): string {
  return new Date(at.getTime() + BEIJING_OFFSET_MS).toISOString().slice(0, 19).replace(/\D/g, '');
}

/** A queryId as UnionPay writes them: 21 digits. */
export function newQueryId(): string {
  return Array.from({ length: 21 }, (_, i) => (i === 0 ? 1 + randomInt(9) : randomInt(10))).join('');
}

export interface UnionpayConsumeParams {
  merId: string;
  orderId: string;
  queryId: string;
  /** Fen. */
  txnAmt: number;
  respCode?: string;
  currencyCode?: string;
  txnTime?: string;
  accNo?: string;
}

/** A back notification of a consumption (txnType 01), before signing. */
export function unionpayConsumeFields(p: UnionpayConsumeParams): Record<string, string> {
  return {
    version: '5.1.0',
    encoding: 'utf-8',
    signMethod: '01',
    txnType: '01',
    txnSubType: '01',
    bizType: '000201',
    accessType: '0',
    merId: p.merId,
    orderId: p.orderId,
    queryId: p.queryId,
    txnTime: p.txnTime ?? txnTime(),
    txnAmt: String(p.txnAmt),
    currencyCode: p.currencyCode ?? '156',
    settleAmt: String(p.txnAmt),
    settleCurrencyCode: '156',
    settleDate: (p.txnTime ?? txnTime()).slice(4, 8),
    traceNo: String(randomInt(100000, 999999)),
    traceTime: (p.txnTime ?? txnTime()).slice(4, 14),
    respCode: p.respCode ?? '00',
    respMsg: 'success',
    accNo: p.accNo ?? '6216261000000000018',
  };
}

export interface UnionpayRefundNoticeParams {
  merId: string;
  /** Our refund number: the refund's orderId. */
  orderId: string;
  /** The refunded payment's queryId. */
  origQryId: string;
  /** The refund's own queryId. */
  queryId: string;
  txnAmt: number;
  respCode?: string;
}

/** A back notification of a refund's result (txnType 04), before signing. */
export function unionpayRefundFields(p: UnionpayRefundNoticeParams): Record<string, string> {
  return {
    version: '5.1.0',
    encoding: 'utf-8',
    signMethod: '01',
    txnType: '04',
    txnSubType: '00',
    bizType: '000201',
    accessType: '0',
    merId: p.merId,
    orderId: p.orderId,
    origQryId: p.origQryId,
    queryId: p.queryId,
    txnTime: txnTime(),
    txnAmt: String(p.txnAmt),
    currencyCode: '156',
    respCode: p.respCode ?? '00',
    respMsg: 'success',
  };
}
