import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { DomainError } from '../../src/domain/domain-error';
import { isPayment, RefundNoticeStatus } from '../../src/domain/notification';
import { ConfigurationError } from '../../src/platform/config/env-validation';
import {
  loadWechatpayAccounts,
  loadWechatpayOptions,
  WechatpayConfig,
} from '../../src/channels/wechatpay/wechatpay.config';
import { wechatpayChannel } from '../../src/channels/wechatpay/wechatpay.registration';
import { maskV2Payer, WechatpayV2Endpoint } from '../../src/channels/wechatpay/v2/wechatpay-v2.endpoint';
import {
  decryptReqInfo,
  encryptReqInfo,
  signV2,
  v2SignatureHolds,
  v2SignString,
  V2SignType,
} from '../../src/channels/wechatpay/v2/wechatpay-v2.sign';
import { WechatpayV2Client } from '../../src/channels/wechatpay/v2/wechatpay-v2.client';
import {
  readBeijingTime,
  V2_MAX_TIME_END_AGE_MS,
  WechatpayV2Verifier,
} from '../../src/channels/wechatpay/v2/wechatpay-v2.verifier';
import { readV2Xml, writeV2Xml } from '../../src/channels/wechatpay/v2/wechatpay-v2.xml';
import {
  v2PaymentFields,
  v2PaymentNotification,
  v2RefundNotification,
} from '../../tools/simulator/wechatpay/v2/v2-notifications';
import { VECTORS_DIR } from '../support/vectors';

const V2 = path.join(VECTORS_DIR, 'wechatpay-v2');
const read = (name: string) => readFileSync(path.join(V2, name));
const OFFICIAL_EXAMPLE_KEY = '192006250b4c09247ec02edce69f6a2d';

const MCHID = '1900009191';
const APPID = 'wxd678efh567hg6787';
const API_V2_KEY = 'Zt8mQ2vLx7Rk4Nw9Pb3Hs6Jd1Fg5Cy0A';
const OTHER_KEY = 'q3Wn8Xr2Lt6Vm9Kb4Pz7Hd1Js5Fc0Gy2';
const account: WechatpayConfig = { mchid: MCHID, appids: [APPID], apiV2Key: API_V2_KEY, platformCertPaths: [] };
const PAYMENT = {
  mchid: MCHID,
  appid: APPID,
  outTradeNo: 'ORDER_V2_0001',
  transactionId: '4200000001202503011234567890',
  totalFee: 1999,
  paidAt: new Date('2025-03-01T04:05:06Z'),
};

function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error.code;
    throw error;
  }
  return 'no error';
}

const delivery = (xml: string | Buffer) => ({
  body: Buffer.isBuffer(xml) ? xml : Buffer.from(xml, 'utf8'),
  headers: { 'content-type': 'text/xml' },
});

