import { DomainError } from './domain-error';
import { bigintAmount, MAX_AMOUNT, parseDecimalAmount } from './money';

describe(parseDecimalAmount.name, () => {
  const sut = parseDecimalAmount;

  it.each([
    ['88.88', 8888],
    ['0.10', 10],
    ['0.1', 10],
    ['1', 100],
    ['0.01', 1],
    ['99999999999.99', 9999999999999],
    // MAX_AMOUNT, the largest amount the order API accepts, in each spelling
    ['100000000000', 10_000_000_000_000],
    ['100000000000.0', 10_000_000_000_000],
    ['100000000000.00', 10_000_000_000_000],
    // 19.99 * 100 === 1998.9999999999998 in binary floating point
    ['19.99', 1999],
    // 0.29 * 100 === 28.999999999999996
    ['0.29', 29],
    ['1.1', 110],
    ['100', 10000],
  ])('should parse "%s" to %d minor units exactly', (text, minor) => {
    const result = sut(text, 'total_amount');

    expect(result).toBe(minor);
    expect(Number.isSafeInteger(result)).toBe(true);
  });

  it.each([
    '1.005',
    '1e2',
    '-1',
    '0.001',
    '',
    '0',
    '0.00',
    '01.00',
    '.5',
    '5.',
    'abc',
    ' 1',
    '1 ',
    '1,00',
    '+1',
    '100000000000.01',
    '100000000001',
    '999999999999.99',
    '1000000000000.00',
    '0x10',
  ])('should reject "%s" with MalformedRequest', (text) => {
    expect(() => sut(text, 'total_amount')).toThrow(DomainError);
    expect(() => sut(text, 'total_amount')).toThrow(
      expect.objectContaining({ code: 'MalformedRequest', message: expect.stringContaining('total_amount') }),
    );
  });
});

describe(`${parseDecimalAmount.name} at the order API's bounds`, () => {
  const sut = parseDecimalAmount;
  /** How Alipay writes an amount of `minor` fen. */
  const major = (minor: number) => `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;

  it.each([1, 99, 100, 101, MAX_AMOUNT - 100, MAX_AMOUNT - 1, MAX_AMOUNT])(
    'should accept %d minor units, as the order API does',
    (minor) => {
      expect(sut(major(minor), 'total_amount')).toBe(minor);
    },
  );

  it('should refuse one minor unit more than MAX_AMOUNT, naming the limit', () => {
    expect(() => sut(major(MAX_AMOUNT + 1), 'total_amount')).toThrow(
      expect.objectContaining({
        code: 'MalformedRequest',
        message: 'total_amount must be at most 100000000000.00, got "100000000000.01"',
      }),
    );
  });
});

describe('bigintAmount', () => {
  const sut = bigintAmount;

  it('should read a BIGINT string as a number', () => {
    expect(sut.from('123')).toBe(123);
  });

  it('should read the largest safe integer', () => {
    expect(sut.from('9007199254740991')).toBe(9007199254740991);
  });

  it('should keep null as null', () => {
    expect(sut.from(null)).toBeNull();
  });

  it('should refuse a BIGINT that a number cannot hold exactly', () => {
    expect(() => sut.from('9007199254740993')).toThrow('9007199254740993');
  });

  it('should write the number unchanged', () => {
    expect(sut.to(8888)).toBe(8888);
  });
});
