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

/** Currencies without a minor unit (as the console's format.ts has them); the others have two decimals. */
const ZERO_DECIMAL = new Set(['JPY', 'KRW']);

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break, quotes doubled.
 * A field a spreadsheet would run as a formula (starting with = + - @, a tab or a carriage return)
 * is written with a leading apostrophe, as OWASP's CSV injection advice says: an order number
 * `=HYPERLINK(…)` from a shop must never become a live formula on an operator's machine.
 */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function orderCsvRow(order: OrderListItemView): string {
  const amount = ZERO_DECIMAL.has(order.currency) ? String(order.amount) : formatYuan(order.amount);
  return [
    order.orderNo,
    order.status,
    order.channel,
    order.merchantId,
    order.transactionId,
    order.amount,
    order.currency,
    amount,
    order.createdAt,
    order.paidAt,
  ]
    .map(csvField)
    .join(',');
}

/**
 * The whole file: a UTF-8 byte order mark (so that Excel reads it as UTF-8), the header, one line
 * per order, CRLF line ends as RFC 4180 has them.
 */
export function ordersCsv(orders: OrderListItemView[]): string {
  const lines = [ORDER_CSV_COLUMNS.join(','), ...orders.map(orderCsvRow)];
  return `\uFEFF${lines.join('\r\n')}\r\n`;
}
