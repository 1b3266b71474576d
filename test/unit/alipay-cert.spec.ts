import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { DomainError } from '../../src/domain/domain-error';
import { ConfigurationError } from '../../src/platform/config/env-validation';
import { isPayment, RawDelivery } from '../../src/domain/notification';
import {
  certSn,
  loadAlipayCertMode,
  parseCertificates,
  rootCertSn,
} from '../../src/channels/alipay/alipay.certificates';
import { AlipayConfig } from '../../src/channels/alipay/alipay.config';
import { AlipayClient } from '../../src/channels/alipay/alipay.client';
import { AlipayVerifier } from '../../src/channels/alipay/alipay.verifier';
import { alipayTradeParams, generateRsaKeyPair } from '../../tools/simulator/platform-signers';
import { alipayCertDelivery, createTestRoot, issueCertificate } from '../../tools/simulator/alipay/alipay-cert-keys';
import { VECTORS_DIR } from '../support/vectors';

/** Real certificates and messages of Alipay's certificate mode, sets A to D; provenance in the folder's README. */
const CERTS = path.join(VECTORS_DIR, 'alipay-cert');
const A = path.join(CERTS, 'a-alipay-sdk-nodejs-all');
const B = path.join(CERTS, 'b-yansongda-0a68106e');
const C = path.join(CERTS, 'c-yansongda-45f1b1fe');
const D = path.join(CERTS, 'd-gopay-5966219c');
/** The root SN every SDK asserts for alipayRootCert.crt: Ant Financial R1 (sha256RSA) and iTrusChina G3 (sha1RSA). */
const ROOT_SN = '687b59193f3f462dd5336e5abf83c5d8_02941eef3187dddf3d3b83462e1dfcf6';
const TODAY = new Date('2026-12-02T00:00:00Z');
const FORM = 'application/x-www-form-urlencoded; charset=utf-8';

/** B's notification was sent 2022-09-18 13:30:09 Beijing time, C's 2023-12-21 16:26:45: verified as Alipay sent them. */
const B_SENT_AT = Date.parse('2022-09-18T05:30:09Z');
const C_SENT_AT = Date.parse('2023-12-21T08:26:45Z');
/** D's certificates were valid from 2019-08-30 to 2021-08-29. */
const D_IN_USE = Date.parse('2020-06-01T00:00:00Z');

function sn(file: string): string {
  return certSn(parseCertificates(readFileSync(file, 'utf8'))[0]);
}

function rootSn(file: string): string {
  return rootCertSn(parseCertificates(readFileSync(file, 'utf8')));
}

function codeOf(call: () => unknown): string {
  try {
    call();
  } catch (error) {
    return error instanceof DomainError ? error.code : `non-domain error: ${String(error)}`;
  }
  return 'no error';
}

function form(body: string): RawDelivery {
  return { headers: { 'content-type': FORM }, body: Buffer.from(body, 'utf8') };
}

describe('Alipay certificate SNs', () => {
  it.each([
    [
      'A alipayCertPublicKey_RSA2.crt',
      path.join(A, 'alipayCertPublicKey_RSA2.crt'),
      '7513daaaa48aa3ba2e4018d84402479c',
    ],
    ['A app certificate', path.join(A, 'appCertPublicKey_2021001161683774.crt'), '866efef280dec9137a87d047ac446315'],
    [
      'B alipayCertPublicKey_RSA2.crt',
      path.join(B, 'alipayCertPublicKey_RSA2.crt'),
      'a359aaadd01ceca03dbc07537da539b9',
    ],
    [
      'B app certificate',
      path.join(B, 'alipayAppCertPublicKey_2016082000295641.crt'),
      'fb5e86cfb784de936dd3594e32381cf8',
    ],
    ['C app certificate', path.join(C, 'alipayAppPublicCert.crt'), 'e90dd23a37c5c7b616e003970817ff82'],
    [
      'D alipayCertPublicKey_RSA2.crt',
      path.join(D, 'alipayCertPublicKey_RSA2.crt'),
      '04afd423ea5bd6f5c5482854ed73278c',
    ],
    ['D app certificate', path.join(D, 'appCertPublicKey.crt'), '4498aaa8ab0c8986c15c41b36186db7d'],
  ])('should give %s the SN its SDK asserts', (_what, file, expected) => {
    expect(sn(file)).toBe(expected);
  });

  it.each([
    ['A', A],
    ['B (CRLF line endings)', B],
    ['C (CRLF line endings)', C],
    ['D', D],
  ])('should give the root bundle of %s the SN the SDKs assert, skipping its SM2 and ECDSA certificates', (_w, dir) => {
    expect(rootSn(path.join(dir, 'alipayRootCert.crt'))).toBe(ROOT_SN);
  });
});