describe('WeChat Pay APIv2 real vectors', () => {
  interface ParamVector {
    source: string;
    params: Record<string, string | number>;
    key: string;
    sign_type: V2SignType;
    expected_sign: string;
    sign_string: string;
  }
  const table = JSON.parse(read('param-sign-vectors.json').toString('utf8')) as ParamVector[];

  it.each(table.map((v) => [v.source, v] as const))('should sign %s as its SDK does', (_source, vector) => {
    expect(v2SignString(vector.params, vector.key)).toBe(vector.sign_string);
    expect(signV2(vector.params, vector.key, vector.sign_type)).toBe(vector.expected_sign);
  });

  it.each(table.map((v) => [v.source, v] as const))('should refuse %s once a value changes', (_source, vector) => {
    const fields = Object.fromEntries(Object.entries(vector.params).map(([k, v]) => [k, String(v)]));
    const signed = { ...fields, sign: vector.expected_sign };
    expect(v2SignatureHolds(signed, vector.key, vector.sign_type)).toBe(true);
    const [first] = Object.keys(fields).filter((k) => fields[k] !== '');
    expect(v2SignatureHolds({ ...signed, [first]: `${fields[first]}x` }, vector.key, vector.sign_type)).toBe(false);
    expect(v2SignatureHolds({ ...signed, danger: 'danger' }, vector.key, vector.sign_type)).toBe(false);
  });

  it.each([
    ['easywechat-5.x-PaidTest.notify.xml', '88888888888888888888888888888888'],
    ['skit-TenpayV2-TestVerifyEventSignature.notify.xml', OFFICIAL_EXAMPLE_KEY],
    ['wechatpy-test_dict_to_xml.xml', OFFICIAL_EXAMPLE_KEY],
  ])('should verify the XML of %s as it is, and refuse it with one byte changed', (file, key) => {
    const bytes = read(file);
    expect(v2SignatureHolds(readV2Xml(bytes, 'xml', file), key, 'MD5')).toBe(true);
    expect(v2SignatureHolds(readV2Xml(bytes, 'xml', file), OTHER_KEY, 'MD5')).toBe(false);
    const tampered = Buffer.from(bytes);
    // The first character of the first field's value, in CDATA or not.
    const cdata = tampered.indexOf('<![CDATA[');
    const at = cdata >= 0 ? cdata + '<![CDATA['.length : tampered.indexOf('</') - 1;
    tampered[at] = tampered[at] === 0x30 ? 0x31 : 0x30;
    expect(v2SignatureHolds(readV2Xml(tampered, 'xml', file), key, 'MD5')).toBe(false);
  });

  it('should not verify the documented payment notification, whose key was never published', () => {
    const fields = readV2Xml(read('wechatpay-php-paysuccess.notification.sample.xml'), 'xml', 'sample');
    expect(fields.total_fee).toBe('1');
    expect(fields.attach).toBe('支付测试');
    for (const key of [OFFICIAL_EXAMPLE_KEY, '88888888888888888888888888888888', API_V2_KEY]) {
      expect(v2SignatureHolds(fields, key, 'MD5')).toBe(false);
    }
  });

  it('should read the wechatpy refund notification as it is', () => {
    const sut = new WechatpayV2Verifier([
      {
        mchid: '12345678',
        appids: ['wx4f4bc4dec97d474b'],
        apiV2Key: 'OF4Ne3znh8KqL0V4NqmALQa0uXMYKcEk',
        platformCertPaths: [],
      },
    ]);
    const notification = sut.verify(delivery(read('wechatpy-test_refund_notify.xml')));
    expect(notification).toMatchObject({
      channel: 'WECHATPAY',
      merchantId: '12345678',
      paid: false,
      eventType: 'V2.REFUND.SUCCESS',
      outTradeNo: '2020010418301551404339261814',
      transactionId: '4200000483202001042069747825',
      refund: {
        refundNo: '1234',
        channelRefundId: '50300103182020010413419046597',
        status: RefundNoticeStatus.Succeeded,
        amount: 1,
      },
    });
    const decrypted = decryptReqInfo(
      readV2Xml(read('wechatpy-test_refund_notify.xml'), 'xml', 'n').req_info,
      'OF4Ne3znh8KqL0V4NqmALQa0uXMYKcEk',
    );
    expect(decrypted).toBe(read('wechatpy-test_refund_notify.req_info.decrypted.xml').toString('utf8'));
  });

  it('should refuse the wechatpy refund notification under another key', () => {
    const sut = new WechatpayV2Verifier([
      { mchid: '12345678', appids: [], apiV2Key: OTHER_KEY, platformCertPaths: [] },
    ]);
    expect(codeOf(() => sut.verify(delivery(read('wechatpy-test_refund_notify.xml'))))).toBe('Undecryptable');
  });

  it('should decrypt the gopay and EasyWeChat req_info as their tests do', () => {
    const gopay = read('gopay-TestDecryptRefundNotifyReqInfo.req_info.b64.txt').toString('utf8').trim();
    expect(decryptReqInfo(gopay, 'ziR0QKsTUfMOuochC9RfCdmfHECorQAP')).toBe(
      read('gopay-TestDecryptRefundNotifyReqInfo.req_info.decrypted.xml').toString('utf8'),
    );
    expect(readV2Xml(decryptReqInfo(gopay, 'ziR0QKsTUfMOuochC9RfCdmfHECorQAP'), 'root', 'r').refund_fee).toBe('6');
    expect(decryptReqInfo('FTuPWOW4npLOTY8GQp+JtWXKe3ZFa2wsJC6v9gFoATU=', 'foo-merchant-key')).toBe(
      '<foo><bar>123</bar></foo>',
    );
    expect(() => decryptReqInfo(gopay, OTHER_KEY)).toThrow();
  });
});

