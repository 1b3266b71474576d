import { KeyObject, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DomainError } from '../../domain/domain-error';
import { ConfigurationError } from '../../platform/config/env-validation';
import { Clock } from '../../domain/notification';

/**
 * The subject CN of UnionPay's signing certificates reads `<type>@<code>@中国银联股份有限公司@<n>`;
 * the official SDKs (CertUtil.getIdentitiesFromCertficate, PHP and Java alike) compare its third
 * `@` part, and only where ifValidateCNName is on (production).
 */
export const UNIONPAY_CN = '中国银联股份有限公司';

/** The signing certificates seen lately, whose chain was checked: UnionPay uses one at a time. */
const CACHE_SIZE = 8;

interface CheckedCertificate {
  certificate: X509Certificate;
  /** Why it is not UnionPay's (not chained, wrong CN), checked once; validity is checked at each use. */
  refusal?: string;
}

/**
 * UnionPay's signing certificate travels in every message (signPubKeyCert); it is believed only
 * when it chains to the configured middle and root certificates, is within its validity (and so
 * are they) at the injected clock's time, and, in production, is issued to UnionPay.
 */
export class UnionpayCertificates {
  private readonly root: X509Certificate;
  private readonly middle: X509Certificate;
  private readonly checked = new Map<string, CheckedCertificate>();

  constructor(
    paths: { root: string; middle: string },
    private readonly validateCn: boolean,
    private readonly now: Clock,
  ) {
    this.root = readCertificate(paths.root, 'UNIONPAY_ROOT_CERT_PATH');
    this.middle = readCertificate(paths.middle, 'UNIONPAY_MIDDLE_CERT_PATH');
    if (!validateCn) refuseProductionAnchors(this.root, this.middle);
    if (!this.root.verify(this.root.publicKey)) {
      throw new ConfigurationError(`Invalid configuration: UNIONPAY_ROOT_CERT_PATH ${paths.root} is not self-signed`);
    }
    if (!this.middle.checkIssued(this.root) || !this.middle.verify(this.root.publicKey)) {
      throw new ConfigurationError(
        `Invalid configuration: UNIONPAY_MIDDLE_CERT_PATH ${paths.middle} is not issued by the root certificate`,
      );
    }
  }

  /** The serials of the root and middle certificates, for the start line. */
  ids(): string[] {
    return [this.root.serialNumber, this.middle.serialNumber];
  }

  /** The public key of a signPubKeyCert that UnionPay may sign with now; throws UnknownSigningKey otherwise. */
  publicKeyOf(pem: string): KeyObject {
    const { certificate, refusal } = this.check(pem);
    if (refusal) throw new DomainError('UnknownSigningKey', refusal);
    const at = this.now();
    for (const [name, cert] of [
      ['signPubKeyCert', certificate],
      ['the middle certificate', this.middle],
      ['the root certificate', this.root],
    ] as const) {
      if (at < Date.parse(cert.validFrom) || at > Date.parse(cert.validTo)) {
        throw new DomainError(
          'UnknownSigningKey',
          `${name} (serial ${cert.serialNumber}) is not valid now (${cert.validFrom} to ${cert.validTo})`,
        );
      }
    }
    return certificate.publicKey;
  }

  private check(pem: string): CheckedCertificate {
    const known = this.checked.get(pem);
    if (known) return known;
    let certificate: X509Certificate;
    try {
      certificate = new X509Certificate(pem);
    } catch {
      throw new DomainError('UnknownSigningKey', 'signPubKeyCert is not a PEM certificate');
    }
    const checked = { certificate, refusal: this.refusalOf(certificate) };
    if (this.checked.size >= CACHE_SIZE) this.checked.delete(this.checked.keys().next().value!);
    this.checked.set(pem, checked);
    return checked;
  }

  private refusalOf(certificate: X509Certificate): string | undefined {
    if (!certificate.checkIssued(this.middle) || !certificate.verify(this.middle.publicKey)) {
      return `signPubKeyCert (serial ${certificate.serialNumber}) is not issued by the configured middle certificate`;
    }
    if (this.validateCn && companyOf(certificate) !== UNIONPAY_CN) {
      return `signPubKeyCert (serial ${certificate.serialNumber}) is not issued to ${UNIONPAY_CN} (UNIONPAY_VALIDATE_CN)`;
    }
    return undefined;
  }
}

/**
 * UnionPay's test root and middle (CFCA TEST CS CA, CFCA TEST OCA1), by SHA-256 fingerprint: the
 * only CFCA anchors under which the CN check may be turned off.
 */
const TEST_ANCHORS = new Set([
  'D2:46:EE:60:73:59:55:1B:B5:09:5E:F6:C7:C4:05:99:DE:0E:58:68:59:BA:F4:02:B7:65:F2:58:C1:E0:B4:AE',
  'EB:D8:91:52:5D:18:09:C1:32:B3:2E:3B:27:91:80:02:E0:CD:E1:41:8C:92:4B:44:C3:F6:3B:2A:8D:C6:37:C5',
]);
/** CFCA EV ROOT, under which UnionPay's production certificates are issued. */
const PRODUCTION_ANCHORS = new Set([
  '5C:C3:D7:8E:4E:1D:5E:45:54:7A:04:E6:87:3E:64:F9:0C:F9:53:6D:1C:CC:2E:F8:00:F3:55:C4:C5:FD:70:FD',
]);
const CFCA = 'O=China Financial Certification Authority';

/**
 * With the CN check off, any merchant certificate issued under the trusted middle verifies as
 * UnionPay: refused whenever the root or middle is production's (a known production fingerprint,
 * or any CFCA certificate other than UnionPay's test ones), whatever the gateway URL says.
 */
function refuseProductionAnchors(root: X509Certificate, middle: X509Certificate): void {
  for (const [variable, cert] of [
    ['UNIONPAY_ROOT_CERT_PATH', root],
    ['UNIONPAY_MIDDLE_CERT_PATH', middle],
  ] as const) {
    const fingerprint = cert.fingerprint256;
    const cfca = cert.subject.split('\n').includes(CFCA) && !TEST_ANCHORS.has(fingerprint);
    if (PRODUCTION_ANCHORS.has(fingerprint) || cfca) {
      throw new ConfigurationError(
        `Invalid configuration: UNIONPAY_VALIDATE_CN=false is for UnionPay's test environment only, and ${variable} is a production certificate (SHA-256 ${fingerprint})`,
      );
    }
  }
}

/** The third `@` part of the subject's CN, as the official SDKs read it. */
export function companyOf(certificate: X509Certificate): string | undefined {
  const cn = certificate.subject
    .split('\n')
    .find((line) => line.startsWith('CN='))
    ?.slice(3);
  return cn?.split('@')[2];
}

function readCertificate(path: string, variable: string): X509Certificate {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new ConfigurationError(
      `Invalid configuration: ${variable}: cannot read ${path} (${(error as Error).message})`,
    );
  }
  try {
    return new X509Certificate(bytes);
  } catch (error) {
    throw new ConfigurationError(
      `Invalid configuration: ${variable}: ${path} is not an X.509 certificate (${(error as Error).message})`,
    );
  }
}
