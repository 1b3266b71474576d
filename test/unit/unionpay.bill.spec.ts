import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { BillEntry } from '../../src/domain/bill';
import { parseUnionpayBill, saveFileContent } from '../../src/channels/unionpay/unionpay.bill';
import { fileContentOf, unionpayBillZip, zmLine } from '../../tools/simulator/unionpay/unionpay-bill-file';

const MER_ID = '777290058167151';

async function entries(zip: Buffer, date: string): Promise<BillEntry[]> {
  const path = join(mkdtempSync(join(tmpdir(), 'pcs-unionpay-bill-')), 'bill.zip');
  writeFileSync(path, zip);
  const all: BillEntry[] = [];
  for await (const entry of parseUnionpayBill(path, date)) all.push(entry);
  return all;
}

describe('parseUnionpayBill', () => {
  const at = new Date('2026-11-30T04:05:06Z'); // 12:05:06 Beijing

  it('should read payments and refunds with exact integer amounts, the largest the ZM field holds included', async () => {
    const lines = [
      zmLine(
        { txnType: '01', amount: 999_999_999_999, queryId: '752209081322060674028', orderId: 'ORDER0001', at },
        MER_ID,
      ),
      zmLine(
        {
          txnType: '04',
          amount: 1,
          queryId: '762209081322060674029',
          orderId: 'REFUND0001',
          origQueryId: '752209081322060674028',
          origOrderId: 'ORDER0001',
          at,
        },
        MER_ID,
      ),
    ];

    expect(await entries(unionpayBillZip(lines, '2026-11-30', MER_ID), '2026-11-30')).toEqual([
      {
        kind: 'PAYMENT',
        line: 1,
        transactionId: '752209081322060674028',
        orderNo: 'ORDER0001',
        amount: 999_999_999_999,
        at,
      },
      {
        kind: 'REFUND',
        line: 2,
        transactionId: '752209081322060674028',
        orderNo: 'ORDER0001',
        refundNo: 'REFUND0001',
        amount: 1,
        at,
      },
    ]);
  });

  it('should skip other transaction types and report unreadable lines without stopping', async () => {
    const good = zmLine({ txnType: '01', amount: 1234, queryId: 'Q1', orderId: 'ORDER0002', at }, MER_ID);
    const voided = good.slice(0, 3) + good.slice(3).replace(/ 01 00 000201/, ' 31 00 000201');
    const badAmount = good.replace('000000001234', '0000000012.4');
    const lines = ['short line', badAmount, voided, good];

    const read = await entries(unionpayBillZip(lines, '2026-11-30', MER_ID), '2026-11-30');

    expect(read.map((e) => [e.kind, e.line])).toEqual([
      ['MALFORMED', 1],
      ['MALFORMED', 2],
      ['PAYMENT', 4],
    ]);
    expect(read[1]).toMatchObject({ detail: expect.stringMatching(/12 digits of fen/) });
  });

  it("should date a December line of January 1st's bill in the year before", async () => {
    const lastYear = new Date('2026-12-31T15:59:59Z'); // 23:59:59 Beijing, December 31st
    const line = zmLine({ txnType: '01', amount: 5, queryId: 'Q2', orderId: 'ORDER0003', at: lastYear }, MER_ID);

    const [entry] = await entries(unionpayBillZip([line], '2027-01-01', MER_ID), '2027-01-01');

    expect(entry).toMatchObject({ kind: 'PAYMENT', at: lastYear });
  });

  it('should report a ZIP without a ZM file', async () => {
    const zip = unionpayBillZip([], '2026-11-30', MER_ID);
    const renamed = Buffer.from(zip.toString('latin1').replaceAll('88ZM_', '88XX_'), 'latin1');

    expect(await entries(renamed, '2026-11-30')).toEqual([
      { kind: 'MALFORMED', line: 0, detail: 'the ZIP has no ZM file' },
    ]);
  });
});

describe('saveFileContent', () => {
  it('should inflate fileContent (base64 of the zlib DEFLATE of the ZIP), and take a plain base64 ZIP as well', async () => {
    const zip = unionpayBillZip([], '2026-11-30', MER_ID);
    for (const content of [fileContentOf(zip), zip.toString('base64')]) {
      const path = await saveFileContent(content);
      expect((await import('node:fs')).readFileSync(path)).toEqual(zip);
    }
    await expect(saveFileContent(deflateSync(Buffer.from('x')).toString('base64').slice(0, 6))).rejects.toThrow();
  });
});
