/**
 * Alipay's certificate mode (公钥证书): the Alipay public key comes in `alipayCertPublicKey_RSA2.crt`, and
 * certificates are named by SN = MD5 hex of (issuer DN as Java's X500Principal prints it + serial in decimal),
 * as alipay-sdk-nodejs-all (`src/antcertutil.ts`), alipay-sdk-java and gopay compute it.
 *
 * Node's X509Certificate reads the serial, validity, key and signatures; it does not give the signature
 * algorithm (the root SN keeps only RSA-signed certificates) nor the issuer's raw attributes, so those two
 * are read from the DER here: a few dozen lines rather than a dependency in the production build.
 */
import { createHash, KeyObject, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Logger } from '@nestjs/common';
import { ConfigurationError } from '../../platform/config/env-validation';

const logger = new Logger('AlipayCertificates');

/** Where an app's certificates are; they replace the bare Alipay public key. */
export interface AlipayCertPaths {
  /** One or more `alipayCertPublicKey_RSA2.crt`: several while Alipay rotates its certificate. */
  publicCertPaths: string[];
  /** `alipayRootCert.crt`, Alipay's root bundle. */
  rootCertPath: string;
  /** `appCertPublicKey_<appId>.crt`, the app's own certificate: only its SN is sent, with API calls. */
  appCertPath?: string;
  /** false only for Alipay's sandbox, whose certificates are not issued under the root bundle. */
  validateChain?: boolean;
}

/** One Alipay public certificate, checked at start. */
export interface AlipayCertificate {
  sn: string;
  publicKey: KeyObject;
  path: string;
  validFrom: Date;
  validTo: Date;
}

