import { createHash } from 'node:crypto';
import { DomainError } from '../domain/domain-error';

/**
 * A signature's bytes, decoded strictly as WeChat Pay's Java SDK does (java.util.Base64's basic
 * decoder): the URL-safe alphabet, whitespace or stray bits are refused, not skipped, so one
 * signature has one text and a re-encoded capture is no new delivery. Node's decoder skips what it
 * does not know, so the text is canonical (standard alphabet, padded, nothing else: RFC 4648 §4)
 * exactly when its bytes encode back to it.
 */
export function decodeStrictBase64(text: string, what: string): Buffer {
  const bytes = Buffer.from(text, 'base64');
  if (text === '' || bytes.toString('base64') !== text) {
    throw new DomainError('InvalidSignature', `${what} is not canonical base64`);
  }
  return bytes;
}

/** A replay key: SHA-256 hex of what was signed and the signature's bytes, whatever their encoding. */
export function replayKeyOf(signed: string | Buffer, signature: Buffer): string {
  return createHash('sha256').update(signed).update('\n').update(signature).digest('hex');
}
