import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import forge from 'node-forge';
import { certificateExpiries, credentialFilesOf, withDirectoryKeys } from './credential-files';

/** A self-signed certificate valid until `notAfter`, as PEM, and as a PKCS#12 file with its key. */
function certificate(notAfter: Date, password = 'pw'): { pem: string; p12: Buffer } {
  const keys = forge.pki.rsa.generateKeyPair(1024);
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date('2024-01-01T00:00:00Z');
  cert.validity.notAfter = notAfter;
  cert.setSubject([{ name: 'commonName', value: 'test' }]);
  cert.setIssuer([{ name: 'commonName', value: 'test' }]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  const asn1 = forge.pkcs12.toPkcs12Asn1(keys.privateKey, [cert], password, { algorithm: '3des' });
  return { pem: forge.pki.certificateToPem(cert), p12: Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary') };
}

describe('credentialFilesOf', () => {
  it('should name every file of the options by its account and option, whatever the channel', () => {
    const sut = credentialFilesOf(
      {
        accounts: [
          {
            mchid: '1900009191',
            publicKey: { id: 'PUB_KEY_ID_1', path: '/k/pub.pem' },
            platformCertPaths: ['/k/a.pem', '/k/b.pem'],
            merchantPrivateKeyPath: '/k/merchant.pem',
            apiV2CertPath: '/k/apiclient.p12',
            apiV2CertPassword: 'secret',
          },
          { mchid: '1900009292', certificates: { publicCertPaths: ['/k/c.crt'], rootCertPath: '/k/root.crt' } },
          { mchid: '1900009393', signCert: { path: '/k/sign.pfx', password: '000000' } },
        ],
        rootCertPath: '/k/unionpay-root.cer',
        api: { baseUrl: 'https://api.example', apiV2CaPath: '/k/ca.pem' },
      },
      'mchid',
    );
    expect(sut).toEqual([
      { path: '/k/pub.pem', account: '1900009191', kind: 'publicKey' },
      { path: '/k/a.pem', account: '1900009191', kind: 'platformCert' },
      { path: '/k/b.pem', account: '1900009191', kind: 'platformCert' },
      { path: '/k/merchant.pem', account: '1900009191', kind: 'merchantPrivateKey' },
      { path: '/k/apiclient.p12', account: '1900009191', kind: 'apiV2Cert', password: 'secret' },
      { path: '/k/c.crt', account: '1900009292', kind: 'publicCert' },
      { path: '/k/root.crt', account: '1900009292', kind: 'rootCert' },
      { path: '/k/sign.pfx', account: '1900009393', kind: 'signCert', password: '000000' },
      { path: '/k/unionpay-root.cer', account: '', kind: 'rootCert' },
      { path: '/k/ca.pem', account: '', kind: 'apiV2Ca' },
    ]);
  });
});

describe('withDirectoryKeys', () => {
  const options = {
    accounts: [
      {
        mchid: '1900009191',
        publicKey: { id: 'PUB_KEY_ID_1', path: '/k/pub.pem' },
        platformCertPaths: ['/k/a.pem', '/k/b.pem'],
      },
      { mchid: '1900009292', publicKeyPath: '/k/alipay.pem', certificates: { publicCertPaths: ['/k/c.crt'] } },
    ],
  };

  it("should put a directory key in place of the account's file, or beside the key in force during its window", () => {
    const sut = withDirectoryKeys(options, 'mchid', [
      { account: '1900009191', kind: 'publicKey', path: '/d/next.pem', keyId: 'PUB_KEY_ID_2', beside: {} },
      { account: '1900009191', kind: 'platformCert', path: '/d/cert.pem' },
      { account: '1900009292', kind: 'publicKey', path: '/d/alipay-next.pem', beside: { path: '/d/alipay-prev.pem' } },
      { account: '1900009292', kind: 'publicCert', path: '/d/c2.crt', beside: {} },
    ]);
    expect(sut).toEqual({
      accounts: [
        {
          mchid: '1900009191',
          publicKey: { id: 'PUB_KEY_ID_1', path: '/k/pub.pem' },
          nextPublicKey: { id: 'PUB_KEY_ID_2', path: '/d/next.pem' },
          platformCertPaths: ['/d/cert.pem'],
        },
        {
          mchid: '1900009292',
          publicKeyPath: '/d/alipay-prev.pem',
          nextPublicKeyPath: '/d/alipay-next.pem',
          certificates: { publicCertPaths: ['/k/c.crt', '/d/c2.crt'] },
        },
      ],
    });
    // The options themselves are left as they were.
    expect(options.accounts[1].publicKeyPath).toBe('/k/alipay.pem');
  });

  it('should refuse a key for a file the account does not have, and a key id for a file named by none', () => {
    expect(() =>
      withDirectoryKeys(options, 'mchid', [{ account: '1900009191', kind: 'publicCert', path: '/d/x' }]),
    ).toThrow('account 1900009191 has no publicCert file');
    expect(() =>
      withDirectoryKeys(options, 'mchid', [{ account: '1900009292', kind: 'publicKey', path: '/d/x', keyId: 'ID' }]),
    ).toThrow('is named by no key id');
  });
});

describe('certificateExpiries', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pcs-expiry-'));
  const write = (name: string, content: string | Buffer) => {
    writeFileSync(join(dir, name), content);
    return join(dir, name);
  };

  it('should give each kind of an account the latest expiry of its files, a file the first of its certificates, and a bare key none', () => {
    const old = certificate(new Date('2026-03-01T00:00:00Z'));
    const renewed = certificate(new Date('2031-03-01T00:00:00Z'));
    const root = certificate(new Date('2037-01-01T00:00:00Z'));
    const signing = certificate(new Date('2028-05-01T00:00:00Z'), '111111');
    const bareKey = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({
      type: 'spki',
      format: 'pem',
    });
    const sut = certificateExpiries([
      { path: write('old.pem', old.pem), account: 'A', kind: 'platformCert' },
      { path: write('new.pem', renewed.pem), account: 'A', kind: 'platformCert' },
      { path: write('bundle.crt', root.pem + old.pem), account: 'A', kind: 'rootCert' },
      { path: write('roots.crt', root.pem), account: 'C', kind: 'rootCert' },
      { path: write('sign.pfx', signing.p12), account: 'B', kind: 'signCert', password: '111111' },
      { path: write('pub.pem', bareKey), account: 'A', kind: 'publicKey' },
      { path: join(dir, 'missing.pem'), account: 'A', kind: 'appCert' },
    ]);
    expect(sut).toEqual([
      { account: 'A', kind: 'platformCert', validTo: new Date('2031-03-01T00:00:00Z') },
      { account: 'A', kind: 'rootCert', validTo: new Date('2026-03-01T00:00:00Z') },
      { account: 'C', kind: 'rootCert', validTo: new Date('2037-01-01T00:00:00Z') },
      { account: 'B', kind: 'signCert', validTo: new Date('2028-05-01T00:00:00Z') },
    ]);
  });
});
