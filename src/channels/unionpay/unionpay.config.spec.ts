import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigurationError } from '../../platform/config/env-validation';
import { loadUnionpayOptions } from './unionpay.config';

const CERTS = { UNIONPAY_ROOT_CERT_PATH: '/run/keys/root.cer', UNIONPAY_MIDDLE_CERT_PATH: '/run/keys/middle.cer' };

describe(loadUnionpayOptions.name, () => {
  const sut = loadUnionpayOptions;

  it('should default to the production gateway with the CN checked, and no merchant', () => {
    expect(sut({})).toEqual({
      accounts: [],
      rootCertPath: undefined,
      middleCertPath: undefined,
      validateCn: true,
      gatewayUrl: 'https://gateway.95516.com',
      fileTransferUrl: 'https://filedownload.95516.com/',
      backUrl: undefined,
    });
  });

  it('should read the shorthand merchant with its PFX, and turn the CN check off only for "false"', () => {
    const options = sut({
      ...CERTS,
      UNIONPAY_MER_ID: '777290058167151',
      UNIONPAY_SIGN_CERT_PATH: '/run/keys/merchant.pfx',
      UNIONPAY_SIGN_CERT_PASSWORD: '000000',
      UNIONPAY_VALIDATE_CN: 'false',
      UNIONPAY_GATEWAY_URL: 'https://gateway.test.95516.com/',
    });

    expect(options).toMatchObject({
      accounts: [{ merId: '777290058167151', signCert: { path: '/run/keys/merchant.pfx', password: '000000' } }],
      validateCn: false,
      gatewayUrl: 'https://gateway.test.95516.com',
    });
    expect(() => sut({ UNIONPAY_VALIDATE_CN: 'no' })).toThrow(/UNIONPAY_VALIDATE_CN must be true or false/);
  });

  it.each([
    [{ UNIONPAY_MER_ID: '777290058167151' }, /UNIONPAY_ROOT_CERT_PATH, UNIONPAY_MIDDLE_CERT_PATH/],
    [{ ...CERTS, UNIONPAY_MER_ID: '7772-900' }, /UNIONPAY_MER_ID must be 15 letters or digits/],
    [{ ...CERTS, UNIONPAY_SIGN_CERT_PATH: '/run/keys/merchant.pfx' }, /without UNIONPAY_MER_ID/],
    [{ UNIONPAY_BACK_URL: '/notify/unionpay' }, /UNIONPAY_BACK_URL/],
    [{ UNIONPAY_VALIDATE_CN: 'false' }, /for UnionPay's test environment only/],
    [
      { UNIONPAY_VALIDATE_CN: 'false', UNIONPAY_GATEWAY_URL: 'https://gateway.95516.com' },
      /for UnionPay's test environment only/,
    ],
  ])('should refuse %j, naming the variable', (env, message) => {
    expect(() => sut(env)).toThrow(ConfigurationError);
    expect(() => sut(env)).toThrow(message);
  });

  it("should read the accounts file's unionpay section, and refuse UNIONPAY_MER_ID beside it", () => {
    const file = join(mkdtempSync(join(tmpdir(), 'pcs-unionpay-accounts-')), 'accounts.yaml');
    writeFileSync(
      file,
      'unionpay:\n  - merId: "777290058167151"\n    signCertPath: /run/keys/a.pfx\n    signCertPassword: "1"\n  - merId: "777290058167152"\n',
    );

    expect(sut({ ...CERTS, PAYMENT_ACCOUNTS_FILE: file }).accounts).toEqual([
      { merId: '777290058167151', signCert: { path: '/run/keys/a.pfx', password: '1' } },
      { merId: '777290058167152', signCert: undefined },
    ]);
    expect(() => sut({ ...CERTS, PAYMENT_ACCOUNTS_FILE: file, UNIONPAY_MER_ID: '777290058167151' })).toThrow(
      /UNIONPAY_MER_ID is set beside PAYMENT_ACCOUNTS_FILE/,
    );
  });
});
