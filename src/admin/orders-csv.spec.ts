import { parse } from 'csv-parse/sync';
import { csvField, ordersCsv } from './orders-csv';

describe('orders CSV', () => {
  it('should quote fields with commas, quotes and line breaks, doubling quotes', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField(null)).toBe('');
    expect(csvField(1999)).toBe('1999');
  });

  it('should write a field a spreadsheet would run as a formula with a leading apostrophe', () => {
    for (const formula of ['=1+2', '+1', '-1', '@SUM(A1)', '\tx', '\rx']) {
      expect(csvField(formula).replace(/^"/, '')).toMatch(/^'/);
    }
    expect(csvField('=HYPERLINK("http://x","y")')).toBe('"\'=HYPERLINK(""http://x"",""y"")"');
    expect(csvField('ORDER-1')).toBe('ORDER-1');
  });

  it('should give a file csv-parse reads back to the same values, amounts in minor units and formatted', () => {
    const sut = ordersCsv([
      {
        orderNo: 'O,1',
        status: 'PAID',
        amount: 200000,
        currency: 'CNY',
        channel: 'WECHATPAY',
        merchantId: '1900000001',
        transactionId: '-T"1',
        createdAt: '2026-12-05T01:02:03.004Z',
        paidAt: null,
      },
    ]);

    expect(sut.startsWith('\uFEFF')).toBe(true);
    const rows = parse(sut, { bom: true, columns: true }) as Array<Record<string, string>>;
    expect(rows).toEqual([
      {
        order_no: 'O,1',
        status: 'PAID',
        channel: 'WECHATPAY',
        merchant_id: '1900000001',
        transaction_id: `'-T"1`,
        amount_minor: '200000',
        currency: 'CNY',
        amount: '2000.00',
        created_at: '2026-12-05T01:02:03.004Z',
        paid_at: '',
      },
    ]);
  });
});