/** An app's certificate mode, loaded and checked. */
export interface AlipayCertMode {
  alipayCerts: AlipayCertificate[];
  /** alipay_root_cert_sn: the SNs of the root bundle's RSA-signed certificates, joined by `_`. */
  rootCertSn: string;
  /** app_cert_sn, when the app certificate is configured (API calls need it). */
  appCertSn?: string;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;
/** sha1WithRSA, sha256WithRSA …: the PKCS #1 family. The SDKs skip SM2 and ECDSA certificates in the root bundle. */
const RSA_SIGNATURE_OID_PREFIX = '1.2.840.113549.1.1.';
/** Short names as Java's X500Principal.getName() (RFC 2253) prints them; other attributes print as OID=#hex. */
const SHORT_NAMES: Record<string, string> = {
  '2.5.4.3': 'CN',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.9': 'STREET',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '0.9.2342.19200300.100.1.1': 'UID',
  '0.9.2342.19200300.100.1.25': 'DC',
};
const MAX_CHAIN_LENGTH = 5;

/** Every certificate of a PEM file, in file order (Node's X509Certificate alone reads only the first). */
export function parseCertificates(pem: string): X509Certificate[] {
  return (pem.match(PEM_CERTIFICATE) ?? []).map((block) => new X509Certificate(block));
}

/** md5(issuer DN, last RDN first, `K=v` joined by `,` + serial number in decimal), lower-case hex. */
export function certSn(cert: X509Certificate): string {
  const serial = BigInt(`0x${cert.serialNumber}`).toString(10);
  return createHash('md5')
    .update(issuerName(cert.raw) + serial, 'utf8')
    .digest('hex');
}

/** alipay_root_cert_sn of a root bundle: its RSA-signed certificates' SNs joined by `_`, in file order. */
export function rootCertSn(bundle: X509Certificate[]): string {
  return bundle
    .filter((cert) => signatureAlgorithmOid(cert.raw).startsWith(RSA_SIGNATURE_OID_PREFIX))
    .map(certSn)
    .join('_');
}

/**
 * Reads and checks an app's certificates at `now`: each Alipay public certificate (the first of its file)
 * must be valid and chain, through the certificates after it in its file, to one of the root bundle's;
 * the app certificate must be valid. Each refusal names the file.
 */
export function loadAlipayCertMode(paths: AlipayCertPaths, now: Date): AlipayCertMode {
  const roots = readCertificates(paths.rootCertPath, 'ALIPAY_ROOT_CERT_PATH');
  const rootSn = rootCertSn(roots);
  if (rootSn === '') {
    throw new ConfigurationError(`ALIPAY_ROOT_CERT_PATH: ${paths.rootCertPath} holds no RSA-signed certificate`);
  }
  const loaded = paths.publicCertPaths.map((path) => loadAlipayCert(path, paths, roots, now));
  const alipayCerts = loaded.filter((cert): cert is AlipayCertificate => !(cert instanceof ConfigurationError));
  // A certificate left over from a rotation has expired: skipped, unless it leaves the app without any.
  if (alipayCerts.length === 0) throw loaded[0] as ConfigurationError;
  for (const skipped of loaded.filter((cert) => cert instanceof ConfigurationError)) {
    logger.warn(`${skipped.message}: skipped, the other certificates of ALIPAY_PUBLIC_CERT_PATHS stay in use`);
  }
  const sns = alipayCerts.map((c) => c.sn);
  const twice = sns.find((sn, i) => sns.indexOf(sn) !== i);
  if (twice) throw new ConfigurationError(`ALIPAY_PUBLIC_CERT_PATHS: the certificate ${twice} is listed twice`);
  let appCertSn: string | undefined;
  if (paths.appCertPath) {
    const [appCert] = readCertificates(paths.appCertPath, 'ALIPAY_APP_CERT_PATH');
    refuseOutsideValidity(appCert, paths.appCertPath, 'ALIPAY_APP_CERT_PATH', now);
    appCertSn = certSn(appCert);
  }
  return { alipayCerts, rootCertSn: rootSn, appCertSn };
}

/** One Alipay public certificate; an expired one is returned as the error it would be, for the caller to skip. */
function loadAlipayCert(
  path: string,
  paths: AlipayCertPaths,
  roots: X509Certificate[],
  now: Date,
): AlipayCertificate | ConfigurationError {
  const [leaf, ...intermediates] = readCertificates(path, 'ALIPAY_PUBLIC_CERT_PATHS');
  if (now.getTime() > Date.parse(leaf.validTo)) {
    return new ConfigurationError(
      `ALIPAY_PUBLIC_CERT_PATHS: ${path} expired on ${new Date(leaf.validTo).toISOString()}`,
    );
  }
  refuseOutsideValidity(leaf, path, 'ALIPAY_PUBLIC_CERT_PATHS', now);
  if (paths.validateChain !== false && !chainsToRoot(leaf, intermediates, roots, now)) {
    throw new ConfigurationError(
      `ALIPAY_PUBLIC_CERT_PATHS: ${path} is not issued under the root certificates of ${paths.rootCertPath}`,
    );
  }
  const validity = { validFrom: new Date(leaf.validFrom), validTo: new Date(leaf.validTo) };
  return { sn: certSn(leaf), publicKey: leaf.publicKey, path, ...validity };
}

function readCertificates(path: string, variable: string): X509Certificate[] {
  let certificates: X509Certificate[];
  try {
    certificates = parseCertificates(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigurationError(`${variable}: cannot read ${path} (${(error as Error).message})`);
  }
  if (certificates.length === 0) throw new ConfigurationError(`${variable}: ${path} holds no PEM certificate`);
  return certificates;
}

function refuseOutsideValidity(cert: X509Certificate, path: string, variable: string, now: Date): void {
  if (now.getTime() > Date.parse(cert.validTo)) {
    throw new ConfigurationError(`${variable}: ${path} expired on ${new Date(cert.validTo).toISOString()}`);
  }
  if (now.getTime() < Date.parse(cert.validFrom)) {
    throw new ConfigurationError(`${variable}: ${path} is not valid before ${new Date(cert.validFrom).toISOString()}`);
  }
}

/** Up through `intermediates` (each valid at `now`, each signature checked) to a certificate of `roots`. */
function chainsToRoot(
  leaf: X509Certificate,
  intermediates: X509Certificate[],
  roots: X509Certificate[],
  now: Date,
): boolean {
  let current = leaf;
  for (let depth = 0; depth < MAX_CHAIN_LENGTH; depth++) {
    if (roots.some((root) => issuedBy(current, root) && isValidAt(root, now))) return true;
    const next = intermediates.find((candidate) => issuedBy(current, candidate) && isValidAt(candidate, now));
    if (!next) return false;
    current = next;
  }
  return false;
}

function issuedBy(cert: X509Certificate, issuer: X509Certificate): boolean {
  if (!cert.checkIssued(issuer)) return false;
  try {
    return cert.verify(issuer.publicKey);
  } catch {
    return false; // a key Node cannot use (the bundle's SM2 root): not this certificate's issuer
  }
}

function isValidAt(cert: X509Certificate, now: Date): boolean {
  return Date.parse(cert.validFrom) <= now.getTime() && now.getTime() <= Date.parse(cert.validTo);
}

// ------------------------------------------------------------------------------------------------ DER

interface Tlv {
  tag: number;
  /** Where its tag is. */
  at: number;
  /** Where the value starts and ends (exclusive). */
  start: number;
  end: number;
}

function tlvAt(der: Buffer, at: number): Tlv {
  const tag = der[at];
  let length = der[at + 1];
  let start = at + 2;
  if (length & 0x80) {
    const bytes = length & 0x7f;
    if (bytes === 0 || bytes > 4) throw new Error('unsupported DER length');
    length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + der[start++];
  }
  if (tag === undefined || start + length > der.length) throw new Error('truncated DER');
  return { tag, at, start, end: start + length };
}

function childrenOf(der: Buffer, parent: Tlv): Tlv[] {
  const children: Tlv[] = [];
  for (let at = parent.start; at < parent.end;) {
    const child = tlvAt(der, at);
    children.push(child);
    at = child.end;
  }
  return children;
}

function oidOf(der: Buffer, tlv: Tlv): string {
  const bytes = der.subarray(tlv.start, tlv.end);
  const arcs = [Math.min(2, Math.floor(bytes[0] / 40)), bytes[0] - Math.min(2, Math.floor(bytes[0] / 40)) * 40];
  let arc = 0;
  for (const byte of bytes.subarray(1)) {
    arc = arc * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) {
      arcs.push(arc);
      arc = 0;
    }
  }
  return arcs.join('.');
}

/** Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm SEQUENCE { OID, … }, signature }. */
function signatureAlgorithmOid(der: Buffer): string {
  const [, algorithm] = childrenOf(der, tlvAt(der, 0));
  return oidOf(der, childrenOf(der, algorithm)[0]);
}

/** TBSCertificate ::= SEQUENCE { [0] version OPTIONAL, serialNumber, signature, issuer, … }. */
function issuerName(der: Buffer): string {
  const [tbs] = childrenOf(der, tlvAt(der, 0));
  const fields = childrenOf(der, tbs);
  const issuer = fields[fields[0].tag === 0xa0 ? 3 : 2];
  return childrenOf(der, issuer)
    .reverse()
    .map((rdn) =>
      childrenOf(der, rdn)
        .map((attribute) => {
          const [type, value] = childrenOf(der, attribute);
          const oid = oidOf(der, type);
          const name = SHORT_NAMES[oid];
          if (!name) return `${oid}=#${der.subarray(value.at, value.end).toString('hex')}`;
          return `${name}=${stringOf(der, value)}`;
        })
        .join('+'),
    )
    .join(',');
}

function stringOf(der: Buffer, tlv: Tlv): string {
  const bytes = der.subarray(tlv.start, tlv.end);
  if (tlv.tag === 0x1e) return Buffer.from(bytes).swap16().toString('utf16le'); // BMPString
  if (tlv.tag === 0x14) return bytes.toString('latin1'); // TeletexString
  return bytes.toString('utf8'); // UTF8String, PrintableString, IA5String
}
