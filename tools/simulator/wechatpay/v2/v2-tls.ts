import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The TLS material of a local APIv2 platform: its server certificate, and a merchant's apiclient_cert.p12. */
export interface V2TlsMaterial {
  /** The server's key and certificate (for 127.0.0.1), PEM; the certificate is also the CA the service trusts. */
  serverKeyPem: string;
  serverCertPem: string;
  serverCertPath: string;
  /** The merchant's client certificate as WeChat issues it: PKCS#12, password the mchid. */
  clientP12Path: string;
  /** SHA-256 fingerprint of the client certificate, as node:tls reports it (AA:BB:…). */
  clientFingerprint256: string;
}

/** Made with the openssl command line: Node's crypto cannot write a PKCS#12 file. */
export function createV2TlsMaterial(mchid: string, dir = mkdtempSync(join(tmpdir(), 'pcs-v2-tls-'))): V2TlsMaterial {
  const path = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  const selfSigned = (name: string, subject: string, extra: string[]) =>
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-keyout',
      path(`${name}.key`),
      '-out',
      path(`${name}.crt`),
      '-subj',
      subject,
      ...extra,
    );
  selfSigned('server', '/CN=127.0.0.1', ['-addext', 'subjectAltName=IP:127.0.0.1']);
  selfSigned('client', `/O=Tenpay.com/OU=${mchid}/CN=${mchid}`, []);
  openssl(
    'pkcs12',
    '-export',
    '-inkey',
    path('client.key'),
    '-in',
    path('client.crt'),
    '-out',
    path('apiclient_cert.p12'),
    '-passout',
    `pass:${mchid}`,
  );
  const clientCert = new X509Certificate(readFileSync(path('client.crt')));
  return {
    serverKeyPem: readFileSync(path('server.key'), 'utf8'),
    serverCertPem: readFileSync(path('server.crt'), 'utf8'),
    serverCertPath: path('server.crt'),
    clientP12Path: path('apiclient_cert.p12'),
    clientFingerprint256: clientCert.fingerprint256,
  };
}
