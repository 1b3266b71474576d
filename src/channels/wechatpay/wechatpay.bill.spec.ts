import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { BillEntry } from '../../domain/bill';
import { openMaybeGzipped, sha1Hex } from '../bill-file';
import { parseWechatpayBill } from './wechatpay.bill';

const FIXTURE = readFileSync(join(__dirname, '../../../test/fixtures/bills/wechatpay-tradebill-all.csv'));
const MCHID = '1900009191';

async function collect(source: Buffer | string, mchid = MCHID): Promise<BillEntry[]> {
  const entries: BillEntry[] = [];
  for await (const entry of parseWechatpayBill(Readable.from([Buffer.from(source)]), mchid)) entries.push(entry);
  return entries;
}

describe(parseWechatpayBill.name, () => {
  it('should read payments and refunds in exact minor units, skipping lines that moved no money', async () => {
    const entries = await collect(FIXTURE);

    expect(entries).toEqual([
      {
        kind: 'PAYMENT',
        line: 2,
        transactionId: '4200002026113000000001',
        orderNo: 'ORD20261130A1',
        amount: 8888,
        at: new Date('2026-11-29T16:00:03Z'),
      },
      // 订单金额 (2000.00), not 应结订单金额 (1999.00, after the coupon): the order's amount is what we compare.
      expect.objectContaining({ kind: 'PAYMENT', line: 3, transactionId: '4200002026113000000002', amount: 200000 }),
      {
        kind: 'REFUND',
        line: 5,
        transactionId: '4200002026112900000009',
        orderNo: 'ORD20261129Z9',
        amount: 1050,
        refundNo: 'RF20261130Z9',
        at: new Date('2026-11-30T12:15:00Z'),
      },
      expect.objectContaining({ kind: 'PAYMENT', line: 6, amount: 1, at: new Date('2026-11-30T15:59:59Z') }),
    ]);
  });

  it('should read the gzipped bill (tar_type=GZIP) the same, and hash the bill as WeChat does: unzipped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wx-bill-'));
    writeFileSync(join(dir, 'plain'), FIXTURE);
    writeFileSync(join(dir, 'gzip'), gzipSync(FIXTURE));
    const expectedSha1 = (await import('node:crypto')).createHash('sha1').update(FIXTURE).digest('hex');

    await expect(sha1Hex(await openMaybeGzipped(join(dir, 'gzip')))).resolves.toBe(expectedSha1);
    await expect(sha1Hex(await openMaybeGzipped(join(dir, 'plain')))).resolves.toBe(expectedSha1);
    const fromGzip: BillEntry[] = [];
    for await (const e of parseWechatpayBill(await openMaybeGzipped(join(dir, 'gzip')), MCHID)) fromGzip.push(e);
    await expect(collect(FIXTURE)).resolves.toEqual(fromGzip);
  });

  it('should report a malformed line and go on with the next', async () => {
    const lines = FIXTURE.toString('utf8').split('\r\n');
    lines.splice(2, 0, '`2026-11-30 10:00:00,`wx,`1900009191,`garbage');
    lines.splice(
      3,
      0,
      lines[1].replace('`88.88,`0.00,`0,`0', '`88.8.8,`0.00,`0,`0').replace('`88.88,`0.00,`', '`8a.88,`0.00,`'),
    );
    const summaryIndex = lines.findIndex((l) => l.startsWith('总交易单数'));
    lines[summaryIndex + 1] = lines[summaryIndex + 1].replace('`5,', '`7,');

    const entries = await collect(lines.join('\r\n'));

    expect(entries.filter((e) => e.kind === 'MALFORMED')).toEqual([
      { kind: 'MALFORMED', line: 3, detail: expect.stringContaining('fewer than the header') },
      { kind: 'MALFORMED', line: 4, detail: expect.stringContaining('not an amount') },
    ]);
    expect(entries.filter((e) => e.kind !== 'MALFORMED')).toHaveLength(4);
  });

  it('should report a bill whose summary does not count its lines, or that has no summary (truncated)', async () => {
    const text = FIXTURE.toString('utf8');
    const miscounted = await collect(text.replace('`5,`2087.89', '`6,`2087.89'));
    const truncated = await collect(text.slice(0, text.indexOf('总交易单数')));

    expect(miscounted.at(-1)).toEqual({
      kind: 'MALFORMED',
      line: 8,
      detail: 'the summary counts 6 lines, the bill has 5',
    });
    expect(truncated.at(-1)).toEqual(
      expect.objectContaining({ kind: 'MALFORMED', detail: expect.stringContaining('truncated') }),
    );
  });

  it('should refuse lines of another merchant and a file that is not a bill', async () => {
    const entries = await collect(FIXTURE, '1900000000');
    const notABill = await collect('<html>error</html>\n');

    expect(entries.every((e) => e.kind === 'MALFORMED')).toBe(true);
    expect(notABill).toEqual([{ kind: 'MALFORMED', line: 1, detail: 'the bill does not start with its header line' }]);
  });
});
