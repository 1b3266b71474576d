import { createPrivateKey, KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import forge from 'node-forge';
import { ConfigurationError } from '../../platform/config/env-validation';
import { SignCertFile } from './unionpay.config';

/** A merchant's signing key and the certId that names its certificate to UnionPay. */
export interface SigningCertificate {
  privateKey: KeyObject;
  /** The certificate's serial number in decimal, as acp's certId wants it. */
  certId: string;
}

/**
 * Reads the merchant's PKCS#12 (.pfx) signing certificate, which UnionPay issues with its private
 * key; node's crypto cannot read PKCS#12, node-forge can. Read once at start: a wrong password or
 * a file without a key stops the start with the variable named.
 */
export function loadSigningCertificate(file: SignCertFile, variable = 'UNIONPAY_SIGN_CERT_PATH'): SigningCertificate {
  let der: Buffer;
  try {
    der = readFileSync(file.path);
  } catch (error) {
    throw new ConfigurationError(
      `Invalid configuration: ${variable}: cannot read ${file.path} (${(error as Error).message})`,
    );
  }
  try {
    const p12 = forge.pkcs12.pkcs12FromAsn1(forge.asn1.fromDer(der.toString('binary')), false, file.password);
    const keyBag =
      p12.getBags({ bagType: forge.pki.oids.pkcs8ShroudedKeyBag })[forge.pki.oids.pkcs8ShroudedKeyBag]?.[0] ??
      p12.getBags({ bagType: forge.pki.oids.keyBag })[forge.pki.oids.keyBag]?.[0];
    const certBags = p12.getBags({ bagType: forge.pki.oids.certBag })[forge.pki.oids.certBag] ?? [];
    if (!keyBag?.key) throw new Error('it holds no private key');
    const key = keyBag.key;
    // The merchant's own certificate is the one whose public key matches the private key.
    const certificate = certBags
      .map((bag) => bag.cert)
      .find((cert) => cert && (cert.publicKey as forge.pki.rsa.PublicKey).n.equals(key.n));
    if (!certificate) throw new Error('it holds no certificate for its private key');
    return {
      privateKey: createPrivateKey(forge.pki.privateKeyToPem(key)),
      certId: BigInt(`0x${certificate.serialNumber}`).toString(10),
    };
  } catch (error) {
    throw new ConfigurationError(
      `Invalid configuration: ${variable}: ${file.path} is not a PKCS#12 file readable with its password (${(error as Error).message})`,
    );
  }
}
