/**
 * Alipay's certificate mode (公钥证书) as the simulator and the tests play it: a test root made on this machine, an
 * Alipay public certificate (`alipayCertPublicKey_RSA2.crt`) around the key that signs notifications and answers,
 * and the app's certificate (`appCertPublicKey_<appId>.crt`) around the app's public key. Never real secrets.
 *
 * The SNs are computed here from what was written (issuer attributes and serial), not by the service's code:
 * md5(issuer DN, last RDN first, + serial in decimal), as alipay-sdk-nodejs-all and gopay compute them.
 */
import 'reflect-metadata'; // @peculiar/x509 resolves its services through tsyringe
import { createHash, createPublicKey, KeyObject, randomBytes, sign, webcrypto } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { generateRsaKeyPair, RsaKeyPair } from '../signing';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const RSA_SHA256 = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 3600 * 1000;

/** A name as attributes in DER order (country first), the way the certificate carries it. */
type NameAttributes = Array<[short: string, value: string]>;

/** A certificate authority of the test: it issues the Alipay and app certificates. */
export interface TestCertificateAuthority {
  keys: RsaKeyPair;
  name: NameAttributes;
  pem: string;
  sn: string;
}

export interface IssuedCertificate {
  pem: string;
  /** alipay_cert_sn or app_cert_sn. */
  sn: string;
}

export interface Validity {
  notBefore?: Date;
  notAfter?: Date;
}

/** The SN Alipay's SDKs give a certificate issued by `issuer` with serial `serialHex`. */
export function alipayCertSn(issuer: NameAttributes, serialHex: string): string {
  const dn = [...issuer]
    .reverse()
    .map(([short, value]) => `${short}=${value}`)
    .join(',');
  return createHash('md5')
    .update(dn + BigInt(`0x${serialHex}`).toString(10), 'utf8')
    .digest('hex');
}

/** A self-signed sha256WithRSA root, CA:true, keyCertSign. */
export async function createTestRoot(commonName = 'Simulator Test Root CA'): Promise<TestCertificateAuthority> {
  const keys = generateRsaKeyPair();
  const name: NameAttributes = [
    ['C', 'CN'],
    ['O', 'Payment Callback Simulator'],
    ['OU', 'Certification Authority'],
    ['CN', commonName],
  ];
  const serial = randomSerial();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial,
    name: nameText(name),
    notBefore: new Date(Date.now() - DAY_MS),
    notAfter: new Date(Date.now() + 20 * 365 * DAY_MS),
    signingAlgorithm: RSA_SHA256,
    keys: await cryptoKeys(keys),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
  });
  return { keys, name, pem: cert.toString('pem'), sn: alipayCertSn(name, serial) };
}

/** A leaf certificate for `publicKeyPem`, issued (signed) by `ca`. */
export async function issueCertificate(
  ca: TestCertificateAuthority,
  publicKeyPem: string,
  commonName: string,
  validity: Validity = {},
): Promise<IssuedCertificate> {
  const serial = randomSerial();
  const { privateKey } = await cryptoKeys(ca.keys);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial,
    subject: nameText([
      ['C', 'CN'],
      ['O', 'Payment Callback Simulator'],
      ['OU', 'Alipay'],
      ['CN', commonName],
    ]),
    issuer: nameText(ca.name),
    notBefore: validity.notBefore ?? new Date(Date.now() - DAY_MS),
    notAfter: validity.notAfter ?? new Date(Date.now() + 3 * 365 * DAY_MS),
    signingAlgorithm: RSA_SHA256,
    publicKey: await webcrypto.subtle.importKey('spki', spkiOf(publicKeyPem), RSA_SHA256, true, ['verify']),
    signingKey: privateKey,
  });
  return { pem: cert.toString('pem'), sn: alipayCertSn(ca.name, serial) };
}

/** Everything certificate mode needs, for one app: the files the service reads, the keys and SNs the fake uses. */
export interface AlipayCertKeySet {
  root: TestCertificateAuthority;
  /** The key inside the Alipay public certificate: it signs notifications and answers. */
  alipayKey: RsaKeyPair;
  alipayCert: IssuedCertificate;
  appCert: IssuedCertificate;
  /** alipay_root_cert_sn: the root bundle holds one RSA-signed certificate. */
  rootCertSn: string;
}

