/**
 * A UnionPay key set made locally, as UnionPay's test environment hands one out: a root and a middle
 * certificate, UnionPay's signing certificate issued under them (its CN names 中国银联股份有限公司, as
 * production's do), and the merchant's signing certificate as a PKCS#12 (.pfx) with its password.
 * node-forge writes the certificates and the PFX; the keys are node's. Nothing here imports the
 * service: the signing side is written from acp 5.1.0's rules.
 */
import { generateKeyPairSync, KeyObject, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import forge from 'node-forge';

export const UNIONPAY_COMPANY = '中国银联股份有限公司';

export interface IssuedCertificate {
  pem: string;
  privateKey: KeyObject;
  /** The certificate's serial in decimal: acp's certId. */
  certId: string;
  cert: forge.pki.Certificate;
}

export interface UnionpayKeySet {
  root: IssuedCertificate;
  middle: IssuedCertificate;
  /** UnionPay's signing certificate: its key signs notifications and answers, its PEM travels in signPubKeyCert. */
  unionpaySigner: IssuedCertificate;
  /** The merchant's signing certificate, and the same as a PFX under `pfxPassword`. */
  merchant: IssuedCertificate;
  pfx: Buffer;
  pfxPassword: string;
}

const DAY_MS = 24 * 3600 * 1000;

export function issueCertificate(options: {
  commonName: string;
  issuer?: IssuedCertificate;
  ca?: boolean;
  notBefore?: Date;
  notAfter?: Date;
}): IssuedCertificate {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  // A positive serial: the first hex digit below 8.
  cert.serialNumber = `1${randomBytes(9).toString('hex')}`;
  cert.validity.notBefore = options.notBefore ?? new Date(Date.now() - DAY_MS);
  cert.validity.notAfter = options.notAfter ?? new Date(Date.now() + 365 * DAY_MS);
  const subject = [
    { shortName: 'C', value: 'CN' },
    { shortName: 'O', value: 'Payment Callback Simulator' },
    { shortName: 'CN', value: options.commonName, valueTagClass: forge.asn1.Type.UTF8 as unknown as number },
  ] as forge.pki.CertificateField[];
  cert.setSubject(subject);
  cert.setIssuer(options.issuer ? options.issuer.cert.subject.attributes : subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: options.ca ?? false },
    { name: 'keyUsage', keyCertSign: options.ca ?? false, cRLSign: options.ca ?? false, digitalSignature: true },
  ]);
  const signer = options.issuer?.privateKey ?? privateKey;
  cert.sign(
    forge.pki.privateKeyFromPem(signer.export({ type: 'pkcs1', format: 'pem' }).toString()),
    forge.md.sha256.create(),
  );
  return {
    pem: forge.pki.certificateToPem(cert),
    privateKey,
    certId: BigInt(`0x${cert.serialNumber}`).toString(10),
    cert,
  };
}

/** The merchant's certificate and key as UnionPay issues them: a PKCS#12 file (3DES, as the SDKs read). */
export function toPfx(certificate: IssuedCertificate, password: string): Buffer {
  const key = forge.pki.privateKeyFromPem(certificate.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString());
  const asn1 = forge.pkcs12.toPkcs12Asn1(key, [certificate.cert], password, { algorithm: '3des' });
  return Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary');
}

/** A root, a middle, UnionPay's signer under them, and a merchant PFX. */
export function generateUnionpayKeySet(options: { signerCommonName?: string } = {}): UnionpayKeySet {
  const root = issueCertificate({ commonName: 'Simulated UnionPay TEST ROOT', ca: true });
  const middle = issueCertificate({ commonName: 'Simulated UnionPay TEST MIDDLE', issuer: root, ca: true });
  const unionpaySigner = issueCertificate({
    commonName: options.signerCommonName ?? `041@8310000000083040@${UNIONPAY_COMPANY}@00016495`,
    issuer: middle,
  });
  const merchant = issueCertificate({ commonName: 'Simulated merchant signing certificate', issuer: middle });
  const pfxPassword = randomBytes(6).toString('hex');
  return { root, middle, unionpaySigner, merchant, pfx: toPfx(merchant, pfxPassword), pfxPassword };
}

/** The files the service loads: root.cer, middle.cer and merchant.pfx under `dir`; their variables. */
export function writeUnionpayKeySet(keys: UnionpayKeySet, dir: string, merId: string): Record<string, string> {
  writeFileSync(join(dir, 'unionpay-root.cer'), keys.root.pem);
  writeFileSync(join(dir, 'unionpay-middle.cer'), keys.middle.pem);
  writeFileSync(join(dir, 'unionpay-merchant.pfx'), keys.pfx);
  return {
    UNIONPAY_MER_ID: merId,
    UNIONPAY_ROOT_CERT_PATH: join(dir, 'unionpay-root.cer'),
    UNIONPAY_MIDDLE_CERT_PATH: join(dir, 'unionpay-middle.cer'),
    UNIONPAY_SIGN_CERT_PATH: join(dir, 'unionpay-merchant.pfx'),
    UNIONPAY_SIGN_CERT_PASSWORD: keys.pfxPassword,
  };
}