/** The vectors' payment is dated 2025: the verifier reads it a minute after, as WeChat would send it. */
const SENT_AT = PAYMENT.paidAt.getTime() + 60_000;
const atSending = () => SENT_AT;

describe(WechatpayV2Verifier.name, () => {
  const sut = new WechatpayV2Verifier([account], atSending);

  it('should verify an MD5 payment notification', () => {
    const notification = sut.verify(delivery(v2PaymentNotification(PAYMENT, API_V2_KEY)));
    expect(isPayment(notification)).toBe(true);
    expect(notification).toMatchObject({
      channel: 'WECHATPAY',
      merchantId: MCHID,
      eventType: 'V2.PAY.SUCCESS',
      outTradeNo: PAYMENT.outTradeNo,
      transactionId: PAYMENT.transactionId,
      amount: 1999,
      currency: 'CNY',
      paidAt: PAYMENT.paidAt,
    });
    // An identical repost is a replay, keyed on the signed fields and sign.
    expect(notification.replayKey).toMatch(/^[0-9a-f]{64}$/);
  });

  it('should verify an HMAC-SHA256 payment notification', () => {
    const xml = v2PaymentNotification(PAYMENT, API_V2_KEY, 'HMAC-SHA256');
    expect(xml).toContain('<sign_type><![CDATA[HMAC-SHA256]]></sign_type>');
    expect(sut.verify(delivery(xml))).toMatchObject({ paid: true, amount: 1999 });
  });

  it('should refuse an HMAC-SHA256 signature sent as MD5 and the reverse', () => {
    const hmac = v2PaymentFields(PAYMENT, API_V2_KEY, 'HMAC-SHA256');
    const withoutType = Object.fromEntries(Object.entries(hmac).filter(([k]) => k !== 'sign_type'));
    expect(codeOf(() => sut.verify(delivery(writeV2Xml(withoutType))))).toBe('InvalidSignature');
    const md5 = v2PaymentFields(PAYMENT, API_V2_KEY);
    expect(codeOf(() => sut.verify(delivery(writeV2Xml({ ...md5, sign_type: 'HMAC-SHA256' }))))).toBe(
      'InvalidSignature',
    );
    expect(codeOf(() => sut.verify(delivery(writeV2Xml({ ...md5, sign_type: 'SHA1' }))))).toBe('InvalidSignature');
  });

  it('should refuse a notification signed with another key, or with a field changed', () => {
    expect(codeOf(() => sut.verify(delivery(v2PaymentNotification(PAYMENT, OTHER_KEY))))).toBe('InvalidSignature');
    const fields = v2PaymentFields(PAYMENT, API_V2_KEY);
    expect(codeOf(() => sut.verify(delivery(writeV2Xml({ ...fields, total_fee: '1' }))))).toBe('InvalidSignature');
    const { sign: _sign, ...unsigned } = fields;
    expect(codeOf(() => sut.verify(delivery(writeV2Xml(unsigned))))).toBe('InvalidSignature');
  });

  it('should refuse another merchant and another application', () => {
    const other = { ...PAYMENT, mchid: '1900000001' };
    expect(codeOf(() => sut.verify(delivery(v2PaymentNotification(other, API_V2_KEY))))).toBe('MerchantMismatch');
    const app = { ...PAYMENT, appid: 'wx0000000000000000' };
    expect(codeOf(() => sut.verify(delivery(v2PaymentNotification(app, API_V2_KEY))))).toBe('MerchantMismatch');
  });

  it("should take a service provider's notification of one of its sub-merchants, and refuse any other", () => {
    const provider = new WechatpayV2Verifier([{ ...account, subMchids: ['1900000109', '1900000110'] }], atSending);
    const bySub = (subMchid?: string) => delivery(v2PaymentNotification({ ...PAYMENT, subMchid }, API_V2_KEY));
    expect(provider.verify(bySub('1900000110'))).toMatchObject({ paid: true, subMerchantId: '1900000110' });
    expect(codeOf(() => provider.verify(bySub('1900000999')))).toBe('MerchantMismatch');
    expect(codeOf(() => provider.verify(bySub(undefined)))).toBe('MerchantMismatch');
    // A direct merchant's account takes no sub-merchant's payment.
    expect(codeOf(() => sut.verify(bySub('1900000109')))).toBe('MerchantMismatch');
    expect(sut.verify(bySub(undefined))).not.toHaveProperty('subMerchantId');
  });

  it("should refuse a provider's refund notice for a sub-merchant it does not serve", () => {
    const provider = new WechatpayV2Verifier([{ ...account, subMchids: ['1900000109'] }]);
    const record = writeV2Xml(
      {
        out_refund_no: 'R1',
        out_trade_no: PAYMENT.outTradeNo,
        refund_fee: '100',
        refund_id: '50000000000000000000',
        refund_status: 'SUCCESS',
        total_fee: '1999',
        transaction_id: PAYMENT.transactionId,
      },
      'root',
    );
    const notice = (subMchId: string) =>
      writeV2Xml({
        return_code: 'SUCCESS',
        appid: APPID,
        mch_id: MCHID,
        sub_mch_id: subMchId,
        nonce_str: 'n',
        req_info: encryptReqInfo(record, API_V2_KEY),
      });

    expect(provider.verify(delivery(notice('1900000109')))).toMatchObject({ subMerchantId: '1900000109' });
    expect(codeOf(() => provider.verify(delivery(notice('1900000999'))))).toBe('MerchantMismatch');
  });

  it('should take a signed FAIL result as not paid, and refuse a return_code FAIL', () => {
    const failed = sut.verify(delivery(v2PaymentNotification({ ...PAYMENT, resultCode: 'FAIL' }, API_V2_KEY)));
    expect(failed).toMatchObject({ paid: false, eventType: 'V2.PAY.FAIL', outTradeNo: PAYMENT.outTradeNo });
    const xml = writeV2Xml({ return_code: 'FAIL', return_msg: 'SIGNERROR' });
    expect(codeOf(() => sut.verify(delivery(xml)))).toBe('MalformedRequest');
  });

  it('should keep a signed notification with a bad total_fee as malformed, paying nothing', () => {
    for (const totalFee of ['0', '1.5', '-1', 'abc']) {
      const fields = v2PaymentFields(PAYMENT, API_V2_KEY);
      const changed = { ...fields, total_fee: totalFee };
      const resigned = { ...changed, sign: signV2(changed, API_V2_KEY, 'MD5') };
      const notification = sut.verify(delivery(writeV2Xml(resigned)));
      expect(notification.paid).toBe(false);
      expect(notification.malformed).toMatch(/total_fee/);
    }
  });

  it('should refuse a DOCTYPE, an entity and XML that is not well formed', () => {
    const signed = v2PaymentNotification(PAYMENT, API_V2_KEY);
    const xxe = `<?xml version="1.0"?><!DOCTYPE xml [<!ENTITY e SYSTEM "file:///etc/passwd">]>${signed.replace('<openid>', '<openid>&e;')}`;
    expect(codeOf(() => sut.verify(delivery(xxe)))).toBe('MalformedRequest');
    const bomb = `<!DOCTYPE xml [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]><xml><x>&b;</x></xml>`;
    expect(codeOf(() => sut.verify(delivery(bomb)))).toBe('MalformedRequest');
    expect(codeOf(() => sut.verify(delivery('<xml><return_code>SUCCESS</xml>')))).toBe('MalformedRequest');
    expect(codeOf(() => sut.verify(delivery('{"return_code":"SUCCESS"}')))).toBe('MalformedRequest');
    expect(codeOf(() => sut.verify(delivery('<xml><a>&undefined;</a></xml>')))).toBe('MalformedRequest');
    expect(codeOf(() => sut.verify(delivery('<xml><a>1</a><a>2</a></xml>')))).toBe('MalformedRequest');
    expect(codeOf(() => sut.verify(delivery('<xml><a><b>1</b></a></xml>')))).toBe('MalformedRequest');
    expect(codeOf(() => sut.verify(delivery(`<xml><a>${'x'.repeat(40_000)}</a></xml>`)))).toBe('MalformedRequest');
  });

  it('should read text values with the predefined references decoded, CDATA as it is', () => {
    expect(readV2Xml('<xml><a>x &amp; y &#20013;</a><b><![CDATA[&amp;]]></b></xml>', 'xml', 't')).toEqual({
      a: 'x & y 中',
      b: '&amp;',
    });
  });

  it('should settle a refund notification, carrying its amount for the check against the refund', () => {
    const xml = v2RefundNotification(
      {
        mchid: MCHID,
        appid: APPID,
        outRefundNo: 'RF_V2_0001',
        refundId: '50000000001202503011234567890',
        outTradeNo: PAYMENT.outTradeNo,
        transactionId: PAYMENT.transactionId,
        refundFee: 500,
        totalFee: 1999,
        status: 'CHANGE',
      },
      API_V2_KEY,
    );
    expect(sut.verify(delivery(xml))).toMatchObject({
      paid: false,
      refund: { refundNo: 'RF_V2_0001', status: RefundNoticeStatus.Abnormal, amount: 500 },
    });
    expect(codeOf(() => new WechatpayV2Verifier([{ ...account, apiV2Key: OTHER_KEY }]).verify(delivery(xml)))).toBe(
      'Undecryptable',
    );
  });

  it('should refuse a req_info that decrypts to something else than a refund record', () => {
    const xml = writeV2Xml({
      return_code: 'SUCCESS',
      mch_id: MCHID,
      appid: APPID,
      req_info: encryptReqInfo('<foo/>', API_V2_KEY),
    });
    expect(codeOf(() => sut.verify(delivery(xml)))).toBe('MalformedRequest');
  });

  describe('time_end freshness', () => {
    const HOUR_MS = 3600_000;
    const at = (offsetMs: number) => new WechatpayV2Verifier([account], () => PAYMENT.paidAt.getTime() + offsetMs);
    const payment = () => delivery(v2PaymentNotification(PAYMENT, API_V2_KEY));

    it('should take a payment within WeChat Pay retries, and one a little ahead of our clock', () => {
      for (const offsetMs of [0, HOUR_MS, 25 * HOUR_MS, V2_MAX_TIME_END_AGE_MS, -4 * 60_000]) {
        expect(at(offsetMs).verify(payment())).toMatchObject({ paid: true, paidAt: PAYMENT.paidAt });
      }
    });

    it('should refuse a payment older than WeChat Pay retries as TimestampExpired (401)', () => {
      for (const offsetMs of [V2_MAX_TIME_END_AGE_MS + 1000, 30 * 24 * HOUR_MS]) {
        expect(codeOf(() => at(offsetMs).verify(payment()))).toBe('TimestampExpired');
      }
      expect(new DomainError('TimestampExpired', '').status).toBe(401);
    });

    it('should refuse a payment dated more than 5 minutes ahead of our clock', () => {
      expect(codeOf(() => at(-6 * 60_000).verify(payment()))).toBe('TimestampExpired');
      expect(codeOf(() => at(-24 * HOUR_MS).verify(payment()))).toBe('TimestampExpired');
    });

    it('should check the signature first: a stale forgery is refused for its signature', () => {
      const forged = delivery(v2PaymentNotification(PAYMENT, OTHER_KEY));
      expect(codeOf(() => at(30 * 24 * HOUR_MS).verify(forged))).toBe('InvalidSignature');
    });

    it('should leave a signed FAIL result, which carries no time_end, to be recorded', () => {
      const failed = v2PaymentFields({ ...PAYMENT, resultCode: 'FAIL' }, API_V2_KEY);
      const { time_end: _timeEnd, sign: _sign, ...unsigned } = failed;
      const signed = { ...unsigned, sign: signV2(unsigned, API_V2_KEY, 'MD5') };
      expect(at(30 * 24 * HOUR_MS).verify(delivery(writeV2Xml(signed)))).toMatchObject({ paid: false });
    });

    it('should keep a signed payment whose time_end does not read as malformed, not refuse it', () => {
      const fields = v2PaymentFields(PAYMENT, API_V2_KEY);
      const changed = { ...fields, time_end: '2025-03-01' };
      const resigned = { ...changed, sign: signV2(changed, API_V2_KEY, 'MD5') };
      expect(at(0).verify(delivery(writeV2Xml(resigned)))).toMatchObject({
        paid: false,
        malformed: expect.stringMatching(/time_end/),
      });
    });
  });

  it('should read time_end as Beijing time', () => {
    expect(readBeijingTime('20140903131540')).toEqual(new Date('2014-09-03T05:15:40Z'));
    expect(codeOf(() => readBeijingTime('20140231131540'))).toBe('MalformedRequest');
    expect(codeOf(() => readBeijingTime('2014-09-03'))).toBe('MalformedRequest');
  });
});

