import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DomainError } from '../../domain/domain-error';
import { ConfigurationError } from '../../domain/env-validation';
import { loadWechatpayAccounts } from './wechatpay.config';
import { asDirectResource } from './wechatpay.partner';

const SHORTHAND = {
  WECHATPAY_MCHID: '1230000109',
  WECHATPAY_APIV3_KEY: 'a'.repeat(32),
  WECHATPAY_PUBLIC_KEY_ID: 'PUB_KEY_ID_0112300001092025000000000000',
  WECHATPAY_PUBLIC_KEY_PATH: '/run/keys/pub.pem',
};

function accountsFile(entry: object): string {
  const path = join(mkdtempSync(join(tmpdir(), 'wx-partner-')), 'accounts.json');
  const base = { mchid: '1230000109', apiV3Key: 'b'.repeat(32), platformCertPaths: ['/run/keys/cert.pem'] };
  writeFileSync(path, JSON.stringify({ wechatpay: [{ ...base, ...entry }] }));
  return path;
}

describe('WECHATPAY_SUB_MCHIDS', () => {
  const sut = loadWechatpayAccounts;

  it('should make the shorthand account a service provider with those sub-merchants, trimmed', () => {
    const [account] = sut({ ...SHORTHAND, WECHATPAY_SUB_MCHIDS: '1900000109, 1900000110' });

    expect(account.mchid).toBe('1230000109');
    expect(account.subMchids).toEqual(['1900000109', '1900000110']);
  });

  it('should leave an account without it a direct merchant', () => {
    expect(sut(SHORTHAND)[0].subMchids).toEqual([]);
    expect(sut({ ...SHORTHAND, WECHATPAY_SUB_MCHIDS: '' })[0].subMchids).toEqual([]);
  });

  it.each([
    ['1900000109,19000x0110', '"19000x0110", which is not a mchid'],
    ['1900000109,1900000109', 'lists 1900000109 twice'],
    ['1230000109', "1230000109, the service provider's own mchid"],
  ])('should refuse %s, naming the bad value', (value, message) => {
    const load = () => sut({ ...SHORTHAND, WECHATPAY_SUB_MCHIDS: value });

    expect(load).toThrow(ConfigurationError);
    expect(load).toThrow(message);
    expect(load).toThrow('WECHATPAY_SUB_MCHIDS');
  });

  it('should not configure an account from WECHATPAY_SUB_MCHIDS alone', () => {
    expect(() => sut({ WECHATPAY_SUB_MCHIDS: '1900000109' })).toThrow('missing WECHATPAY_MCHID, WECHATPAY_APIV3_KEY');
  });

  it('should be refused beside PAYMENT_ACCOUNTS_FILE', () => {
    const load = () => sut({ PAYMENT_ACCOUNTS_FILE: accountsFile({}), WECHATPAY_SUB_MCHIDS: '1900000109' });

    expect(load).toThrow('WECHATPAY_SUB_MCHIDS is set beside PAYMENT_ACCOUNTS_FILE');
  });
});

describe('subMchids of an accounts-file entry', () => {
  const sut = (entry: object) => loadWechatpayAccounts({ PAYMENT_ACCOUNTS_FILE: accountsFile(entry) });

  it('should make the entry a service provider', () => {
    expect(sut({ subMchids: ['1900000109', '1900000110'] })[0].subMchids).toEqual(['1900000109', '1900000110']);
    expect(sut({})[0].subMchids).toEqual([]);
  });

  it.each([
    [{ subMchids: ['1900000109', 'abc'] }, 'wechatpay[0].subMchids holds "abc", which is not a mchid'],
    [{ subMchids: ['1900000109', '1900000109'] }, 'wechatpay[0].subMchids lists 1900000109 twice'],
    [{ subMchids: '1900000109' }, 'wechatpay[0].subMchids must be an array'],
    [{ subMchids: [1900000109] }, 'wechatpay[0].subMchids must be a string'],
  ])('should refuse %j, naming the bad value', (entry, message) => {
    expect(() => sut(entry)).toThrow(ConfigurationError);
    expect(() => sut(entry)).toThrow(message);
  });
});

describe(asDirectResource.name, () => {
  const provider = { mchid: '1230000109', subMchids: ['1900000109', '1900000110'] };
  const direct = { mchid: '1230000109' };
  const partnerResource = {
    sp_mchid: '1230000109',
    sp_appid: 'wx8888888888888888',
    sub_mchid: '1900000109',
    sub_appid: 'wxd678efh567hg6999',
    out_trade_no: 'ORD-1',
  };
  const mismatch = (fn: () => unknown, message: string) => {
    expect(fn).toThrow(DomainError);
    expect(fn).toThrow(message);
    try {
      fn();
    } catch (error) {
      expect((error as DomainError).code).toBe('MerchantMismatch');
    }
  };

  it("should read a provider's resource with its sp_mchid and sp_appid as mchid and appid, and name its sub-merchant", () => {
    const sut = asDirectResource(partnerResource, provider);

    expect(sut.subMerchantId).toBe('1900000109');
    expect(sut.resource).toEqual({
      mchid: '1230000109',
      appid: 'wx8888888888888888',
      sub_mchid: '1900000109',
      sub_appid: 'wxd678efh567hg6999',
      out_trade_no: 'ORD-1',
    });
  });

  it('should refuse a sub-merchant that is not configured, another provider, or none', () => {
    mismatch(
      () => asDirectResource({ ...partnerResource, sub_mchid: '1900000999' }, provider),
      'sub_mchid 1900000999 is not a configured sub-merchant of sp_mchid 1230000109',
    );
    mismatch(() => asDirectResource({ ...partnerResource, sp_mchid: '1230000999' }, provider), 'sp_mchid 1230000999');
    mismatch(() => asDirectResource({ ...partnerResource, sub_mchid: undefined }, provider), 'sub_mchid (none)');
  });

  it("should refuse a provider's resource for a direct merchant, and a direct one for a provider", () => {
    mismatch(() => asDirectResource(partnerResource, direct), 'has no sub-merchants configured');
    mismatch(
      () => asDirectResource({ mchid: '1230000109', out_trade_no: 'ORD-1' }, provider),
      "a direct merchant's notification (mchid 1230000109) for service provider 1230000109",
    );
  });

  it('should leave a direct resource to a direct merchant as it is', () => {
    const resource = { mchid: '1230000109', appid: 'wx1', out_trade_no: 'ORD-1' };

    expect(asDirectResource(resource, direct)).toEqual({ resource });
  });
});
