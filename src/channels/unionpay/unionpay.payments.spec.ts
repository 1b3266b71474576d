import { CreatePaymentRequest } from '../../domain/channel-api';
import { unionpayPaymentRefusal } from './unionpay.payments';

function request(overrides: Partial<CreatePaymentRequest> = {}): CreatePaymentRequest {
  return {
    orderNo: 'ORD20261129000123',
    merchantId: '777290058167151',
    amount: 1999,
    currency: 'CNY',
    description: 'A coffee',
    method: 'PAGE',
    notifyBaseUrl: 'https://pay.example.com/notify',
    expiresAt: new Date('2026-11-29T02:30:00.000Z'),
    channelOrderTime: '20261129100000',
    payer: { returnUrl: 'https://shop.example.com/paid' },
    ...overrides,
  };
}

describe(unionpayPaymentRefusal.name, () => {
  const sut = unionpayPaymentRefusal;

  it.each<[string, Partial<CreatePaymentRequest>, RegExp]>([
    ['a currency but CNY', { currency: 'HKD' }, /CNY only, not HKD/],
    ['a frontUrl that is no http(s) URL', { payer: { returnUrl: 'javascript:alert(1)' } }, /frontUrl/],
    ['a client IP that is no address', { payer: { returnUrl: 'https://a.example', clientIp: 'here' } }, /clientIp/],
  ])('should refuse %s', (_what, overrides, message) => {
    expect(sut(request(overrides))).toMatch(message);
  });

  it.each<[string, Partial<CreatePaymentRequest>]>([
    ['a PC consumption', {}],
    ['an app payment with the buyer IP', { method: 'APP', payer: { clientIp: '2001:db8::1' } }],
  ])('should take %s', (_what, overrides) => {
    expect(sut(request(overrides))).toBeUndefined();
  });
});