describe(loadAlipayCertMode.name, () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(path.join(tmpdir(), 'alipay-cert-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const dPaths = {
    publicCertPaths: [path.join(D, 'alipayCertPublicKey_RSA2.crt')],
    rootCertPath: path.join(D, 'alipayRootCert.crt'),
    appCertPath: path.join(D, 'appCertPublicKey.crt'),
  };

  it('should load a production certificate that chains, through the intermediate in its file, to the root bundle', () => {
    const sut = loadAlipayCertMode(dPaths, new Date(D_IN_USE));

    expect(sut.alipayCerts.map((c) => c.sn)).toEqual(['04afd423ea5bd6f5c5482854ed73278c']);
    expect(sut.appCertSn).toBe('4498aaa8ab0c8986c15c41b36186db7d');
    expect(sut.rootCertSn).toBe(ROOT_SN);
  });

  it('should refuse an expired Alipay certificate, naming its file', () => {
    const load = () => loadAlipayCertMode(dPaths, TODAY);

    expect(load).toThrow(ConfigurationError);
    expect(load).toThrow(`ALIPAY_PUBLIC_CERT_PATHS: ${dPaths.publicCertPaths[0]} expired on 2021-08-29`);
  });

  it('should refuse an expired app certificate, naming its file', () => {
    const paths = {
      publicCertPaths: [path.join(B, 'alipayCertPublicKey_RSA2.crt')], // until 2023-04-05
      rootCertPath: path.join(B, 'alipayRootCert.crt'),
      appCertPath: path.join(D, 'appCertPublicKey.crt'), // until 2021-09-02
      validateChain: false,
    };
    const load = () => loadAlipayCertMode(paths, new Date('2022-01-01T00:00:00Z'));

    expect(load).toThrow(`ALIPAY_APP_CERT_PATH: ${paths.appCertPath} expired on 2021-09-02`);
  });

  it('should refuse a certificate whose file lacks the intermediate that links it to the root, and take it with it', () => {
    const aLeaf = path.join(A, 'alipayCertPublicKey_RSA2.crt');
    const at = new Date('2021-06-01T00:00:00Z');
    const alone = () => loadAlipayCertMode({ ...dPaths, publicCertPaths: [aLeaf], appCertPath: undefined }, at);
    expect(alone).toThrow(
      `ALIPAY_PUBLIC_CERT_PATHS: ${aLeaf} is not issued under the root certificates of ${dPaths.rootCertPath}`,
    );

    // A's leaf is issued by "Class 2 R1", the intermediate D's file carries after its own leaf.
    const [, intermediate] = readFileSync(dPaths.publicCertPaths[0], 'utf8').match(
      /-----BEGIN[^]+?END CERTIFICATE-----/g,
    )!;
    const withIntermediate = path.join(dir, 'a-with-intermediate.crt');
    writeFileSync(withIntermediate, `${readFileSync(aLeaf, 'utf8').trim()}\n${intermediate}\n`);
    const sut = loadAlipayCertMode({ ...dPaths, publicCertPaths: [withIntermediate], appCertPath: undefined }, at);
    expect(sut.alipayCerts.map((c) => c.sn)).toEqual(['7513daaaa48aa3ba2e4018d84402479c']);
  });

  it('should refuse a sandbox certificate under the production root unless the chain check is off', () => {
    const paths = {
      publicCertPaths: [path.join(B, 'alipayCertPublicKey_RSA2.crt')],
      rootCertPath: path.join(B, 'alipayRootCert.crt'),
    };
    expect(() => loadAlipayCertMode(paths, new Date(B_SENT_AT))).toThrow(/is not issued under the root certificates/);
    expect(loadAlipayCertMode({ ...paths, validateChain: false }, new Date(B_SENT_AT)).alipayCerts[0].sn).toBe(
      'a359aaadd01ceca03dbc07537da539b9',
    );
  });

  it('should refuse a certificate issued by another root, and a certificate listed twice', async () => {
    const root = await createTestRoot();
    const stranger = await createTestRoot('Some Other Root');
    const alipayKey = generateRsaKeyPair();
    const files = {
      root: path.join(dir, 'root.crt'),
      foreign: path.join(dir, 'foreign.crt'),
      ours: path.join(dir, 'ours.crt'),
    };
    writeFileSync(files.root, root.pem);
    writeFileSync(files.foreign, (await issueCertificate(stranger, alipayKey.publicKeyPem, 'Alipay')).pem);
    writeFileSync(files.ours, (await issueCertificate(root, alipayKey.publicKeyPem, 'Alipay')).pem);

    expect(() =>
      loadAlipayCertMode({ publicCertPaths: [files.foreign], rootCertPath: files.root }, new Date()),
    ).toThrow(`ALIPAY_PUBLIC_CERT_PATHS: ${files.foreign} is not issued under the root certificates of ${files.root}`);
    expect(() =>
      loadAlipayCertMode({ publicCertPaths: [files.ours, files.ours], rootCertPath: files.root }, new Date()),
    ).toThrow(/is listed twice/);
  });
});

