import { X509Certificate } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigurationError } from '../../src/platform/config/env-validation';
import { parseAnswer, signatureHolds, signFields, signedString } from '../../src/channels/unionpay/unionpay.message';
import { loadSigningCertificate } from '../../src/channels/unionpay/unionpay.sign-cert';
import { generateUnionpayKeySet } from '../../tools/simulator/unionpay/unionpay-keys';
import { signUnionpay, unionpayAnswer, unionpaySignatureHolds } from '../../tools/simulator/unionpay/unionpay-signer';

const keys = generateUnionpayKeySet();
const dir = mkdtempSync(join(tmpdir(), 'pcs-unionpay-pfx-'));
const pfxPath = join(dir, 'merchant.pfx');
writeFileSync(pfxPath, keys.pfx);

describe('loadSigningCertificate', () => {
  it("should read the merchant's PFX: its key, and certId as the certificate's serial in decimal", () => {
    const sut = loadSigningCertificate({ path: pfxPath, password: keys.pfxPassword });

    expect(sut.certId).toBe(keys.merchant.certId);
    expect(sut.certId).toMatch(/^\d+$/);
    // The key signs what the merchant's certificate verifies (the fake gateway's check).
    const fields = new Map([
      ['merId', '777290058167151'],
      ['txnType', '00'],
    ]);
    fields.set('signature', signFields(fields, sut.privateKey));
    expect(unionpaySignatureHolds(Object.fromEntries(fields), new X509Certificate(keys.merchant.pem).publicKey)).toBe(
      true,
    );
  });

  it('should refuse a wrong password at start, naming the variable and the file', () => {
    expect(() => loadSigningCertificate({ path: pfxPath, password: 'wrong' })).toThrow(ConfigurationError);
    expect(() => loadSigningCertificate({ path: pfxPath, password: 'wrong' })).toThrow(
      /UNIONPAY_SIGN_CERT_PATH: .*merchant\.pfx/,
    );
    expect(() => loadSigningCertificate({ path: join(dir, 'none.pfx'), password: '' })).toThrow(/cannot read/);
  });
});

describe('the signed string', () => {
  it('should verify what the simulator signs (two implementations of signMethod 01), and nothing changed', () => {
    const signed = signUnionpay(
      { merId: '777290058167151', orderId: 'ORDER0001', txnAmt: '1', reserved: '' },
      keys.unionpaySigner,
    );
    const fields = new Map(Object.entries(signed));
    const unionpayKey = new X509Certificate(signed.signPubKeyCert).publicKey;

    expect(signatureHolds(fields, unionpayKey)).toBe(true);
    expect(signatureHolds(new Map([...fields, ['txnAmt', '2']]), unionpayKey)).toBe(false);
    // Empty values are signed too, as the SDKs' coverMap2String keeps them.
    expect(signedString(fields)).toContain('&reserved=&');
    expect(signatureHolds(new Map([...fields].filter(([k]) => k !== 'reserved')), unionpayKey)).toBe(false);
  });
});

describe('parseAnswer', () => {
  it('should read raw k=v pairs whose values hold = (base64) or a {} group with & inside', () => {
    const text = unionpayAnswer({ respCode: '00', fileContent: 'eJzT0yMA=', reserved: '{a=1&b=2}', merId: 'M' });

    expect(Object.fromEntries(parseAnswer(text))).toEqual({
      respCode: '00',
      fileContent: 'eJzT0yMA=',
      reserved: '{a=1&b=2}',
      merId: 'M',
    });
  });
});
