import { createHash } from 'node:crypto';
import { DomainError } from '../domain/domain-error';

/** Standard alphabet, padded, nothing else: the one way to write given bytes (RFC 4648 §4). */
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=|[A-Za-z0-9+/][AQgw]==)?$/;

/**
 * A signature's bytes, decoded strictly as WeChat Pay's Java SDK does (java.util.Base64's basic
 * decoder): the URL-safe alphabet, whitespace or stray bits are refused, not skipped, so one
 * signature has one text and a re-encoded capture is no new delivery.
 */
export function decodeStrictBase64(text: string, what: string): Buffer {
  if (text === '' || !CANONICAL_BASE64.test(text)) {
    throw new DomainError('InvalidSignature', `${what} is not canonical base64`);
  }
  return Buffer.from(text, 'base64');
}

/** A replay key: SHA-256 hex of what was signed and the signature's bytes, whatever their encoding. */
export function replayKeyOf(signed: string | Buffer, signature: Buffer): string {
  return createHash('sha256').update(signed).update('\n').update(signature).digest('hex');
}
