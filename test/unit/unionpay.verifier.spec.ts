import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DomainError } from '../../src/domain/domain-error';
import { VECTORS_DIR } from '../support/vectors';
import { UnionpayCertificates } from '../../src/channels/unionpay/unionpay.certificates';
import { UnionpayVerifier } from '../../src/channels/unionpay/unionpay.verifier';
import { generateUnionpayKeySet, writeUnionpayKeySet } from '../../tools/simulator/unionpay/unionpay-keys';
import {
  signUnionpay,
  unionpayConsumeFields,
  unionpayForm,
  unionpayRefundFields,
} from '../../tools/simulator/unionpay/unionpay-signer';

const DIR = join(VECTORS_DIR, 'unionpay');
const FORM = { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' };
const YANSONGDA = readFileSync(join(DIR, 'yansongda-callback.form'));
const OMNIPAY = readFileSync(join(DIR, 'omnipay-wtz-front-open.form'));
/** The messages' txnTime (Beijing): their leaf certificates are expired today. */
const YANSONGDA_AT = Date.parse('2022-09-08T13:22:06+08:00');
const OMNIPAY_AT = Date.parse('2017-10-30T22:36:23+08:00');

function verifier(merId: string, at: number, validateCn = true): UnionpayVerifier {
  const clock = () => at;
  const certificates = new UnionpayCertificates(
    { root: join(DIR, 'acp_test_root.cer'), middle: join(DIR, 'acp_test_middle.cer') },
    validateCn,
    clock,
  );
  return new UnionpayVerifier([{ merId }], certificates, clock);
}

function refusal(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe(UnionpayVerifier.name, () => {
  it('should verify the yansongda consumption notification as it is, CN checked, at its txnTime', () => {
    const sut = verifier('777290058167151', YANSONGDA_AT);
    const n = sut.verify({ body: YANSONGDA, headers: FORM });
    expect(n).toMatchObject({
      channel: 'UNIONPAY',
      merchantId: '777290058167151',
      eventType: 'CONSUME/00',
      paid: true,
      outTradeNo: 'yansongda20220908132206',
      transactionId: '782209081322060674028',
      amount: 1,
      currency: 'CNY',
      paidAt: new Date('2022-09-08T05:22:06Z'),
    });
    expect(n.malformed).toBeUndefined();
  });

  it('should verify the omnipay front notification with the CN check off, and keep its txnType 79 as unusable', () => {
    const sut = verifier('777290058146592', OMNIPAY_AT, false);
    const n = sut.verify({ body: OMNIPAY, headers: FORM });
    expect(n.paid).toBe(false);
    expect(n.malformed).toMatch(/txnType 79/);
  });

  it('should refuse the omnipay notification with the CN check on: its certificate is not issued to UnionPay', () => {
    const sut = verifier('777290058146592', OMNIPAY_AT, true);
    const error = refusal(() => sut.verify({ body: OMNIPAY, headers: FORM }));
    expect(error.code).toBe('UnknownSigningKey');
    expect(error.message).toMatch(/中国银联股份有限公司/);
  });

  it('should refuse a vector once one byte of a signed field changes', () => {
    const sut = verifier('777290058167151', YANSONGDA_AT);
    const tampered = Buffer.from(YANSONGDA.toString('latin1').replace('txnAmt=1&', 'txnAmt=2&'), 'latin1');
    expect(refusal(() => sut.verify({ body: tampered, headers: FORM })).code).toBe('InvalidSignature');
  });

  it("should refuse the vector at today's date: its signing certificate expired on 2025-07-31", () => {
    const sut = verifier('777290058167151', Date.parse('2026-12-02T00:00:00Z'));
    expect(refusal(() => sut.verify({ body: YANSONGDA, headers: FORM })).code).toBe('UnknownSigningKey');
  });

  it('should refuse a notification for a merId that is not ours', () => {
    const sut = verifier('777290058100000', YANSONGDA_AT);
    expect(refusal(() => sut.verify({ body: YANSONGDA, headers: FORM })).code).toBe('MerchantMismatch');
  });
});

describe(`${UnionpayVerifier.name} with a key set made for the test`, () => {
  const keys = generateUnionpayKeySet();
  const dir = mkdtempSync(join(tmpdir(), 'pcs-unionpay-verifier-'));
  const env = writeUnionpayKeySet(keys, dir, '777290058167151');
  const sut = new UnionpayVerifier(
    [{ merId: '777290058167151' }],
    new UnionpayCertificates(
      { root: env.UNIONPAY_ROOT_CERT_PATH, middle: env.UNIONPAY_MIDDLE_CERT_PATH },
      true,
      Date.now,
    ),
  );
  const consume = (overrides: Record<string, string> = {}) =>
    Buffer.from(
      unionpayForm(
        signUnionpay(
          {
            ...unionpayConsumeFields({ merId: '777290058167151', orderId: 'ORDER0001', queryId: 'Q0001', txnAmt: 100 }),
            ...overrides,
          },
          keys.unionpaySigner,
        ),
      ),
    );

  it('should pay on respCode 00 and A6 only', () => {
    expect(sut.verify({ body: consume({ respCode: 'A6' }), headers: FORM })).toMatchObject({ paid: true });
    expect(sut.verify({ body: consume({ respCode: '05' }), headers: FORM })).toMatchObject({
      paid: false,
      eventType: 'CONSUME/05',
    });
  });

  it('should settle a refund by its result notification: 00 SUCCEEDED, another respCode CLOSED', () => {
    const refund = (respCode: string) =>
      Buffer.from(
        unionpayForm(
          signUnionpay(
            unionpayRefundFields({
              merId: '777290058167151',
              orderId: 'ER0123456789',
              origQryId: 'Q0001',
              queryId: 'Q0002',
              txnAmt: 100,
              respCode,
            }),
            keys.unionpaySigner,
          ),
        ),
      );

    expect(sut.verify({ body: refund('00'), headers: FORM })).toMatchObject({
      paid: false,
      transactionId: 'Q0001',
      refund: { refundNo: 'ER0123456789', channelRefundId: 'Q0002', status: 'SUCCEEDED' },
    });
    expect(sut.verify({ body: refund('01'), headers: FORM }).refund?.status).toBe('CLOSED');
  });

  it('should keep a signed notification in another currency as malformed: acked, recorded, nothing paid', () => {
    const n = sut.verify({ body: consume({ currencyCode: '840' }), headers: FORM });

    expect(n).toMatchObject({
      paid: false,
      outTradeNo: 'ORDER0001',
      malformed: expect.stringMatching(/currencyCode 840/),
    });
  });

  it.each([
    ['a version other than 5.1.0', () => consume({ version: '5.0.0' }), 'MalformedRequest'],
    ['an encoding other than UTF-8', () => consume({ encoding: 'GBK' }), 'MalformedRequest'],
    ['signMethod 11 (SM3)', () => consume({ signMethod: '11' }), 'InvalidSignature'],
    ['a field sent twice', () => Buffer.concat([consume(), Buffer.from('&txnAmt=100')]), 'MalformedRequest'],
    [
      'no signPubKeyCert',
      () =>
        Buffer.from(
          consume()
            .toString()
            .replace(/&signPubKeyCert=[^&]*/, ''),
        ),
      'MalformedRequest',
    ],
  ])('should refuse %s', (_what, body, code) => {
    expect(refusal(() => sut.verify({ body: body(), headers: FORM })).code).toBe(code);
  });

  it('should refuse a body that is not a form post', () => {
    expect(refusal(() => sut.verify({ body: consume(), headers: { 'content-type': 'application/json' } })).code).toBe(
      'MalformedRequest',
    );
  });
});

describe('UNIONPAY_VALIDATE_CN=false and the trusted certificates', () => {
  const PRODUCTION_ROOT = join(DIR, 'cfca_ev_root.pem');
  const TEST_ROOT = join(DIR, 'acp_test_root.cer');
  const TEST_MIDDLE = join(DIR, 'acp_test_middle.cer');
  const load = (root: string, middle: string, validateCn: boolean) => () =>
    new UnionpayCertificates({ root, middle }, validateCn, Date.now);

  it.each([
    ['root', PRODUCTION_ROOT, TEST_MIDDLE],
    ['middle', TEST_ROOT, PRODUCTION_ROOT],
  ])("should refuse the flag when the trusted %s is production's, whatever the gateway URL", (_which, root, middle) => {
    expect(load(root, middle, false)).toThrow(/UNIONPAY_VALIDATE_CN=false .*production/);
  });

  it("should keep the flag for UnionPay's test root and middle", () => {
    expect(load(TEST_ROOT, TEST_MIDDLE, false)).not.toThrow();
  });
});
