import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import iconv from 'iconv-lite';
import { alipayBillZip, gbkZip } from '../support/bill-files';
import { BillEntry } from '../../src/domain/bill';
import { parseAlipayBill, parseAlipayDetail } from '../../src/channels/alipay/alipay.bill';

const DETAIL = readFileSync(join(__dirname, '../fixtures/bills/alipay-trade-detail.gbk.csv'));

async function collect(entries: AsyncIterable<BillEntry>): Promise<BillEntry[]> {
  const all: BillEntry[] = [];
  for await (const entry of entries) all.push(entry);
  return all;
}

function zipFile(zip: Buffer): string {
  const path = join(mkdtempSync(join(tmpdir(), 'alipay-bill-')), 'bill.zip');
  writeFileSync(path, zip);
  return path;
}

describe(parseAlipayBill.name, () => {
  it('should read the GBK 业务明细 file of the ZIP: trades and refunds in exact minor units', async () => {
    const entries = await collect(parseAlipayBill(zipFile(alipayBillZip(DETAIL, '2026-11-30'))));

    expect(entries).toEqual([
      {
        kind: 'PAYMENT',
        line: 6,
        transactionId: '2026113022001400000000000001',
        orderNo: 'ORD20261130B1',
        amount: 8888,
        at: new Date('2026-11-30T02:00:00Z'),
      },
      // 订单金额 2000.00, completed a second after midnight: the next day's, for the day-boundary rule.
      expect.objectContaining({ kind: 'PAYMENT', amount: 200000, at: new Date('2026-11-30T16:00:01Z') }),
      {
        kind: 'REFUND',
        line: 8,
        transactionId: '2026112922001400000000000009',
        orderNo: 'ORD20261129Y9',
        amount: 1050,
        refundNo: 'RF20261130Y9',
        at: new Date('2026-11-30T08:20:00Z'),
      },
    ]);
  });

  it('should report malformed lines and go on', async () => {
    const text = iconv.decode(DETAIL, 'gbk').split('\r\n');
    text.splice(
      6,
      0,
      '2026113022001400000000000077\t,ORD77\t,交易\t,x\t,2026-11-30 10:00:00\t,2026-11-30 10:00:00\t,,,,,,1e2\t,1e2\t,0,0,0,0,0,,0,0,,0,0,',
    );
    text.splice(7, 0, 'short,line');

    const entries = await collect(parseAlipayDetail(Readable.from([iconv.encode(text.join('\r\n'), 'gbk')])));

    expect(entries.filter((e) => e.kind === 'MALFORMED')).toEqual([
      { kind: 'MALFORMED', line: 7, detail: expect.stringContaining('not an amount') },
      { kind: 'MALFORMED', line: 8, detail: expect.stringContaining('fewer than the header') },
    ]);
    expect(entries.filter((e) => e.kind !== 'MALFORMED')).toHaveLength(3);
  });

  it('should report a ZIP without the detail file', async () => {
    const zip = gbkZip([{ name: '20885318916687390156_20261130_业务明细(汇总).csv', data: Buffer.from('#') }]);

    await expect(collect(parseAlipayBill(zipFile(zip)))).resolves.toEqual([
      { kind: 'MALFORMED', line: 0, detail: 'the ZIP has no 业务明细 file' },
    ]);
  });
});
