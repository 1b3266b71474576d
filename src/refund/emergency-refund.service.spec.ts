import { Channel } from '../domain/notification';
import { deriveRefundNo } from './emergency-refund.service';
import { RefundPurpose } from './refund.entity';

const WECHAT_TX = '4200002345202503011234567890';
const ALIPAY_TX = '2025030122001468451400000001';
/** WeChat Pay out_refund_no: digits, letters, _-|*@, at most 64; Alipay out_request_no: at most 64. */
const WECHATPAY_REFUND_NO = /^[0-9A-Za-z_\-|*@]{1,64}$/;

describe(deriveRefundNo.name, () => {
  const sut = deriveRefundNo;

  it('should give the same number for the same channel, transaction, purpose, amount and attempt', () => {
    const first = sut({ channel: Channel.Wechatpay, transactionId: WECHAT_TX }, RefundPurpose.DuplicatePayment, 500, 0);
    const again = sut({ channel: Channel.Wechatpay, transactionId: WECHAT_TX }, RefundPurpose.DuplicatePayment, 500, 0);

    expect(again).toBe(first);
  });

  it('should be ER and 32 upper-case hex digits, which both channels accept', () => {
    for (const channel of Object.values(Channel)) {
      for (const purpose of Object.values(RefundPurpose)) {
        const refundNo = sut(
          { channel, transactionId: channel === Channel.Alipay ? ALIPAY_TX : WECHAT_TX },
          purpose,
          1,
          0,
        );

        expect(refundNo).toMatch(/^ER[0-9A-F]{32}$/);
        expect(refundNo).toHaveLength(34);
        expect(refundNo).toMatch(WECHATPAY_REFUND_NO);
      }
    }
  });

  it('should be the first 128 bits of SHA-256 over the JSON of channel, transaction, purpose, amount and attempt', () => {
    // printf '["WECHATPAY","4200002345202503011234567890","ORDER_REFUND",10000,0]' | sha256sum | cut -c1-32
    expect(sut({ channel: Channel.Wechatpay, transactionId: WECHAT_TX }, RefundPurpose.OrderRefund, 10000, 0)).toBe(
      'ER7C814DF9C471F5D5EC70785A47BE1719',
    );
    // printf '["WECHATPAY","4200002345202503011234567890","ORDER_REFUND","REST",1]' | sha256sum | cut -c1-32
    expect(sut({ channel: Channel.Wechatpay, transactionId: WECHAT_TX }, RefundPurpose.OrderRefund, undefined, 1)).toBe(
      'ER578DAF87A714EB42AAA0208595C88C2C',
    );
  });

  it('should keep the parts apart when a transaction id contains the separator', () => {
    expect(
      sut({ channel: Channel.Wechatpay, transactionId: 'T1:ORDER_REFUND' }, RefundPurpose.DuplicatePayment, 1, 0),
    ).not.toBe(sut({ channel: Channel.Wechatpay, transactionId: 'T1' }, 'ORDER_REFUND:DUPLICATE_PAYMENT', 1, 0));
  });

  it('should differ by channel, by transaction and by purpose', () => {
    const numbers = new Set<string>();
    const transactions = [WECHAT_TX, ALIPAY_TX, `${WECHAT_TX.slice(0, -1)}1`, 'x'];
    for (const channel of Object.values(Channel)) {
      for (const transactionId of transactions) {
        for (const purpose of Object.values(RefundPurpose)) numbers.add(sut({ channel, transactionId }, purpose, 1, 0));
      }
    }

    expect(numbers.size).toBe(
      Object.values(Channel).length * transactions.length * Object.values(RefundPurpose).length,
    );
  });

  it('should differ by amount (what is left being an amount of its own) and by attempt', () => {
    const payment = { channel: Channel.Wechatpay, transactionId: WECHAT_TX };
    const numbers = new Set<string>();
    for (const amount of [1, 100, 200, undefined]) {
      for (const attempt of [0, 1, 2]) numbers.add(sut(payment, RefundPurpose.DuplicatePayment, amount, attempt));
    }

    expect(numbers.size).toBe(12);
  });
});
