import {
  beijingDate,
  dayPattern,
  formatAmount,
  formatDay,
  formatMoment,
  formatMs,
  formatTick,
  formatTime,
  parseAmount,
  parseDay,
} from './format';

describe('formatAmount', () => {
  it('should write minor units with two digits and thousands separators', () => {
    expect(formatAmount(123456)).toBe('1,234.56');
    expect(formatAmount(5)).toBe('0.05');
    expect(formatAmount(0)).toBe('0.00');
    expect(formatAmount(-1999)).toBe('-19.99');
  });

  it('should keep every digit of amounts past a float mantissa', () => {
    expect(formatAmount('9007199254740993')).toBe('90,071,992,547,409.93');
  });

  it('should write zero-decimal currencies without a point', () => {
    expect(formatAmount(1500, 'JPY')).toBe('1,500');
  });
});

describe('parseAmount', () => {
  it('should read yuan text as fen', () => {
    expect(parseAmount('12.3')).toBe(1230);
    expect(parseAmount('0.07')).toBe(7);
    expect(parseAmount('100')).toBe(10000);
    expect(parseAmount(' 19.99 ')).toBe(1999);
  });

  it('should refuse anything but a plain amount with at most the currency digits', () => {
    for (const text of ['', '1.234', '-1', '1e3', '1,000', '0x10', '.5', 'abc']) expect(parseAmount(text)).toBeNull();
    expect(parseAmount('1.5', 'JPY')).toBeNull();
  });
});

describe('formatTime', () => {
  it('should show Beijing time when asked, with its zone', () => {
    expect(formatTime('2026-11-29T16:30:00.000Z', 'en-GB', 'Asia/Shanghai')).toMatch(
      /30\/11\/2026, 00:30:00 (GMT\+8|CST)/,
    );
  });
});

describe('formatMoment', () => {
  it("should write the operator's locale and zone, with Beijing time beside it", () => {
    const sut = formatMoment('2026-12-05T04:27:23.000Z', 'en-US', 'Europe/Berlin');

    expect(sut.local).toMatch(/^12\/05\/2026, 05:27:23 GMT\+1$/);
    expect(sut.beijing).toBe('12/05/2026, 12:27:23');
  });

  it('should write the same moment in Chinese, year first, the Beijing day apart from the local one', () => {
    const sut = formatMoment('2026-12-05T20:00:00.000Z', 'zh-CN', 'Europe/Berlin');

    // The zone before the time: zh-CN writes it there.
    expect(sut.local).toBe('2026/12/05 GMT+1 21:00:00');
    expect(sut.beijing).toBe('2026/12/06 04:00:00');
  });

  it('should not repeat Beijing time for an operator in Beijing', () => {
    expect(formatMoment('2026-12-05T04:27:23.000Z', 'zh-CN', 'Asia/Shanghai').beijing).toBeNull();
    expect(formatMoment(null, 'en-US')).toEqual({ local: '—', beijing: null });
  });
});

describe('formatTick', () => {
  it("should write a chart's hours in 24 h in both languages, with the day where asked", () => {
    expect(formatTick(Date.parse('2026-12-05T06:00:00Z'), 'en-US', false, 'UTC')).toBe('06:00');
    expect(formatTick(Date.parse('2026-12-05T12:00:00Z'), 'zh-CN', false, 'UTC')).toBe('12:00');
    expect(formatTick(Date.parse('2026-12-04T06:00:00Z'), 'en-US', true, 'UTC')).toBe('12/04, 06:00');
    expect(formatTick(Date.parse('2026-12-04T06:00:00Z'), 'zh-CN', true, 'UTC')).toBe('12/04 06:00');
  });
});

describe('formatMs', () => {
  it('should read a processing time under a millisecond as "<1 ms", never "0 ms"', () => {
    expect(formatMs(0)).toBe('<1 ms');
    expect(formatMs(3)).toBe('3 ms');
    expect(formatMs(null)).toBe('—');
  });
});

describe('days in date fields', () => {
  it('should write a day as the locale writes the day of a moment, and name the pattern', () => {
    expect(formatDay('2026-12-05', 'en-US')).toBe('12/05/2026');
    expect(formatDay('2026-12-05', 'en-GB')).toBe('05/12/2026');
    expect(formatDay('2026-12-05', 'zh-CN')).toBe('2026/12/05');
    expect(dayPattern('en-US')).toBe('mm/dd/yyyy');
    expect(dayPattern('en-GB')).toBe('dd/mm/yyyy');
    expect(dayPattern('zh-CN')).toBe('yyyy/mm/dd');
    expect(
      formatMoment('2026-12-05T04:27:23.000Z', 'en-GB', 'UTC').local.startsWith(formatDay('2026-12-05', 'en-GB')),
    ).toBe(true);
  });

  it('should read a day back in the same order, or as yyyy-mm-dd, and refuse what is no day', () => {
    expect(parseDay('12/05/2026', 'en-US')).toBe('2026-12-05');
    expect(parseDay('05/12/2026', 'en-GB')).toBe('2026-12-05');
    expect(parseDay('2026/12/05', 'zh-CN')).toBe('2026-12-05');
    expect(parseDay('2026-12-05', 'en-GB')).toBe('2026-12-05');
    expect(parseDay(' 5.12.2026 ', 'en-GB')).toBe('2026-12-05');
    for (const text of ['', '31/02/2026', '13/13/2026', '2026', '12/05', 'tomorrow', '1/1/26']) {
      expect(parseDay(text, 'en-GB')).toBeNull();
    }
  });
});

describe('beijingDate', () => {
  it('should give the Beijing calendar day, already the next one at 16:00 UTC', () => {
    expect(beijingDate(0, new Date('2026-11-29T16:00:00Z'))).toBe('2026-11-30');
    expect(beijingDate(-1, new Date('2026-11-29T15:59:59Z'))).toBe('2026-11-28');
  });
});
