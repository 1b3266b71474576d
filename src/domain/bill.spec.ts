import { DomainError } from './domain-error';
import { billDateOf, billDayRange, isBillDate, parseBeijingTime, parseBillAmount, shiftBillDate } from './bill';

describe('bill dates', () => {
  it('should take a bill date as the Beijing calendar day, 16:00 UTC the day before to 16:00 UTC', () => {
    expect(billDayRange('2026-11-30')).toEqual({
      start: new Date('2026-11-29T16:00:00Z'),
      end: new Date('2026-11-30T16:00:00Z'),
    });
    expect(billDateOf(new Date('2026-11-29T15:59:59.999Z'))).toBe('2026-11-29');
    expect(billDateOf(new Date('2026-11-29T16:00:00Z'))).toBe('2026-11-30');
  });

  it('should shift across months and years, and refuse dates that do not exist', () => {
    expect(shiftBillDate('2026-03-01', -1)).toBe('2026-02-28');
    expect(shiftBillDate('2026-12-31', 1)).toBe('2027-01-01');
    expect(['2026-02-29', '2026-13-01', '2026-1-01', 'yesterday'].map(isBillDate)).toEqual([
      false,
      false,
      false,
      false,
    ]);
    expect(isBillDate('2028-02-29')).toBe(true);
  });

  it('should read Beijing times and refuse anything else', () => {
    expect(parseBeijingTime('2026-11-30 23:59:59')).toEqual(new Date('2026-11-30T15:59:59Z'));
    expect(() => parseBeijingTime('2026-11-30T23:59:59+08:00')).toThrow(DomainError);
    expect(() => parseBeijingTime('2026-11-31 00:00:00')).toThrow(DomainError);
  });
});

describe(parseBillAmount.name, () => {
  it('should parse yuan into exact fen, signs included, without floating point', () => {
    expect(['88.88', '0.00', '-10.5', '1999', '0.07', '99999999999.99'].map((t) => parseBillAmount(t, 'x'))).toEqual([
      8888, 0, -1050, 199900, 7, 9999999999999,
    ]);
  });

  it.each(['1e2', '0.001', '', '1,000.00', '--1', '01.00', ' 1.00', '0x10'])('should refuse "%s"', (text) => {
    expect(() => parseBillAmount(text, '订单金额')).toThrow(/订单金额 is not an amount/);
  });
});
