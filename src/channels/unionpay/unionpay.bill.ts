import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { inflateSync } from 'node:zlib';
import yauzl, { Entry, ZipFile } from 'yauzl';
import { BillDate, BillEntry } from '../../domain/bill';
import { DomainError } from '../../domain/domain-error';
import { isValidMinorAmount } from '../../domain/money';

/**
 * The ZM file (全渠道商户一般交易明细) of UnionPay's daily reconciliation ZIP: fixed-width fields,
 * each followed by one separator byte. The widths are those of 《全渠道平台接入接口规范 第3部分 文件接口》
 * 6.1, as the official acp SDK demo's parseZMFile lists them.
 */
const ZM_WIDTHS = [
  3, 11, 11, 6, 10, 19, 12, 4, 2, 21, 2, 32, 2, 6, 10, 13, 13, 4, 15, 2, 2, 6, 2, 4, 32, 1, 21, 15, 1, 15, 32, 13, 13,
  8, 32, 13, 13, 12, 2, 1, 32, 98,
];
/** The fields read, by their 0-based position in ZM_WIDTHS. */
const FIELD = {
  transmittedAt: 4, // 交易传输时间 MMDDhhmmss, Beijing
  amount: 6, // 交易金额, fen, 12 digits
  queryId: 9, // 查询流水号
  orderId: 11, // 商户订单号 (the refund's own orderId on a refund line)
  txnType: 19, // 交易类型
  origQueryId: 26, // 原交易查询流水号
  origOrderId: 40, // 原始交易订单号
} as const;
const STARTS = ZM_WIDTHS.reduce<number[]>(
  (starts, _width, i) => [...starts, i === 0 ? 0 : starts[i - 1] + ZM_WIDTHS[i - 1] + 1],
  [],
);
/** The shortest line that holds every field read. */
const MIN_LINE_BYTES = STARTS[FIELD.origOrderId] + ZM_WIDTHS[FIELD.origOrderId];

/** The ZM file's name in the ZIP: INN<yyMMdd>88ZM_<merId> (the ZME file holds errors, not trades). */
const ZM_FILE = /ZM_[^/]*$/;

/**
 * fileTransfer's fileContent: base64 of the DEFLATE (zlib) of the ZIP, as the SDKs' deCodeFileContent
 * inflates it; a plain base64 ZIP is taken as well. Written to a temporary file for yauzl.
 */
export async function saveFileContent(fileContent: string): Promise<string> {
  const bytes = Buffer.from(fileContent, 'base64');
  const zip = bytes.subarray(0, 2).toString('latin1') === 'PK' ? bytes : inflateSync(bytes);
  const path = join(tmpdir(), `pcs-unionpay-bill-${randomUUID()}.zip`);
  await writeFile(path, zip);
  return path;
}

/** The payments (txnType 01) and refunds (04) of the ZM file; `date` gives the year the lines omit. */
export async function* parseUnionpayBill(zipPath: string, date: BillDate): AsyncGenerator<BillEntry> {
  const zip = await openZip(zipPath);
  try {
    const entry = await findEntry(zip, (name) => ZM_FILE.test(name));
    if (!entry) {
      yield { kind: 'MALFORMED', line: 0, detail: 'the ZIP has no ZM file' };
      return;
    }
    const stream = await new Promise<Readable>((resolve, reject) =>
      zip.openReadStream(entry, (error, s) => (error ? reject(error) : resolve(s))),
    );
    yield* parseZmLines(stream, date);
  } finally {
    zip.close();
  }
}

/** The ZM file's lines (GBK text; the fields read are ASCII, so bytes are counted as written). */
export async function* parseZmLines(stream: Readable, date: BillDate): AsyncGenerator<BillEntry> {
  let line = 0;
  for await (const text of createInterface({ input: stream.setEncoding('latin1'), crlfDelay: Infinity })) {
    line++;
    if (text.trim() === '') continue;
    const entry = readLine(text, line, date);
    if (entry) yield entry;
  }
}

function readLine(text: string, line: number, date: BillDate): BillEntry | undefined {
  try {
    if (text.length < MIN_LINE_BYTES) {
      throw new DomainError('MalformedRequest', `${text.length} bytes, fewer than the ZM format's fields`);
    }
    const field = (index: number) => text.slice(STARTS[index], STARTS[index] + ZM_WIDTHS[index]).trim();
    const txnType = field(FIELD.txnType);
    if (txnType !== '01' && txnType !== '04') return undefined;
    const amount = readAmount(field(FIELD.amount));
    const at = readTime(field(FIELD.transmittedAt), date);
    if (txnType === '01') {
      return {
        kind: 'PAYMENT',
        line,
        transactionId: required(field(FIELD.queryId), '查询流水号'),
        orderNo: required(field(FIELD.orderId), '商户订单号'),
        amount,
        at,
      };
    }
    return {
      kind: 'REFUND',
      line,
      transactionId: required(field(FIELD.origQueryId), '原交易查询流水号'),
      orderNo: required(field(FIELD.origOrderId), '原始交易订单号'),
      refundNo: required(field(FIELD.orderId), '商户订单号'),
      amount,
      at,
    };
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return { kind: 'MALFORMED', line, detail: error.message };
  }
}

/** 交易金额: twelve digits of fen, read as an integer (BigInt first, so that nothing is rounded). */
function readAmount(text: string): number {
  if (!/^\d{12}$/.test(text)) throw new DomainError('MalformedRequest', `交易金额 "${text}" is not 12 digits of fen`);
  const fen = BigInt(text);
  if (fen > BigInt(Number.MAX_SAFE_INTEGER) || !isValidMinorAmount(Number(fen))) {
    throw new DomainError('MalformedRequest', `交易金额 "${text}" is not a valid amount`);
  }
  return Number(fen);
}

/** MMDDhhmmss in Beijing; the year is the bill's, or the one before for a December line in a January bill. */
function readTime(text: string, date: BillDate): Date {
  const match = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(text);
  if (!match) throw new DomainError('MalformedRequest', `交易传输时间 "${text}" is not MMDDhhmmss`);
  const billYear = Number(date.slice(0, 4));
  const year = `${match[1]}${match[2]}` > date.slice(5, 7) + date.slice(8, 10) ? billYear - 1 : billYear;
  const iso = `${year}-${match[1]}-${match[2]}T${match[3]}:${match[4]}:${match[5]}`;
  const utc = new Date(`${iso}Z`);
  if (Number.isNaN(utc.getTime()) || utc.toISOString().slice(0, 19) !== iso) {
    throw new DomainError('MalformedRequest', `交易传输时间 "${text}" is not a time`);
  }
  return new Date(utc.getTime() - 8 * 3600 * 1000);
}

function required(value: string, name: string): string {
  if (!value || value.length > 64) throw new DomainError('MalformedRequest', `${name} is missing`);
  return value;
}

function openZip(path: string): Promise<ZipFile> {
  return new Promise<ZipFile>((resolve, reject) =>
    yauzl.open(path, { lazyEntries: true }, (error, file) => (error ? reject(error) : resolve(file))),
  );
}

function findEntry(zip: ZipFile, wanted: (name: string) => boolean): Promise<Entry | undefined> {
  return new Promise((resolve, reject) => {
    zip.on('entry', (entry: Entry) => (wanted(entry.fileName) ? resolve(entry) : zip.readEntry()));
    zip.on('end', () => resolve(undefined));
    zip.on('error', reject);
    zip.readEntry();
  });
}