describe(WechatpayV2Endpoint.name, () => {
  const sut = new WechatpayV2Endpoint(new WechatpayV2Verifier([account], atSending));

  it('should ack with v2 SUCCESS XML and fail with FAIL and the reason', () => {
    expect(sut.successReply()).toEqual({
      status: 200,
      headers: { 'content-type': 'text/xml; charset=utf-8' },
      body: '<xml><return_code><![CDATA[SUCCESS]]></return_code><return_msg><![CDATA[OK]]></return_msg></xml>',
    });
    expect(sut.failureReply(401, 'sign does not verify').body).toBe(
      '<xml><return_code><![CDATA[FAIL]]></return_code><return_msg><![CDATA[sign does not verify]]></return_msg></xml>',
    );
  });

  it('should mask the openid of a v2 notification', () => {
    const masked = maskV2Payer(Buffer.from(v2PaymentNotification({ ...PAYMENT, openid: 'oSECRET123' }, API_V2_KEY)));
    expect(masked.toString()).not.toContain('oSECRET123');
    expect(masked.toString()).toContain('<openid><![CDATA[***]]></openid>');
    expect(maskV2Payer(Buffer.from('{"a":1}')).toString()).toBe('{"a":1}');
  });
});

describe('WeChat Pay APIv2 configuration', () => {
  const calls = { requestTimeoutMs: 1000, billDownloadTimeoutMs: 1000 };

  it('should take an APIv2-only account, and open /notify/wechatpay-v2 only when an account has an APIv2 key', () => {
    const options = loadWechatpayOptions({ WECHATPAY_MCHID: MCHID, WECHATPAY_APIV2_KEY: API_V2_KEY });
    expect(options.accounts).toEqual([
      expect.objectContaining({ mchid: MCHID, apiV2Key: API_V2_KEY, apiV3Key: undefined }),
    ]);
    const channel = wechatpayChannel.create(options, calls, Date.now);
    expect(channel.enabled).toBe(true); // an account is configured; /notify/wechatpay has no platform key to verify with
    expect(channel.keyIds()).toEqual([]);
    expect(channel.apiAccounts()).toEqual([MCHID]); // its calls go to APIv2
    expect(channel.otherNotifyEndpoints?.map((e) => [e.notifyPath, e.enabled])).toEqual([['wechatpay-v2', true]]);

    const v3Only = { ...options, accounts: [{ ...options.accounts[0], apiV2Key: undefined }] };
    expect(wechatpayChannel.create(v3Only, calls, Date.now).otherNotifyEndpoints).toEqual([]);
  });

  it('should refuse an APIv2 key that is not 32 characters without printing it', () => {
    const secret = 'not-thirty-two-characters-long';
    let message = '';
    try {
      loadWechatpayOptions({ WECHATPAY_MCHID: MCHID, WECHATPAY_APIV2_KEY: secret });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigurationError);
      message = (error as Error).message;
    }
    expect(message).toContain('WECHATPAY_APIV2_KEY must be exactly 32 characters');
    expect(message).not.toContain(secret);
  });

  it('should still ask for the APIv3 variables once any of them is set', () => {
    expect(() =>
      loadWechatpayOptions({
        WECHATPAY_MCHID: MCHID,
        WECHATPAY_APIV2_KEY: API_V2_KEY,
        WECHATPAY_APIV3_KEY: API_V2_KEY,
      }),
    ).toThrow(/WECHATPAY_PUBLIC_KEY_PATH/);
    expect(() => loadWechatpayOptions({ WECHATPAY_MCHID: MCHID })).toThrow(/WECHATPAY_APIV3_KEY/);
  });
});

