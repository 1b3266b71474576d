import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { BillEntry } from '../../domain/bill';
import { DomainError } from '../../domain/domain-error';
import { ConfigurationError } from '../../platform/config/env-validation';
import { loadWechatpayAccounts } from './wechatpay.config';
import { parseWechatpayBill } from './wechatpay.bill';
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

describe("a sub-merchant's trade bill", () => {
  const header =
    '交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,付款银行,货币种类,' +
    '应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券退款金额,退款类型,退款状态,商品名称,商户数据包,' +
    '手续费,费率,订单金额,申请退款金额,费率备注';
  const line = (sub: string, transactionId: string) =>
    [
      '2026-11-30 12:00:00',
      'wx8888888888888888',
      '1230000109',
      sub,
      '',
      transactionId,
      'ORD-1',
      'o',
      'JSAPI',
      'SUCCESS',
      'CMB_DEBIT',
      'CNY',
      '1.00',
      '0.00',
      '0',
      '0',
      '0.00',
      '0.00',
      '',
      '',
      'x',
      '',
      '0.00000',
      '0.60%',
      '1.00',
      '0.00',
      '',
    ]
      .map((f) => `\`${f}`)
      .join(',');
  const bill = (lines: string[]) =>
    [header, ...lines, '总交易单数,应结订单总金额', `\`${lines.length},\`2.00`, ''].join('\r\n');
  const read = async (text: string, subMchid?: string) => {
    const entries: BillEntry[] = [];
    for await (const e of parseWechatpayBill(Readable.from([Buffer.from(text)]), '1230000109', subMchid)) {
      entries.push(e);
    }
    return entries;
  };

  it('should read the lines of the sub-merchant asked for, and report a line of another one as malformed', async () => {
    const entries = await read(
      bill([line('1900000109', '4200000001'), line('1900000110', '4200000002')]),
      '1900000109',
    );

    expect(entries).toEqual([
      expect.objectContaining({ kind: 'PAYMENT', transactionId: '4200000001', amount: 100 }),
      { kind: 'MALFORMED', line: 3, detail: '特约商户号 1900000110 is not 1900000109' },
    ]);
  });

  it("should read a provider's bill as it is when no sub-merchant is asked for", async () => {
    const entries = await read(bill([line('1900000110', '4200000002')]));

    expect(entries).toEqual([expect.objectContaining({ kind: 'PAYMENT', transactionId: '4200000002' })]);
  });
});

describe('sub_appid of a configured sub-merchant', () => {
  const resource = (subAppid?: string) => ({
    sp_mchid: '1230000109',
    sp_appid: 'wx8888888888888888',
    sub_mchid: '1900000109',
    ...(subAppid === undefined ? {} : { sub_appid: subAppid }),
    out_trade_no: 'ORD-1',
  });

  it('should read WECHATPAY_SUB_MCHIDS entries written mchid:sub_appid', () => {
    const [account] = loadWechatpayAccounts({
      ...SHORTHAND,
      WECHATPAY_SUB_MCHIDS: '1900000109:wxd678efh567hg6999, 1900000110',
    });

    expect(account.subMchids).toEqual(['1900000109', '1900000110']);
    expect(account.subAppids).toEqual({ '1900000109': 'wxd678efh567hg6999' });
  });

  it("should refuse a partner notification whose sub_appid is not the sub-merchant's configured one", () => {
    const [account] = loadWechatpayAccounts({ ...SHORTHAND, WECHATPAY_SUB_MCHIDS: '1900000109:wxd678efh567hg6999' });

    expect(asDirectResource(resource('wxd678efh567hg6999'), account).subMerchantId).toBe('1900000109');
    expect(() => asDirectResource(resource('wx0000000000000000'), account)).toThrow(/sub_appid/);
    expect(() => asDirectResource(resource(undefined), account)).toThrow(/sub_appid/);
  });

  it('should leave sub_appid unchecked for a sub-merchant configured without one', () => {
    const [account] = loadWechatpayAccounts({ ...SHORTHAND, WECHATPAY_SUB_MCHIDS: '1900000109' });

    expect(asDirectResource(resource('wx0000000000000000'), account).subMerchantId).toBe('1900000109');
  });
});
