import { createHash, KeyObject, sign, verify } from 'node:crypto';
import { DomainError } from '../../domain/domain-error';

/**
 * acp 5.1.0's signMethod 01: every field but `signature` (empty values included, as the official
 * SDKs' coverMap2String keeps them), sorted by name, `k=v` joined with `&`; its SHA-256 as
 * lower-case hex; that hex text signed SHA256withRSA, in base64.
 */
export function signedString(fields: ReadonlyMap<string, string>): string {
  return [...fields.entries()]
    .filter(([key]) => key !== 'signature')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
}

function digestHex(fields: ReadonlyMap<string, string>): Buffer {
  return Buffer.from(createHash('sha256').update(signedString(fields), 'utf8').digest('hex'), 'utf8');
}

export function signFields(fields: ReadonlyMap<string, string>, key: KeyObject): string {
  return sign('sha256', digestHex(fields), key).toString('base64');
}

export function signatureHolds(fields: ReadonlyMap<string, string>, publicKey: KeyObject): boolean {
  const signature = fields.get('signature');
  if (!signature) return false;
  return verify('sha256', digestHex(fields), publicKey, Buffer.from(signature, 'base64'));
}

/** A form body (application/x-www-form-urlencoded, UTF-8): each field once. */
export function parseForm(body: Buffer): Map<string, string> {
  const text = body.toString('latin1');
  // A form body is percent-encoded ASCII; raw bytes beyond that mean a client that did not encode it.
  if (!/^[\x20-\x7e]+$/.test(text)) {
    throw new DomainError('MalformedRequest', 'form body must be non-empty, percent-encoded ASCII');
  }
  const fields = new Map<string, string>();
  for (const [key, value] of new URLSearchParams(text)) {
    if (fields.has(key)) throw new DomainError('MalformedRequest', `field ${key} appears twice`);
    fields.set(key, value);
  }
  return fields;
}

/**
 * The gateway's synchronous answer: `k=v&k=v`, NOT percent-encoded, a value possibly holding `=`
 * (base64) or a `{...}`/`[...]` group with `&` inside (the SDKs' convertResultStringToMap reads it so).
 */
export function parseAnswer(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  let i = 0;
  while (i < text.length) {
    const equals = text.indexOf('=', i);
    if (equals < 0) break;
    const key = text.slice(i, equals);
    let depth = 0;
    let end = equals + 1;
    for (; end < text.length; end++) {
      const char = text[end];
      if (char === '{' || char === '[') depth++;
      else if ((char === '}' || char === ']') && depth > 0) depth--;
      else if (char === '&' && depth === 0) break;
    }
    if (fields.has(key)) throw new DomainError('MalformedRequest', `answer field ${key} appears twice`);
    fields.set(key, text.slice(equals + 1, end));
    i = end + 1;
  }
  return fields;
}

const BEIJING_OFFSET_MS = 8 * 3600 * 1000;
const TXN_TIME = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/;

/** txnTime, yyyyMMddHHmmss in Beijing time. */
export function parseTxnTime(text: string): Date {
  const match = TXN_TIME.exec(text);
  const iso = match ? `${match[1]}-${match[2]}-${match[3]}T${match[4]}:${match[5]}:${match[6]}` : '';
  const utc = new Date(`${iso}Z`);
  // Date would take a 31st of November as December 1st: the time must read back as written.
  if (!match || Number.isNaN(utc.getTime()) || utc.toISOString().slice(0, 19) !== iso) {
    throw new DomainError('MalformedRequest', `txnTime ${text.slice(0, 20)} is not yyyyMMddHHmmss`);
  }
  return new Date(utc.getTime() - BEIJING_OFFSET_MS);
}

export function formatTxnTime(at: Date): string {
  return new Date(at.getTime() + BEIJING_OFFSET_MS).toISOString().slice(0, 19).replace(/\D/g, '');
}