describe('WeChat Pay APIv2 in the accounts file', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(path.join(tmpdir(), 'accounts-v2-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const accountsFile = (entries: unknown[]) => {
    const file = path.join(dir, `accounts-${Math.random()}.json`);
    writeFileSync(file, JSON.stringify({ wechatpay: entries }));
    return { PAYMENT_ACCOUNTS_FILE: file };
  };

  it('should take an entry with only mchid and apiV2Key, and one with both dialects', () => {
    const both = {
      mchid: '1900009192',
      apiV3Key: OTHER_KEY,
      apiV2Key: API_V2_KEY,
      platformCertPaths: ['/run/keys/c.pem'],
    };
    const accounts = loadWechatpayAccounts(accountsFile([{ mchid: MCHID, apiV2Key: API_V2_KEY }, both]));
    expect(accounts.map((a) => [a.mchid, a.apiV2Key, a.apiV3Key])).toEqual([
      [MCHID, API_V2_KEY, undefined],
      ['1900009192', API_V2_KEY, OTHER_KEY],
    ]);
  });

  it('should refuse a short apiV2Key without printing it, and an entry with neither key', () => {
    expect(() => loadWechatpayAccounts(accountsFile([{ mchid: MCHID, apiV2Key: 'secret-but-short' }]))).toThrow(
      /wechatpay\[0\]\.apiV2Key must be exactly 32 characters/,
    );
    try {
      loadWechatpayAccounts(accountsFile([{ mchid: MCHID, apiV2Key: 'secret-but-short' }]));
    } catch (error) {
      expect((error as Error).message).not.toContain('secret-but-short');
    }
    expect(() => loadWechatpayAccounts(accountsFile([{ mchid: MCHID }]))).toThrow(/wechatpay\[0\] needs apiV3Key/);
    expect(() =>
      loadWechatpayAccounts(accountsFile([{ mchid: MCHID, apiV2Key: API_V2_KEY, apiV3Key: OTHER_KEY }])),
    ).toThrow(/wechatpay\[0\] needs platformPublicKey or platformCertPaths/);
  });
});

