import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestRoot, issueCertificate, TestCertificateAuthority } from '../tools/simulator/alipay/alipay-cert-keys';
import { generateRsaKeyPair } from '../tools/simulator/platform-signers';
import { failedStartup } from './support/app-process';
import { createTestPlatforms, TestPlatforms } from './support/test-app';

/**
 * Alipay in certificate mode (公钥证书): the certificates the service refuses to start with, in the real main
 * of a child process. What the service does with certificate-mode notifications and API calls (a test root,
 * two Alipay certificates under it during a rotation, the app's certificate, the fake gateway in certificate
 * mode) is in test/medium/alipay-cert.medium-spec.ts.
 */
const DAY_MS = 24 * 3600 * 1000;

let platforms: TestPlatforms;
let root: TestCertificateAuthority;
let files: { dir: string; next: string; root: string; app: string };
let startups: Record<string, Promise<{ stderr: string; exit: string }>>;

beforeAll(async () => {
  platforms = await createTestPlatforms();
  root = await createTestRoot();
  const next = generateRsaKeyPair();
  const dir = mkdtempSync(join(tmpdir(), 'pcs-alipay-cert-'));
  files = {
    dir,
    next: join(dir, 'alipayCertPublicKey_RSA2.crt'),
    root: join(dir, 'alipayRootCert.crt'),
    app: join(dir, `appCertPublicKey_${platforms.alipay.appId}.crt`),
  };
  const alipayName = `支付宝(中国)网络技术有限公司-${platforms.alipay.sellerId}`;
  writeFileSync(files.next, (await issueCertificate(root, next.publicKeyPem, alipayName)).pem);
  writeFileSync(files.root, root.pem);
  const appKey = platforms.refunds.alipayAppKey.publicKeyPem;
  writeFileSync(files.app, (await issueCertificate(root, appKey, `2088-${platforms.alipay.appId}`)).pem);
  const { ALIPAY_PUBLIC_KEY_PATH: _publicKeyMode, ...env } = platforms.env;
  const certEnv = {
    ...env,
    ALIPAY_PUBLIC_CERT_PATHS: files.next,
    ALIPAY_ROOT_CERT_PATH: files.root,
    ALIPAY_APP_CERT_PATH: files.app,
  };

  const stranger = await createTestRoot('Not Alipay Root');
  const foreign = join(files.dir, 'foreign.crt');
  writeFileSync(foreign, (await issueCertificate(stranger, next.publicKeyPem, 'forged Alipay')).pem);
  const expired = join(files.dir, 'expired.crt');
  const validity = { notBefore: new Date(Date.now() - 400 * DAY_MS), notAfter: new Date(Date.now() - DAY_MS) };
  writeFileSync(expired, (await issueCertificate(root, next.publicKeyPem, 'expired', validity)).pem);
  // The real main, in a child process: it validates the configuration before anything starts.
  startups = {
    foreign: failedStartup({ ...certEnv, ALIPAY_PUBLIC_CERT_PATHS: `${files.next},${foreign}` }),
    expired: failedStartup({ ...certEnv, ALIPAY_PUBLIC_CERT_PATHS: expired }),
    bothModes: failedStartup({ ...certEnv, ALIPAY_PUBLIC_KEY_PATH: platforms.env.ALIPAY_PUBLIC_KEY_PATH }),
  };
  for (const startup of Object.values(startups)) startup.catch(() => undefined);
});

describe('certificates the service refuses to start with', () => {
  it('should refuse an Alipay certificate issued under another root, naming its file', async () => {
    const failed = await startups.foreign;

    expect(failed.exit).not.toBe('0');
    expect(failed.stderr).toContain(
      `ALIPAY_PUBLIC_CERT_PATHS: ${join(files.dir, 'foreign.crt')} is not issued under the root certificates of ${files.root}`,
    );
  });

  it('should refuse an expired Alipay certificate, naming its file', async () => {
    const failed = await startups.expired;

    expect(failed.exit).not.toBe('0');
    expect(failed.stderr).toContain(`ALIPAY_PUBLIC_CERT_PATHS: ${join(files.dir, 'expired.crt')} expired on`);
  });

  it('should refuse the public key and the certificates set together for one app', async () => {
    const failed = await startups.bothModes;

    expect(failed.exit).not.toBe('0');
    expect(failed.stderr).toMatch(/ALIPAY_PUBLIC_KEY_PATH.*certificate mode.*choose one/);
  });
});
