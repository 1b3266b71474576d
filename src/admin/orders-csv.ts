import { stringify } from 'csv-stringify/sync';
import { formatYuan } from '../domain/money';
import { OrderListItemView } from './dto/admin-views';

/** The columns of GET /admin/orders.csv; `amount_minor` is the exact figure, `amount` the same for people. */
export const ORDER_CSV_COLUMNS = [
  'order_no',
  'status',
  'channel',
  'merchant_id',
  'transaction_id',
  'amount_minor',
  'currency',
  'amount',
  'created_at',
  'paid_at',
] as const;

type OrderCsvRecord = Record<(typeof ORDER_CSV_COLUMNS)[number], string | number | null>;

/** Currencies without a minor unit (as the console's format.ts has them); the others have two decimals. */
const ZERO_DECIMAL = new Set(['JPY', 'KRW']);

function orderCsvRecord(order: OrderListItemView): OrderCsvRecord {
  return {
    order_no: order.orderNo,
    status: order.status,
    channel: order.channel,
    merchant_id: order.merchantId,
    transaction_id: order.transactionId,
    amount_minor: order.amount,
    currency: order.currency,
    amount: ZERO_DECIMAL.has(order.currency) ? String(order.amount) : formatYuan(order.amount),
    created_at: order.createdAt,
    paid_at: order.paidAt,
  };
}

/**
 * The whole file, written by csv-stringify: a UTF-8 byte order mark (so that Excel reads it as
 * UTF-8), the header, one line per order, CRLF line ends and RFC 4180 quoting. A field a
 * spreadsheet would run as a formula (starting with = + - @, a tab or a carriage return) gets a
 * leading apostrophe (`escape_formulas`), as OWASP's CSV injection advice says: an order number
 * `=HYPERLINK(…)` from a shop must never become a live formula on an operator's machine.
 */
export function ordersCsv(orders: OrderListItemView[]): string {
  return stringify(orders.map(orderCsvRecord), {
    bom: true,
    header: true,
    columns: [...ORDER_CSV_COLUMNS],
    record_delimiter: 'windows',
    escape_formulas: true,
    // csv-stringify quotes a field holding its record delimiter (CRLF), not one holding a bare CR or
    // LF, which a spreadsheet reads as a line break all the same.
    quoted_match: /[\r\n]/,
  });
}
