import { parse } from 'csv-parse/sync';
import { OrderListItemView } from './dto/admin-views';
import { ordersCsv } from './orders-csv';

const order = (fields: Partial<OrderListItemView>): OrderListItemView => ({
  orderNo: 'ORDER-1',
  status: 'PAID',
  amount: 200000,
  currency: 'CNY',
  channel: 'WECHATPAY',
  merchantId: '1900000001',
  transactionId: '4200000001',
  createdAt: '2026-12-05T01:02:03.004Z',
  paidAt: null,
  ...fields,
});

/** The data line of a one-order file: the text after the header's CRLF, without the last CRLF. */
const dataLine = (fields: Partial<OrderListItemView>): string => ordersCsv([order(fields)]).split('\r\n')[1];

describe('orders CSV', () => {
  it('should quote fields with commas, quotes and line breaks, doubling quotes', () => {
    expect(dataLine({ orderNo: 'plain' })).toMatch(/^plain,/);
    expect(dataLine({ orderNo: 'a,b' })).toMatch(/^"a,b",/);
    expect(dataLine({ orderNo: 'say "hi"' })).toMatch(/^"say ""hi""",/);
    expect(ordersCsv([order({ orderNo: 'two\nlines' })]).split('\r\n')[1]).toMatch(/^"two\nlines",/);
    expect(dataLine({ paidAt: null })).toMatch(/,$/);
    expect(dataLine({ amount: 1999 })).toContain(',1999,CNY,19.99,');
  });

  it('should write a field a spreadsheet would run as a formula with a leading apostrophe', () => {
    for (const formula of ['=1+2', '+1', '-1', '@SUM(A1)', '\tx', '\rx']) {
      expect(
        ordersCsv([order({ orderNo: formula })])
          .split('\r\n')[1]
          .replace(/^"/, ''),
      ).toMatch(/^'/);
    }
    expect(dataLine({ orderNo: '=HYPERLINK("http://x","y")' })).toMatch(/^"'=HYPERLINK\(""http:\/\/x"",""y""\)",/);
    expect(dataLine({ orderNo: 'ORDER-1' })).toMatch(/^ORDER-1,/);
  });

  it('should give a file csv-parse reads back to the same values, amounts in minor units and formatted', () => {
    const sut = ordersCsv([order({ orderNo: 'O,1', transactionId: '-T"1' })]);

    expect(sut.startsWith('\uFEFF')).toBe(true);
    expect(sut.endsWith('\r\n')).toBe(true);
    const rows = parse<Record<string, string>>(sut, { bom: true, columns: true });
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
