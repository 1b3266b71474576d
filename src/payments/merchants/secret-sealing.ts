import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { ConfigurationError } from '../../platform/config/env-validation';

/** A key-encryption key of MERCHANT_SECRETS_KEYS_FILE: its id and its 32 bytes. */
export interface SecretKey {
  id: string;
  key: Buffer;
}

/** The keys of MERCHANT_SECRETS_KEYS_FILE: the first encrypts, any decrypts. */
export interface SecretKeyRing {
  current: SecretKey;
  byId: ReadonlyMap<string, Buffer>;
}

/** A secret sealed under one key: AES-256-GCM, a random 12-byte IV, its 16-byte tag. */
export interface SealedSecret {
  keyId: string;
  iv: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

const KEY_ID = /^[A-Za-z0-9_.-]{1,32}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * The file's lines, `keyId:base64(32 bytes)` each, blank lines and `#` comments skipped. A mistake
 * names the file and the line, never a key.
 */
export function parseKeyRing(text: string, source: string): SecretKeyRing {
  const keys: SecretKey[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const where = `${source} line ${index + 1}`;
    const colon = line.indexOf(':');
    const id = colon < 0 ? '' : line.slice(0, colon).trim();
    const value = colon < 0 ? '' : line.slice(colon + 1).trim();
    if (!KEY_ID.test(id)) {
      throw new ConfigurationError(
        `Invalid configuration: ${where} must be keyId:base64, the id 1 to 32 letters, digits, _ . or -`,
      );
    }
    const key = Buffer.from(value, 'base64');
    if (!BASE64.test(value) || key.length !== 32) {
      throw new ConfigurationError(`Invalid configuration: ${where}: the key of ${id} must be 32 bytes in base64`);
    }
    if (keys.some((k) => k.id === id))
      throw new ConfigurationError(`Invalid configuration: ${where}: key id ${id} appears twice`);
    keys.push({ id, key });
  });
  if (keys.length === 0) throw new ConfigurationError(`Invalid configuration: ${source} holds no key`);
  return { current: keys[0], byId: new Map(keys.map((k) => [k.id, k.key])) };
}

/** `plaintext` sealed under the ring's current key, bound to `aad` (a blob cannot be moved to another account). */
export function seal(ring: SecretKeyRing, plaintext: Buffer, aad: string): SealedSecret {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', ring.current.key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { keyId: ring.current.id, iv, ciphertext, tag: cipher.getAuthTag() };
}

/** Why a sealed secret does not open: its key is not in the file, or it (or its binding) was changed. */
export class UnsealError extends Error {}

/** The plaintext of `sealed`; an UnsealError (which never holds the secret) when the key is unknown or the tag does not match. */
export function unseal(ring: SecretKeyRing, sealed: SealedSecret, aad: string): Buffer {
  const key = ring.byId.get(sealed.keyId);
  if (!key) throw new UnsealError(`key ${sealed.keyId} is not in MERCHANT_SECRETS_KEYS_FILE`);
  if (sealed.iv.length !== 12 || sealed.tag.length !== 16) throw new UnsealError('malformed IV or tag');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.iv);
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(sealed.tag);
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]);
  } catch {
    throw new UnsealError(`not authentic under key ${sealed.keyId} (tampered, or sealed for another account)`);
  }
}

/** What a directory account's secret is bound to. */
export function secretBinding(channel: string, account: string): string {
  return `merchant-account\u0000${channel}\u0000${account}`;
}
