import { createHash, createPublicKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { DomainError } from '../../src/domain/domain-error';
import { AlipayConfig } from '../../src/channels/alipay/alipay.config';
import {
  alipayDelivery,
  alipayRefundParams,
  alipayTradeParams,
  generateRsaKeyPair,
  RsaKeyPair,
} from '../../tools/simulator/platform-signers';
import { VECTORS_DIR } from '../support/vectors';
import { AlipayVerifier, parseForm } from '../../src/channels/alipay/alipay.verifier';
import { isPayment, RawDelivery } from '../../src/domain/notification';

const VECTORS = VECTORS_DIR;
const FORM = 'application/x-www-form-urlencoded; charset=utf-8';
const APP_ID = '2021004100000001';
const SELLER_ID = '2088621900000001';
const PAID_AT = new Date('2025-03-01T12:00:00Z');
/** The verifiers' clock: a minute after the generated payments were notified. */
const NOW = () => PAID_AT.getTime() + 60_000;
/** The vector's notify_time, 2019-08-15 15:56:25 Beijing time: it is verified as Alipay sent it. */
const VECTOR_SENT_AT = () => Date.parse('2019-08-15T07:56:25Z');

/** The error code a call throws, so that a wrong code or no error at all shows up in the assertion. */
function codeOf(call: () => unknown): string {
  try {
    call();
  } catch (error) {
    return error instanceof DomainError ? error.code : `non-domain error: ${String(error)}`;
  }
  return 'no error';
}

function messageOf(call: () => unknown): string {
  try {
    call();
  } catch (error) {
    return (error as Error).message;
  }
  return 'no error';
}

function form(body: string, contentType = FORM): RawDelivery {
  return { headers: { 'content-type': contentType }, body: Buffer.from(body, 'utf8') };
}

describe(AlipayVerifier.name, () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'alipay-verifier-'));
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  describe('real vector from alipay-sdk-nodejs-all', () => {
    const vectorBody = readFileSync(path.join(VECTORS, 'alipay-2019-trade-success.form'), 'utf8');
    let sut: AlipayVerifier;

    beforeEach(() => {
      sut = new AlipayVerifier(
        [
          {
            appId: '2019073166072302',
            sellerId: '2088531891668739',
            publicKeyPath: path.join(VECTORS, 'alipay-2019-public-key.pem'),
          },
        ],
        {},
        VECTOR_SENT_AT,
      );
    });

    it('should verify the notification as it is', () => {
      const delivery = form(vectorBody);

      const result = sut.verify(delivery);

      expect(result).toEqual({
        channel: 'ALIPAY',
        merchantId: '2019073166072302',
        eventType: 'TRADE_SUCCESS',
        paid: true,
        outTradeNo: '20190815155618536-564-57',
        transactionId: '2019081522001468450512505578',
        amount: 10,
        currency: 'CNY',
        paidAt: new Date('2019-08-15T07:56:24Z'),
        rawBody: delivery.body,
        headers: { 'content-type': FORM },
        replayKey: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
    });

    it('should refuse the same notification replayed today, years after Alipay sent it', () => {
      const today = new AlipayVerifier(
        [
          {
            appId: '2019073166072302',
            sellerId: '2088531891668739',
            publicKeyPath: path.join(VECTORS, 'alipay-2019-public-key.pem'),
          },
        ],
        {},
        () => Date.parse('2026-12-01T00:00:00Z'),
      );

      expect(codeOf(() => today.verify(form(vectorBody)))).toBe('TimestampExpired');
    });

    it.each([
      ['total_amount', 'total_amount=0.10', 'total_amount=0.11'],
      ['out_trade_no', 'out_trade_no=20190815155618536-564-57', 'out_trade_no=20190815155618536-564-58'],
      ['trade_no', 'trade_no=2019081522001468450512505578', 'trade_no=2019081522001468450512505579'],
      ['buyer_id', 'buyer_id=2088102534368455', 'buyer_id=2088102534368456'],
      ['subject (a UTF-8 byte)', 'subject=%E8%AF%AD', 'subject=%E8%AF%AE'],
      ['gmt_payment', 'gmt_payment=2019-08-15+15%3A56%3A24', 'gmt_payment=2019-08-15+15%3A56%3A25'],
      ['fund_bill_list', '%22fundChannel%22%3A%22ALIPAYACCOUNT', '%22fundChannel%22%3A%22ALIPAYACCOUNU'],
      ['point_amount (last parameter)', 'point_amount=0.00', 'point_amount=0.01'],
      ['the signature itself', 'sign=QfTb8', 'sign=QfTb9'],
    ])('should reject the notification with one character of %s changed', (_what, from, to) => {
      expect(vectorBody.split(from)).toHaveLength(2);
      const tampered = vectorBody.replace(from, to);
      expect(tampered.length).toBe(vectorBody.length);
      expect([...tampered].filter((char, i) => char !== vectorBody[i])).toHaveLength(1);

      expect(codeOf(() => sut.verify(form(tampered)))).toBe('InvalidSignature');
    });
  });

  describe('generated deliveries', () => {
    let alipay: RsaKeyPair;
    let stranger: RsaKeyPair;
    let sut: AlipayVerifier;

    beforeAll(() => {
      alipay = generateRsaKeyPair();
      stranger = generateRsaKeyPair();
      writeFileSync(path.join(dir, 'alipay-public-key.pem'), alipay.publicKeyPem);
    });

    const config = (overrides: Partial<AlipayConfig> = {}): AlipayConfig => ({
      appId: APP_ID,
      sellerId: SELLER_ID,
      publicKeyPath: path.join(dir, 'alipay-public-key.pem'),
      ...overrides,
    });
    const trade = (overrides: Partial<Parameters<typeof alipayTradeParams>[0]> = {}) =>
      alipayTradeParams({
        appId: APP_ID,
        sellerId: SELLER_ID,
        outTradeNo: 'ORD20250301120000001',
        tradeNo: '2025030122001468451400000001',
        totalAmount: '88.88',
        paidAt: PAID_AT,
        ...overrides,
      });

    beforeEach(() => {
      sut = new AlipayVerifier([config()], {}, NOW);
    });

    it('should return the normalized payment fields', () => {
      const delivery = form(alipayDelivery(alipay.privateKey, trade()));

      const result = sut.verify(delivery);

      expect(result).toEqual({
        channel: 'ALIPAY',
        merchantId: APP_ID,
        eventType: 'TRADE_SUCCESS',
        paid: true,
        outTradeNo: 'ORD20250301120000001',
        transactionId: '2025030122001468451400000001',
        amount: 8888,
        currency: 'CNY',
        paidAt: PAID_AT,
        rawBody: delivery.body,
        headers: { 'content-type': FORM },
        replayKey: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
    });

    it.each([
      ['TRADE_SUCCESS', true],
      ['TRADE_FINISHED', true],
      ['WAIT_BUYER_PAY', false],
      ['TRADE_CLOSED', false],
    ])('should report trade_status %s as paid=%s', (tradeStatus, paid) => {
      const result = sut.verify(form(alipayDelivery(alipay.privateKey, trade({ tradeStatus }))));

      expect(result).toMatchObject({ eventType: tradeStatus, paid });
    });

    it('should reject another app_id', () => {
      const body = alipayDelivery(alipay.privateKey, trade({ appId: '2021004100000002' }));

      expect(codeOf(() => sut.verify(form(body)))).toBe('MerchantMismatch');
    });

    it('should reject a validly signed auth_app_id that is not ours, and accept our own', () => {
      const foreign = alipayDelivery(alipay.privateKey, { ...trade(), auth_app_id: '2021004100000009' });
      const ours = alipayDelivery(alipay.privateKey, { ...trade(), auth_app_id: trade().app_id });

      expect(codeOf(() => sut.verify(form(foreign)))).toBe('MerchantMismatch');
      expect(codeOf(() => sut.verify(form(ours)))).toBe('no error');
    });

    it("should reject an auth_app_id that is another of our apps, not this account's", () => {
      const twoApps = new AlipayVerifier([config(), config({ appId: '2021004100000003' })], {}, NOW);
      const otherOfOurs = alipayDelivery(alipay.privateKey, { ...trade(), auth_app_id: '2021004100000003' });

      expect(codeOf(() => twoApps.verify(form(otherOfOurs)))).toBe('MerchantMismatch');
    });

    it('should name the app and the fingerprint of the public key it tried when the sign does not verify', () => {
      const body = alipayDelivery(stranger.privateKey, trade());
      const fingerprint = createHash('sha256')
        .update(createPublicKey(alipay.publicKeyPem).export({ type: 'spki', format: 'der' }))
        .digest('hex');

      expect(messageOf(() => sut.verify(form(body)))).toBe(
        `sign does not verify with the Alipay public key of app_id ${APP_ID} (SHA-256 ${fingerprint.slice(0, 16)})`,
      );
    });

    it('should reject another seller_id', () => {
      const body = alipayDelivery(alipay.privateKey, trade({ sellerId: '2088621900000002' }));

      expect(codeOf(() => sut.verify(form(body)))).toBe('MerchantMismatch');
    });

    it('should reject sign_type RSA even when its SHA1withRSA signature is genuine', () => {
      const body = alipayDelivery(alipay.privateKey, trade(), { signType: 'RSA' });

      expect(codeOf(() => sut.verify(form(body)))).toBe('InvalidSignature');
    });

    it('should reject sign_type RSA even over a signature that verifies as RSA2', () => {
      // sign_type is not part of the signed content, so relabelling keeps the SHA256withRSA signature valid.
      const body = alipayDelivery(alipay.privateKey, trade());
      expect(body.split('&sign_type=RSA2')).toHaveLength(2);

      expect(codeOf(() => sut.verify(form(body.replace('&sign_type=RSA2', '&sign_type=RSA'))))).toBe(
        'InvalidSignature',
      );
    });

    it('should reject a notification signed by another key', () => {
      const body = alipayDelivery(stranger.privateKey, trade());

      expect(codeOf(() => sut.verify(form(body)))).toBe('InvalidSignature');
    });

    it('should reject a notification without sign', () => {
      const body = alipayDelivery(alipay.privateKey, trade()).replace(/&sign=[^&]*/, '');

      expect(codeOf(() => sut.verify(form(body)))).toBe('MalformedRequest');
    });

    it.each(['1e2', '-1', '0.001', '', '1.2.3', ' 1.00', '0.00'])(
      'should read a validly signed total_amount of "%s" as malformed: kept and acked, never a payment',
      (totalAmount) => {
        const body = alipayDelivery(alipay.privateKey, trade({ totalAmount }));
        expect(codeOf(() => sut.verifySignature(parseForm(Buffer.from(body))))).toBe('no error');

        const result = sut.verify(form(body));

        expect(result).toMatchObject({ paid: false, malformed: expect.stringContaining('total_amount') });
        expect(isPayment(result)).toBe(false);
      },
    );

    it.each(['application/json', 'text/plain', ''])('should reject the content type "%s"', (contentType) => {
      const body = alipayDelivery(alipay.privateKey, trade());

      expect(codeOf(() => sut.verify(form(body, contentType)))).toBe('MalformedRequest');
    });

    it('should reject a parameter that appears twice', () => {
      const body = alipayDelivery(alipay.privateKey, trade());

      expect(codeOf(() => sut.verify(form(`${body}&trade_status=TRADE_SUCCESS`)))).toBe('MalformedRequest');
      expect(codeOf(() => sut.verify(form(`out_trade_no=ORD20250301120000002&${body}`)))).toBe('MalformedRequest');
    });

    it.each(['gbk', 'GB2312', 'iso-8859-1'])('should reject charset %s', (charset) => {
      const body = alipayDelivery(alipay.privateKey, { ...trade(), charset });

      expect(codeOf(() => sut.verify(form(body)))).toBe('MalformedRequest');
    });

    it('should accept charset UTF-8 in upper case', () => {
      const body = alipayDelivery(alipay.privateKey, { ...trade(), charset: 'UTF-8' });

      expect(codeOf(() => sut.verify(form(body)))).toBe('no error');
    });

    describe('notify_time', () => {
      const HOUR_MS = 3600_000;
      const sentAt = (clockMs: number, notifyMaxAgeSeconds?: number) =>
        codeOf(() =>
          new AlipayVerifier([config()], { notifyMaxAgeSeconds }, () => clockMs).verify(
            form(alipayDelivery(alipay.privateKey, trade())),
          ),
        );
      const notifiedAt = PAID_AT.getTime() + 1000;

      it('should accept a notification sent up to 26 hours ago by default, Alipay retrying for 25', () => {
        expect(sentAt(notifiedAt + 26 * HOUR_MS)).toBe('no error');
      });

      it('should refuse a notification sent more than 26 hours ago by default', () => {
        expect(sentAt(notifiedAt + 26 * HOUR_MS + 1000)).toBe('TimestampExpired');
      });

      it('should refuse by ALIPAY_NOTIFY_MAX_AGE_SECONDS when it is set', () => {
        expect(sentAt(notifiedAt + 2 * HOUR_MS, 2 * 3600)).toBe('no error');
        expect(sentAt(notifiedAt + 2 * HOUR_MS + 1000, 2 * 3600)).toBe('TimestampExpired');
      });

      it('should accept a notify_time up to 5 minutes ahead of our clock, and refuse one further in the future', () => {
        expect(sentAt(notifiedAt - 5 * 60_000)).toBe('no error');
        expect(sentAt(notifiedAt - 5 * 60_000 - 1000)).toBe('TimestampExpired');
      });

      it('should refuse a notification without notify_time', () => {
        const { notify_time: _omitted, ...params } = trade();

        expect(codeOf(() => sut.verify(form(alipayDelivery(alipay.privateKey, params))))).toBe('MalformedRequest');
      });
    });

    describe('refund notifications', () => {
      const OUT_BIZ_NO = 'ER9D7E9CAD981A646C1A0B46E1F8D8EFC0';
      const refundNotice = (overrides: Partial<Parameters<typeof alipayRefundParams>[0]> = {}) =>
        alipayRefundParams({
          appId: APP_ID,
          sellerId: SELLER_ID,
          outTradeNo: 'ORD20250301120000001',
          tradeNo: '2025030122001468451400000001',
          totalAmount: '88.88',
          paidAt: PAID_AT,
          outBizNo: OUT_BIZ_NO,
          refundFee: '88.88',
          ...overrides,
        });

      it('should read a full refund (TRADE_CLOSED) as a succeeded refund that pays nothing', () => {
        const delivery = form(alipayDelivery(alipay.privateKey, refundNotice()));

        const result = sut.verify(delivery);

        expect(result).toEqual({
          channel: 'ALIPAY',
          merchantId: APP_ID,
          eventType: 'REFUND/TRADE_CLOSED',
          paid: false,
          outTradeNo: 'ORD20250301120000001',
          transactionId: '2025030122001468451400000001',
          refund: { refundNo: OUT_BIZ_NO, status: 'SUCCEEDED' },
          rawBody: delivery.body,
          headers: { 'content-type': FORM },
          replayKey: expect.stringMatching(/^[0-9a-f]{64}$/),
        });
        expect(isPayment(result)).toBe(false);
      });

      it('should read a partial refund (TRADE_SUCCESS) as a refund, never as a payment', () => {
        const params = refundNotice({ tradeStatus: 'TRADE_SUCCESS', refundFee: '10.00' });
        expect(params.trade_status).toBe('TRADE_SUCCESS');
        expect(params.gmt_payment).toBeTruthy();

        const result = sut.verify(form(alipayDelivery(alipay.privateKey, params)));

        expect(result).toMatchObject({
          eventType: 'REFUND/TRADE_SUCCESS',
          paid: false,
          refund: { refundNo: OUT_BIZ_NO, status: 'SUCCEEDED' },
        });
        expect(isPayment(result)).toBe(false);
        expect(result.amount).toBeUndefined();
        expect(result.paidAt).toBeUndefined();
      });

      it('should read the same parameters without out_biz_no and refund_fee as a payment', () => {
        const { out_biz_no, refund_fee, ...trade } = refundNotice({ tradeStatus: 'TRADE_SUCCESS' });
        expect([out_biz_no, refund_fee]).toEqual([OUT_BIZ_NO, '88.88']);

        const result = sut.verify(form(alipayDelivery(alipay.privateKey, trade)));

        expect(result).toMatchObject({ eventType: 'TRADE_SUCCESS', paid: true, amount: 8888 });
        expect(result.refund).toBeUndefined();
      });

      it.each([
        ['refund_fee', 'refund_fee=88.88', 'refund_fee=88.89'],
        ['out_biz_no', `out_biz_no=${OUT_BIZ_NO}`, `out_biz_no=${OUT_BIZ_NO.slice(0, -1)}1`],
      ])('should reject a refund notification with %s changed', (_what, from, to) => {
        const body = alipayDelivery(alipay.privateKey, refundNotice());
        expect(codeOf(() => sut.verify(form(body)))).toBe('no error');
        expect(body.split(from)).toHaveLength(2);

        expect(codeOf(() => sut.verify(form(body.replace(from, to))))).toBe('InvalidSignature');
      });

      it('should reject a refund notification for another app_id', () => {
        const body = alipayDelivery(alipay.privateKey, refundNotice({ appId: '2021004100000002' }));

        expect(codeOf(() => sut.verify(form(body)))).toBe('MerchantMismatch');
      });

      it('should reject a refund notification signed by another key', () => {
        const body = alipayDelivery(stranger.privateKey, refundNotice());

        expect(codeOf(() => sut.verify(form(body)))).toBe('InvalidSignature');
      });

      it('should read an out_biz_no longer than 64 characters as malformed, settling no refund', () => {
        const body = alipayDelivery(alipay.privateKey, refundNotice({ outBizNo: 'R'.repeat(65) }));

        const result = sut.verify(form(body));

        expect(result).toMatchObject({ paid: false, malformed: expect.stringContaining('out_biz_no') });
        expect(result.refund).toBeUndefined();
      });
    });
  });
});