describe(`${AlipayVerifier.name} in certificate mode`, () => {
  const bApp: AlipayConfig = {
    appId: '2016082000295641',
    sellerId: '2088102172237210',
    certificates: {
      publicCertPaths: [path.join(B, 'alipayCertPublicKey_RSA2.crt')],
      rootCertPath: path.join(B, 'alipayRootCert.crt'),
      appCertPath: path.join(B, 'alipayAppCertPublicKey_2016082000295641.crt'),
      validateChain: false, // sandbox
    },
  };
  const bBody = readFileSync(path.join(B, 'notify.trade_status_sync.form-urlencoded.txt'), 'utf8');

  describe('real notifications, verified at the time Alipay sent them', () => {
    it('should verify set B (sandbox, subject with a +) as it is', () => {
      const sut = new AlipayVerifier([bApp], {}, () => B_SENT_AT);

      const result = sut.verify(form(bBody));

      expect(isPayment(result)).toBe(true);
      expect(result).toMatchObject({
        merchantId: '2016082000295641',
        outTradeNo: 'web1663478942',
        transactionId: '2022091822001498120503050754',
        amount: 1,
        paid: true,
      });
    });

    it('should verify set C (sandbox, alipayPublicCert.crt) as it is', () => {
      const cApp: AlipayConfig = {
        appId: '9021000122682882',
        sellerId: '2088721003899159',
        certificates: {
          publicCertPaths: [path.join(C, 'alipayPublicCert.crt')],
          rootCertPath: path.join(C, 'alipayRootCert.crt'),
          validateChain: false,
        },
      };
      const sut = new AlipayVerifier([cApp], {}, () => C_SENT_AT);

      expect(
        sut.verify(form(readFileSync(path.join(C, 'notify.trade_status_sync.form-urlencoded.txt'), 'utf8'))),
      ).toMatchObject({ outTradeNo: '1703147160', amount: 1 });
    });

    it.each([
      ['total_amount', 'total_amount=0.01', 'total_amount=0.02'],
      ['the + of subject, decoded as a space', 'subject=yansongda%2B', 'subject=yansongda+'],
      ['trade_no', 'trade_no=2022091822001498120503050754', 'trade_no=2022091822001498120503050755'],
    ])('should refuse set B with %s changed', (_what, from, to) => {
      expect(bBody.split(from)).toHaveLength(2);
      const sut = new AlipayVerifier([bApp], {}, () => B_SENT_AT);

      expect(codeOf(() => sut.verify(form(bBody.replace(from, to))))).toBe('InvalidSignature');
    });

    it('should leave alipay_cert_sn out of the signed string: the real notification naming its certificate verifies', () => {
      const sut = new AlipayVerifier([bApp], {}, () => B_SENT_AT);

      expect(codeOf(() => sut.verify(form(`${bBody}&alipay_cert_sn=a359aaadd01ceca03dbc07537da539b9`)))).toBe(
        'no error',
      );
      // Named or not, it is the same signed delivery: one replay key.
      expect(sut.verify(form(`${bBody}&alipay_cert_sn=a359aaadd01ceca03dbc07537da539b9`)).replayKey).toBe(
        sut.verify(form(bBody)).replayKey,
      );
      expect(codeOf(() => sut.verify(form(`${bBody}&alipay_cert_sn=7513daaaa48aa3ba2e4018d84402479c`)))).toBe(
        'InvalidSignature',
      );
    });

    it('should not start with set B today: its certificate expired on 2023-04-05', () => {
      expect(() => new AlipayVerifier([bApp], {}, () => TODAY.getTime())).toThrow(/expired on 2023-04-05/);
    });
  });

  describe('a real signed answer (set D, alipay.trade.query)', () => {
    let dir: string;
    beforeAll(() => (dir = mkdtempSync(path.join(tmpdir(), 'alipay-client-'))));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    const dApp: AlipayConfig = {
      appId: '2019090366874103',
      certificates: {
        publicCertPaths: [path.join(D, 'alipayCertPublicKey_RSA2.crt')],
        rootCertPath: path.join(D, 'alipayRootCert.crt'),
        appCertPath: path.join(D, 'appCertPublicKey.crt'),
        validateChain: true,
      },
    };
    const signData = readFileSync(path.join(D, 'sync-response.alipay.trade.query.signData.json'), 'utf8');
    const sign = readFileSync(path.join(D, 'sync-response.alipay.trade.query.sign.txt'), 'utf8');

    it('should verify it with the certificate its alipay_cert_sn names, and with none named', () => {
      const sut = new AlipayVerifier([dApp], {}, () => D_IN_USE);

      expect(sut.verifyResponse(dApp.appId, signData, sign, '04afd423ea5bd6f5c5482854ed73278c')).toBe(true);
      expect(sut.verifyResponse(dApp.appId, signData, sign)).toBe(true);
      expect(sut.requestCertSns(dApp.appId)).toEqual({
        app_cert_sn: '4498aaa8ab0c8986c15c41b36186db7d',
        alipay_root_cert_sn: ROOT_SN,
      });
    });

    it('should make API calls unavailable without the app certificate, whose SN they must carry', () => {
      const withoutAppCert = { ...dApp, certificates: { ...dApp.certificates!, appCertPath: undefined } };
      const verifier = new AlipayVerifier([withoutAppCert], {}, () => D_IN_USE);
      const keyPath = path.join(dir, 'app-key.pem');
      writeFileSync(keyPath, generateRsaKeyPair().privateKeyPem);
      const api = { gatewayUrl: 'http://127.0.0.1:9/gateway.do', timeoutMs: 1000, downloadTimeoutMs: 1000 };

      const sut = new AlipayClient([{ ...withoutAppCert, appPrivateKeyPath: keyPath }], api, verifier);

      expect(sut.unavailableReason(dApp.appId)).toMatch(
        /certificate mode need its app certificate \(ALIPAY_APP_CERT_PATH/,
      );
      expect(sut.appIds()).toEqual([]);
      expect(verifier.requestCertSns(dApp.appId)).toEqual({ app_cert_sn: undefined, alipay_root_cert_sn: ROOT_SN });
    });

    it('should refuse it when it names a certificate not configured, or once changed', () => {
      const sut = new AlipayVerifier([dApp], {}, () => D_IN_USE);

      expect(sut.verifyResponse(dApp.appId, signData, sign, '7513daaaa48aa3ba2e4018d84402479c')).toBe(false);
      expect(sut.verifyResponse(dApp.appId, signData.replace('"0.01"', '"0.02"'), sign)).toBe(false);
    });
  });

  describe('a rotation (generated certificates)', () => {
    let dir: string;
    let signers: { old: ReturnType<typeof generateRsaKeyPair>; next: ReturnType<typeof generateRsaKeyPair> };
    let sns: { old: string; next: string };
    let sut: AlipayVerifier;
    const appId = '2021000117600001';
    const paidAt = new Date();

    beforeAll(async () => {
      dir = mkdtempSync(path.join(tmpdir(), 'alipay-rotation-'));
      const root = await createTestRoot();
      signers = { old: generateRsaKeyPair(), next: generateRsaKeyPair() };
      const old = await issueCertificate(root, signers.old.publicKeyPem, 'Alipay old');
      const next = await issueCertificate(root, signers.next.publicKeyPem, 'Alipay next');
      sns = { old: old.sn, next: next.sn };
      writeFileSync(path.join(dir, 'root.crt'), root.pem);
      writeFileSync(path.join(dir, 'old.crt'), old.pem);
      writeFileSync(path.join(dir, 'next.crt'), next.pem);
      sut = new AlipayVerifier([
        {
          appId,
          certificates: {
            publicCertPaths: [path.join(dir, 'old.crt'), path.join(dir, 'next.crt')],
            rootCertPath: path.join(dir, 'root.crt'),
            validateChain: true,
          },
        },
      ]);
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    const params = () =>
      alipayTradeParams({ appId, outTradeNo: 'R1', tradeNo: '2026120222001', totalAmount: '1.00', paidAt });

    it('should verify with the certificate alipay_cert_sn names, and with any configured one when none is named', () => {
      expect(codeOf(() => sut.verify(form(alipayCertDelivery(signers.next.privateKey, sns.next, params()))))).toBe(
        'no error',
      );
      expect(codeOf(() => sut.verify(form(alipayCertDelivery(signers.old.privateKey, sns.old, params()))))).toBe(
        'no error',
      );
      const unnamed = alipayCertDelivery(signers.next.privateKey, sns.next, params()).replace(
        /&alipay_cert_sn=\w+/,
        '',
      );
      expect(codeOf(() => sut.verify(form(unnamed)))).toBe('no error');
    });

    it('should refuse a notification naming another certificate than the one that signed it, or an unknown one', () => {
      expect(codeOf(() => sut.verify(form(alipayCertDelivery(signers.next.privateKey, sns.old, params()))))).toBe(
        'InvalidSignature',
      );
      expect(
        codeOf(() => sut.verify(form(alipayCertDelivery(signers.next.privateKey, 'f'.repeat(32), params())))),
      ).toBe('InvalidSignature');
    });

    it('should show the SNs for the start line', () => {
      expect(sut.certSns()).toEqual([
        `alipay_cert_sn=${sns.old}`,
        `alipay_cert_sn=${sns.next}`,
        expect.stringMatching(/^alipay_root_cert_sn=[0-9a-f]{32}$/),
      ]);
    });
  });
});

describe('Alipay certificates checked at each use', () => {
  const HOUR_MS = 3600 * 1000;
  const appId = '2021000117600001';
  let dir: string;
  let signers: { expired: ReturnType<typeof generateRsaKeyPair>; current: ReturnType<typeof generateRsaKeyPair> };
  let sns: { expired: string; current: string };
  let currentNotAfter: Date;
  const config = (publicCertPaths: string[]): AlipayConfig => ({
    appId,
    certificates: { publicCertPaths, rootCertPath: path.join(dir, 'root.crt'), validateChain: true },
  });
  const paramsAt = (at: Date) =>
    alipayTradeParams({ appId, outTradeNo: 'R1', tradeNo: '2026120222001', totalAmount: '1.00', paidAt: at });

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'alipay-validity-'));
    const root = await createTestRoot();
    signers = { expired: generateRsaKeyPair(), current: generateRsaKeyPair() };
    currentNotAfter = new Date(Date.now() + 2 * 24 * HOUR_MS);
    const expired = await issueCertificate(root, signers.expired.publicKeyPem, 'Alipay expired', {
      notBefore: new Date(Date.now() - 400 * 24 * HOUR_MS),
      notAfter: new Date(Date.now() - 24 * HOUR_MS),
    });
    const current = await issueCertificate(root, signers.current.publicKeyPem, 'Alipay current', {
      notAfter: currentNotAfter,
    });
    sns = { expired: expired.sn, current: current.sn };
    writeFileSync(path.join(dir, 'root.crt'), root.pem);
    writeFileSync(path.join(dir, 'expired.crt'), expired.pem);
    writeFileSync(path.join(dir, 'current.crt'), current.pem);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('should start with an expired certificate left beside a current one, skipping it', () => {
    const sut = new AlipayVerifier([config([path.join(dir, 'expired.crt'), path.join(dir, 'current.crt')])]);

    expect(sut.certSns()).not.toContain(`alipay_cert_sn=${sns.expired}`);
    const now = new Date();
    expect(
      codeOf(() => sut.verify(form(alipayCertDelivery(signers.current.privateKey, sns.current, paramsAt(now))))),
    ).toBe('no error');
    expect(
      codeOf(() => sut.verify(form(alipayCertDelivery(signers.expired.privateKey, sns.expired, paramsAt(now))))),
    ).toBe('InvalidSignature');
  });

  it('should refuse a notification signed an hour after the certificate expired while the service ran', () => {
    let clock = Date.now();
    const sut = new AlipayVerifier([config([path.join(dir, 'current.crt')])], {}, () => clock);
    clock = currentNotAfter.getTime() + HOUR_MS;
    const late = alipayCertDelivery(signers.current.privateKey, sns.current, paramsAt(new Date(clock - 1000)));

    expect(codeOf(() => sut.verify(form(late)))).toBe('InvalidSignature');
    const unnamed = late.replace(/&alipay_cert_sn=\w+/, '');
    expect(codeOf(() => sut.verify(form(unnamed)))).toBe('InvalidSignature');
  });
});