describe(WechatpayV2Client.name, () => {
  const settings = { baseUrl: 'https://127.0.0.1:9', timeoutMs: 1000, downloadTimeoutMs: 1000 };

  it('should refuse at start a p12 that does not open, naming the variable and not the password', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'p12-'));
    const file = path.join(dir, 'apiclient_cert.p12');
    writeFileSync(file, 'not a PKCS#12 file');
    try {
      const account = { ...account2(), apiV2CertPath: file, apiV2CertPassword: 'pass-word-secret' };
      let message = '';
      try {
        new WechatpayV2Client([account], settings);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigurationError);
        message = (error as Error).message;
      }
      expect(message).toContain('WECHATPAY_APIV2_CERT_PATH');
      expect(message).not.toContain('pass-word-secret');
      expect(
        () => new WechatpayV2Client([{ ...account, apiV2CertPath: path.join(dir, 'missing.p12') }], settings),
      ).toThrow(/cannot read/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should leave an account with APIv3 credentials to APIv3, and say an APIv2 account needs an app id', () => {
    const withV3Key = { ...account2(), merchantPrivateKeyPath: '/k.pem', merchantSerialNo: 'AB12CD34' };
    expect(new WechatpayV2Client([withV3Key], settings).handles(MCHID)).toBe(false);
    const sut = new WechatpayV2Client([{ ...account2(), appids: [] }], settings);
    expect(sut.handles(undefined)).toBe(true); // the only account
    expect(sut.unavailableReason(MCHID)).toMatch(/need its app id/);
  });

  function account2() {
    return { mchid: MCHID, appids: [APPID], apiV2Key: API_V2_KEY, platformCertPaths: [] };
  }
});
