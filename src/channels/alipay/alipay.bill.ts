import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import iconv from 'iconv-lite';
import yauzl, { Entry, ZipFile } from 'yauzl';
import { BillEntry, BillLine, parseBeijingTime, parseBillAmount } from '../../domain/bill';
import { DomainError } from '../../domain/domain-error';

/** The detail file of the ZIP (the other one, 业务明细(汇总), is the summary per day). */
const DETAIL_FILE = /业务明细\.csv$/;
const COLUMNS = {
  transactionId: '支付宝交易号',
  orderNo: '商户订单号',
  type: '业务类型',
  finishedAt: '完成时间',
  orderAmount: '订单金额（元）',
  refundNo: '退款批次号/请求号',
} as const;
type Column = keyof typeof COLUMNS;

/**
 * Alipay's trade bill: a ZIP of GBK-encoded CSV files. The 业务明细 file has `#` comment lines
 * (title, account, period; the totals at the end), a header line, then one line per trade (业务类型
 * 交易) or refund (退款), fields padded with a tab. A refund line's 订单金额 is the refunded amount,
 * written negative. Anything else (退款(交易退回), 冻结, …) moved no money of ours and is skipped.
 */
export async function* parseAlipayBill(zipPath: string): AsyncGenerator<BillEntry> {
  const detail = await openDetailFile(zipPath);
  if (!detail) {
    yield { kind: 'MALFORMED', line: 0, detail: 'the ZIP has no 业务明细 file' };
    return;
  }
  try {
    yield* parseAlipayDetail(detail.stream);
  } finally {
    detail.zip.close();
  }
}

/** The 业务明细 CSV itself, as GBK bytes. */
export async function* parseAlipayDetail(gbk: Readable): AsyncGenerator<BillEntry> {
  const records = gbk.pipe(iconv.decodeStream('gbk')).pipe(
    parse({
      comment: '#',
      comment_no_infix: true,
      relax_column_count: true,
      skip_empty_lines: true,
      trim: true,
      info: true,
    }),
  ) as AsyncIterable<{ record: string[]; info: { lines: number } }>;
  let columns: Record<Column, number> | undefined;
  for await (const { record, info } of records) {
    if (!columns) {
      columns = headerColumns(record);
      if (!columns) {
        yield { kind: 'MALFORMED', line: info.lines, detail: 'the 业务明细 file has no header line' };
        return;
      }
      continue;
    }
    const entry = readLine(record, columns, info.lines);
    if (entry) yield entry;
  }
}

function headerColumns(header: string[]): Record<Column, number> | undefined {
  const entries = Object.entries(COLUMNS).map(([column, name]) => [column, header.indexOf(name)] as const);
  if (entries.some(([, index]) => index < 0)) return undefined;
  return Object.fromEntries(entries) as Record<Column, number>;
}

function readLine(fields: string[], columns: Record<Column, number>, line: number): BillEntry | undefined {
  const field = (column: Column) => fields[columns[column]] ?? '';
  try {
    if (fields.length <= Math.max(...Object.values(columns))) {
      throw new DomainError('MalformedRequest', `${fields.length} fields, fewer than the header's`);
    }
    const type = field('type');
    if (type !== '交易' && type !== '退款') return undefined;
    const amount = Math.abs(parseBillAmount(field('orderAmount'), COLUMNS.orderAmount));
    if (amount === 0) throw new DomainError('MalformedRequest', 'the amount is zero');
    const common = {
      line,
      transactionId: required(field('transactionId'), COLUMNS.transactionId),
      orderNo: required(field('orderNo'), COLUMNS.orderNo),
      at: parseBeijingTime(field('finishedAt')),
      amount,
    };
    const entry: BillLine =
      type === '交易'
        ? { kind: 'PAYMENT', ...common }
        : { kind: 'REFUND', ...common, refundNo: required(field('refundNo'), COLUMNS.refundNo) };
    return entry;
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return { kind: 'MALFORMED', line, detail: error.message };
  }
}

function required(value: string, name: string): string {
  if (!value || value.length > 64) throw new DomainError('MalformedRequest', `${name} is missing or too long`);
  return value;
}

async function openDetailFile(zipPath: string): Promise<{ zip: ZipFile; stream: Readable } | undefined> {
  const zip = await new Promise<ZipFile>((resolve, reject) =>
    yauzl.open(zipPath, { lazyEntries: true, decodeStrings: false }, (error, file) =>
      error ? reject(error) : resolve(file),
    ),
  );
  const entry = await findEntry(zip, (name) => DETAIL_FILE.test(name));
  if (!entry) {
    zip.close();
    return undefined;
  }
  const stream = await new Promise<Readable>((resolve, reject) =>
    zip.openReadStream(entry, (error, s) => (error ? reject(error) : resolve(s))),
  );
  return { zip, stream };
}

/** Alipay writes the names in GBK without the ZIP's UTF-8 flag; a name with the flag is UTF-8. */
function entryName(entry: Entry): string {
  const raw = entry.fileName as unknown as Buffer;
  return (entry.generalPurposeBitFlag & 0x800) !== 0 ? raw.toString('utf8') : iconv.decode(raw, 'gbk');
}

function findEntry(zip: ZipFile, wanted: (name: string) => boolean): Promise<Entry | undefined> {
  return new Promise((resolve, reject) => {
    zip.on('entry', (entry: Entry) => (wanted(entryName(entry)) ? resolve(entry) : zip.readEntry()));
    zip.on('end', () => resolve(undefined));
    zip.on('error', reject);
    zip.readEntry();
  });
}
