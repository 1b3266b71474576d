import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { BillEntry, BillLine, parseBeijingTime, parseBillAmount } from '../../domain/bill';
import { DomainError } from '../../domain/domain-error';

const SUMMARY_HEADER = '总交易单数';
/** Columns by their header; the order bill (订单金额) and refund request (申请退款金额) columns fall back to the settlement ones of older bills. */
const COLUMNS = {
  time: ['交易时间'],
  mchid: ['商户号'],
  transactionId: ['微信订单号'],
  orderNo: ['商户订单号'],
  state: ['交易状态'],
  orderAmount: ['订单金额', '应结订单金额'],
  refundNo: ['商户退款单号'],
  refundAmount: ['申请退款金额', '退款金额'],
  refundState: ['退款状态'],
} as const;
type Column = keyof typeof COLUMNS;
/** A service provider's bill: the sub-merchant of each line (特约商户号), beside 商户号, the provider's mchid. */
const SUB_MCHID_COLUMN = '特约商户号';

/**
 * WeChat Pay's trade bill (bill_type=ALL): CSV, every field prefixed with a backtick, amounts in
 * yuan, a header line, one line per payment (交易状态 SUCCESS) or refund (REFUND), then the summary
 * header (总交易单数, …) and its line. The summary's count is checked against the lines read, so
 * a truncated bill is reported. Lines in other states (REVOKED, …) moved no money and are skipped.
 */
export async function* parseWechatpayBill(
  input: Readable,
  mchid: string,
  subMchid?: string,
): AsyncGenerator<BillEntry> {
  const records = input.pipe(
    parse({ bom: true, quote: false, relax_column_count: true, skip_empty_lines: true, info: true }),
  ) as AsyncIterable<{ record: string[]; info: { lines: number } }>;
  let columns: Record<Column, number> | undefined;
  let subMchidColumn = -1;
  let detailLines = 0;
  let summaryNext = false;
  let summarized = false;
  for await (const { record, info } of records) {
    const fields = record.map((f) => f.replace(/^`/, '').trim());
    if (!columns) {
      columns = headerColumns(fields);
      subMchidColumn = fields.indexOf(SUB_MCHID_COLUMN);
      if (!columns) {
        yield { kind: 'MALFORMED', line: info.lines, detail: 'the bill does not start with its header line' };
        return;
      }
      continue;
    }
    if (fields[0] === SUMMARY_HEADER) {
      summaryNext = true;
      continue;
    }
    if (summaryNext) {
      summarized = true;
      if (fields[0] !== String(detailLines)) {
        yield {
          kind: 'MALFORMED',
          line: info.lines,
          detail: `the summary counts ${fields[0]} lines, the bill has ${detailLines}`,
        };
      }
      break;
    }
    detailLines++;
    const other = subMchid === undefined ? undefined : otherSubMerchant(fields[subMchidColumn], subMchid);
    const entry = other
      ? { kind: 'MALFORMED' as const, line: info.lines, detail: other }
      : readLine(fields, columns, info.lines, mchid);
    if (entry) yield entry;
  }
  if (columns && !summarized) {
    yield { kind: 'MALFORMED', line: 0, detail: 'the bill ends without its summary: it may be truncated' };
  }
}

function headerColumns(header: string[]): Record<Column, number> | undefined {
  const entries = Object.entries(COLUMNS).map(([column, names]) => {
    const index = names.map((name) => header.indexOf(name)).find((i) => i >= 0);
    return [column, index ?? -1] as const;
  });
  if (entries.some(([, index]) => index < 0)) return undefined;
  return Object.fromEntries(entries) as Record<Column, number>;
}

function readLine(
  fields: string[],
  columns: Record<Column, number>,
  line: number,
  mchid: string,
): BillEntry | undefined {
  const field = (column: Column) => fields[columns[column]] ?? '';
  try {
    if (fields.length <= Math.max(...Object.values(columns))) {
      throw new DomainError('MalformedRequest', `${fields.length} fields, fewer than the header's`);
    }
    if (field('mchid') !== mchid) throw new DomainError('MalformedRequest', `商户号 ${field('mchid')} is not ${mchid}`);
    const state = field('state');
    if (state !== 'SUCCESS' && state !== 'REFUND') return undefined;
    if (state === 'REFUND' && field('refundState') !== 'SUCCESS') return undefined;
    const common = {
      line,
      transactionId: required(field('transactionId'), '微信订单号'),
      orderNo: required(field('orderNo'), '商户订单号'),
      at: parseBeijingTime(field('time')),
    };
    const payment = state === 'SUCCESS';
    const amount = parseBillAmount(
      field(payment ? 'orderAmount' : 'refundAmount'),
      payment ? '订单金额' : '申请退款金额',
    );
    if (amount <= 0) throw new DomainError('MalformedRequest', `amount ${amount} is not positive`);
    const entry: BillLine = payment
      ? { kind: 'PAYMENT', ...common, amount }
      : { kind: 'REFUND', ...common, amount, refundNo: required(field('refundNo'), '商户退款单号') };
    return entry;
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return { kind: 'MALFORMED', line, detail: error.message };
  }
}

/** A sub-merchant's bill names it on every line: a line of another (or of none) is not the bill asked for. */
function otherSubMerchant(field: string | undefined, subMchid: string): string | undefined {
  if (field === undefined) return `the bill has no ${SUB_MCHID_COLUMN} column for sub_mchid ${subMchid}`;
  return field === subMchid ? undefined : `${SUB_MCHID_COLUMN} ${field || '(none)'} is not ${subMchid}`;
}

function required(value: string, name: string): string {
  if (!value || value.length > 64) throw new DomainError('MalformedRequest', `${name} is missing or too long`);
  return value;
}
