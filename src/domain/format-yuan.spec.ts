import { MAX_AMOUNT, parseDecimalAmount } from './money';
import { formatYuan } from './money';

describe(formatYuan.name, () => {
  const sut = formatYuan;

  it.each([
    [1, '0.01'],
    [5, '0.05'],
    [10, '0.10'],
    [99, '0.99'],
    [100, '1.00'],
    [101, '1.01'],
    [1999, '19.99'],
    [8888, '88.88'],
    [10_000, '100.00'],
    [9_999_999_999_999, '99999999999.99'],
    [MAX_AMOUNT, '100000000000.00'],
  ])('should write %d fen as "%s"', (minor, yuan) => {
    expect(sut(minor)).toBe(yuan);
  });

  it('should write MAX_AMOUNT as exactly 10^13 fen', () => {
    expect(MAX_AMOUNT).toBe(10_000_000_000_000);
    expect(sut(10_000_000_000_000)).toBe('100000000000.00');
  });

  it('should always write two decimals and no exponent', () => {
    for (const minor of [1, 7, 20, 305, 123456789, 1e12 + 1, MAX_AMOUNT]) {
      expect(sut(minor)).toMatch(/^(0|[1-9]\d*)\.\d{2}$/);
    }
  });

  describe('round trip with parseDecimalAmount', () => {
    // parseDecimalAmount takes at most 11 integer digits: 99999999999.99 yuan, one fen below MAX_AMOUNT.
    const LARGEST_PARSEABLE = 9_999_999_999_999;

    it('should give back every amount from 1 fen to 1000.00 yuan', () => {
      for (let minor = 1; minor <= 100_000; minor++) {
        const text = sut(minor);
        if (parseDecimalAmount(text, 'refund_amount') !== minor) {
          throw new Error(`${minor} -> "${text}" -> ${parseDecimalAmount(text, 'refund_amount')}`);
        }
      }
      expect(parseDecimalAmount(sut(100_000), 'refund_amount')).toBe(100_000);
    });

    it.each([
      1_000_001,
      1_999_999,
      2_147_483_647,
      2_147_483_648,
      4_294_967_296,
      123_456_789_012,
      900_719_925_474,
      1_000_000_000_000,
      9_999_999_999_900,
      9_999_999_999_998,
      LARGEST_PARSEABLE,
    ])('should give back %d fen', (minor) => {
      expect(parseDecimalAmount(sut(minor), 'refund_amount')).toBe(minor);
    });

    it('should give back pseudo-random amounts across the whole range', () => {
      // A fixed linear congruential sequence, so a failure reproduces; the 4th power spreads it over every magnitude.
      let seed = 20250301;
      const next = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
      for (let i = 0; i < 5000; i++) {
        const minor = 1 + Math.floor(next() ** 4 * (LARGEST_PARSEABLE - 1));
        expect(parseDecimalAmount(sut(minor), 'refund_amount')).toBe(minor);
      }
    });
  });
});
