/**
 * What the channels' signers share: real RSA key pairs, random strings, and Beijing time as the platforms write it.
 * Nothing here imports the code under test, nor a channel.
 */
import { generateKeyPairSync, KeyObject, randomBytes, randomInt } from 'node:crypto';

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

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function randomAlphanumeric(length: number): string {
  return Array.from({ length }, () => ALPHANUMERIC[randomInt(ALPHANUMERIC.length)]).join('');
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

export function randomDigits(length: number): string {
  return randomBytes(length).reduce((text, byte) => text + (byte % 10), '');
}