/** A key set around existing keys: `alipayKey` signs as Alipay, `appPublicKeyPem` is the app's (its requests). */
export async function createAlipayCertKeySet(
  appId: string,
  sellerId: string,
  appPublicKeyPem: string,
  alipayKey: RsaKeyPair = generateRsaKeyPair(),
): Promise<AlipayCertKeySet> {
  const root = await createTestRoot();
  return {
    root,
    alipayKey,
    alipayCert: await issueCertificate(root, alipayKey.publicKeyPem, `支付宝(中国)网络技术有限公司-${sellerId}`),
    appCert: await issueCertificate(root, appPublicKeyPem, `${sellerId}-${appId}`),
    rootCertSn: root.sn,
  };
}

/** The three files as Alipay's console names them, written into `dir`; their paths. */
export function writeAlipayCertFiles(
  dir: string,
  appId: string,
  set: Pick<AlipayCertKeySet, 'root' | 'alipayCert' | 'appCert'>,
): { publicCertPath: string; rootCertPath: string; appCertPath: string } {
  const paths = {
    publicCertPath: join(dir, 'alipayCertPublicKey_RSA2.crt'),
    rootCertPath: join(dir, 'alipayRootCert.crt'),
    appCertPath: join(dir, `appCertPublicKey_${appId}.crt`),
  };
  writeFileSync(paths.publicCertPath, set.alipayCert.pem);
  writeFileSync(paths.rootCertPath, set.root.pem);
  writeFileSync(paths.appCertPath, set.appCert.pem);
  return paths;
}

/**
 * A certificate-mode notification body: `alipay_cert_sn` names the signing certificate and, like sign and
 * sign_type, is left out of the signed string (sorted non-empty `k=v` joined by `&`, RSA2).
 */
export function alipayCertDelivery(privateKey: KeyObject, certSn: string, params: Record<string, string>): string {
  const content = Object.entries(params)
    .filter(([key, value]) => !['sign', 'sign_type', 'alipay_cert_sn'].includes(key) && value !== '')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
  const signature = sign('sha256', Buffer.from(content, 'utf8'), privateKey).toString('base64');
  const all = { ...params, alipay_cert_sn: certSn, sign: signature, sign_type: 'RSA2' };
  return Object.entries(all)
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`)
    .join('&');
}

function nameText(name: NameAttributes): string {
  return name.map(([short, value]) => `${short}=${value}`).join(', ');
}

/** 16 random bytes, positive (high bit clear) and without a leading zero byte, in hex. */
function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = 0x10 + (bytes[0] % 0x70);
  return bytes.toString('hex');
}

function spkiOf(publicKeyPem: string): Buffer {
  return createPublicKey(publicKeyPem).export({ type: 'spki', format: 'der' });
}

async function cryptoKeys(keys: RsaKeyPair): Promise<webcrypto.CryptoKeyPair> {
  const pkcs8 = keys.privateKey.export({ type: 'pkcs8', format: 'der' });
  return {
    privateKey: await webcrypto.subtle.importKey('pkcs8', pkcs8, RSA_SHA256, false, ['sign']),
    publicKey: await webcrypto.subtle.importKey('spki', spkiOf(keys.publicKeyPem), RSA_SHA256, true, ['verify']),
  };
}

/** What a development key set remembers of its certificate mode (files beside its keys, and their SNs). */
export interface DevAlipayCertMode {
  appCertSn: string;
  rootCertSn: string;
  alipayCertSn: string;
  /** File names inside the key set's folder. */
  files: { publicCert: string; rootCert: string; appCert: string };
}

/**
 * Certificate mode for a development key set: a test root made now (its key is thrown away), the Alipay
 * certificate around the key set's Alipay key, the app certificate around its app key; written into `dir`.
 */
export async function writeDevAlipayCertMode(
  dir: string,
  app: { appId: string; sellerId: string },
  alipayKey: RsaKeyPair,
  appPublicKeyPem: string,
): Promise<DevAlipayCertMode> {
  const set = await createAlipayCertKeySet(app.appId, app.sellerId, appPublicKeyPem, alipayKey);
  const paths = writeAlipayCertFiles(dir, app.appId, set);
  return {
    appCertSn: set.appCert.sn,
    rootCertSn: set.rootCertSn,
    alipayCertSn: set.alipayCert.sn,
    files: {
      publicCert: basename(paths.publicCertPath),
      rootCert: basename(paths.rootCertPath),
      appCert: basename(paths.appCertPath),
    },
  };
}
