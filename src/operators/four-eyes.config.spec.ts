import { ConfigurationError } from '../platform/config/env-validation';
import { loadFourEyesConfig } from './four-eyes.config';

describe(loadFourEyesConfig.name, () => {
  const sut = loadFourEyesConfig;

  it('should need no second admin unless told', () => {
    expect(sut({})).toEqual({ approvalThreshold: undefined, shopRefundsNeedApproval: false });
  });

  it('should read every variable that is set', () => {
    expect(sut({ REFUND_APPROVAL_THRESHOLD: '500000', SHOP_REFUNDS_NEED_APPROVAL: 'true' })).toEqual({
      approvalThreshold: 500000,
      shopRefundsNeedApproval: true,
    });
  });

  it('should refuse a SHOP_REFUNDS_NEED_APPROVAL other than true or false', () => {
    expect(() => sut({ SHOP_REFUNDS_NEED_APPROVAL: 'yes' })).toThrow(ConfigurationError);
  });

  describe('REFUND_APPROVAL_THRESHOLD', () => {
    const name = 'REFUND_APPROVAL_THRESHOLD';
    const [min, max] = [1, 10_000_000_000_000];

    it(`should accept the bounds ${min} and ${max}`, () => {
      expect(sut({ [name]: String(min) }).approvalThreshold).toBe(min);
      expect(sut({ [name]: String(max) }).approvalThreshold).toBe(max);
    });

    it.each([String(min - 1), String(max + 1), '-5', '1.5', 'ten', '10s'])(
      'should reject %s, naming the variable',
      (value) => {
        expect(() => sut({ [name]: value })).toThrow(ConfigurationError);
        expect(() => sut({ [name]: value })).toThrow(new RegExp(`- ${name}: ${name} must`));
      },
    );
  });
});
