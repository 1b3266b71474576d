import { DomainError } from './domain-error';

/** One line of a channel's trade bill that is about money: a payment, or a refund of one. */
export interface BillLine {
  kind: 'PAYMENT' | 'REFUND';
  /** 1-based line number in the bill file, for operators looking it up. */
  line: number;
  /** The channel's transaction id of the payment (of the refunded payment, for a refund). */
  transactionId: string;
  /** Our order number (out_trade_no). */
  orderNo: string;
  /** Integer minor units: the order total for a payment, the refunded amount for a refund. */
  amount: number;
  /** Our refund number (the channel's refund idempotency key); refunds only. */
  refundNo?: string;
  /** When the channel says it happened. */
  at: Date;
}

/** A line the parser could not read: reported, never fatal. */
export interface MalformedBillLine {
  kind: 'MALFORMED';
  line: number;
  detail: string;
}

export type BillEntry = BillLine | MalformedBillLine;

/**
 * The answer to "give me the bill of this day": its lines (read from a local copy whose integrity
 * was checked, so they can be read at any pace), the channel's "not generated yet", or a failure.
 */
export type BillDownload =
  { outcome: 'READY'; entries: AsyncIterable<BillEntry> } | { outcome: 'NOT_READY' | 'FAILED'; detail: string };

/** A bill date: the calendar day in Beijing time, YYYY-MM-DD. */
export type BillDate = string;

const BEIJING_OFFSET_MS = 8 * 3600 * 1000;
const DAY_MS = 24 * 3600 * 1000;
const BILL_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const BEIJING_TIME = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})$/;

export function isBillDate(text: string): boolean {
  const match = BILL_DATE.exec(text);
  if (!match) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === text;
}

/** The UTC instants [start, end) of a Beijing calendar day. */
export function billDayRange(date: BillDate): { start: Date; end: Date } {
  const start = new Date(Date.parse(`${date}T00:00:00Z`) - BEIJING_OFFSET_MS);
  return { start, end: new Date(start.getTime() + DAY_MS) };
}

export function shiftBillDate(date: BillDate, days: number): BillDate {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** The Beijing calendar day an instant falls on. */
export function billDateOf(at: Date): BillDate {
  return new Date(at.getTime() + BEIJING_OFFSET_MS).toISOString().slice(0, 10);
}

/** "2026-11-30 23:59:59" in Beijing time, as both bills write it. */
export function parseBeijingTime(text: string): Date {
  const match = BEIJING_TIME.exec(text);
  const utc = match ? new Date(`${match[1]}T${match[2]}Z`) : undefined;
  // Date.parse takes "2026-11-31" as December 1st: the time must read back as written.
  if (!utc || Number.isNaN(utc.getTime()) || utc.toISOString().slice(0, 19) !== `${match![1]}T${match![2]}`) {
    throw new DomainError('MalformedRequest', `not a time: "${text}"`);
  }
  return new Date(utc.getTime() - BEIJING_OFFSET_MS);
}

/**
 * A bill amount in yuan ("88.88", "-10.00", "0.00") as integer fen, with string and integer
 * operations only. The sign is returned apart: some channels write refunds as negative amounts.
 */
export function parseBillAmount(text: string, field: string): number {
  const match = /^(-?)(0|[1-9]\d{0,10})(?:\.(\d{1,2}))?$/.exec(text);
  if (!match) throw new DomainError('MalformedRequest', `${field} is not an amount: "${text}"`);
  const minor = Number(match[2]) * 100 + Number((match[3] ?? '').padEnd(2, '0'));
  return match[1] === '-' ? -minor : minor;
}
