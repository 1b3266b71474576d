/** Digits after the point per currency; CNY (fen) and most others have two. */
const MINOR_DIGITS: Record<string, number> = { JPY: 0, KRW: 0 };

function minorDigits(currency: string): number {
  return MINOR_DIGITS[currency] ?? 2;
}

/** 123456 CNY → "1,234.56": integer minor units to text by string, never through a float. */
export function formatAmount(minor: number | string, currency = 'CNY'): string {
  const text = String(minor);
  if (!/^-?\d+$/.test(text)) return text;
  const negative = text.startsWith('-');
  const digits = minorDigits(currency);
  const padded = text.replace('-', '').padStart(digits + 1, '0');
  const units = padded.slice(0, padded.length - digits).replace(/^0+(?=\d)/, '');
  const grouped = units.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const fraction = digits === 0 ? '' : `.${padded.slice(-digits)}`;
  return `${negative ? '-' : ''}${grouped}${fraction}`;
}

/** "12.3" CNY → 1230; null when it is not a plain amount with at most the currency's digits. */
export function parseAmount(text: string, currency = 'CNY'): number | null {
  const digits = minorDigits(currency);
  const match = /^(\d{1,13})(?:\.(\d+))?$/.exec(text.trim());
  if (!match || (match[2] ?? '').length > digits) return null;
  const minor = Number(match[1] + (match[2] ?? '').padEnd(digits, '0'));
  return Number.isSafeInteger(minor) ? minor : null;
}

export const BEIJING = 'Asia/Shanghai';

/** A date and time in `locale`, in the operator's own zone (or `timeZone`), with the zone's name unless `zoneName` is false. */
export function formatTime(iso: string | null | undefined, locale: string, timeZone?: string, zoneName = true): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return new Intl.DateTimeFormat(locale, {
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
    timeZone,
    timeZoneName: zoneName ? 'short' : undefined,
  }).format(date);
}

/**
 * The one way the console writes a moment: the operator's locale and zone, and Beijing time beside
 * it (the channels' days); `beijing` is null when the operator's own zone already is Beijing's.
 */
export function formatMoment(
  iso: string | null | undefined,
  locale: string,
  timeZone?: string,
): { local: string; beijing: string | null } {
  const local = formatTime(iso, locale, timeZone);
  if (!iso || local === iso) return { local, beijing: null };
  const beijing = formatTime(iso, locale, BEIJING, false);
  return { local, beijing: formatTime(iso, locale, timeZone, false) === beijing ? null : beijing };
}

/** A chart's time tick in `locale` and the operator's zone: `14:00`, with the day where it changes (`12/05 14:00`). */
export function formatTick(ms: number, locale: string, withDay: boolean, timeZone?: string): string {
  return new Intl.DateTimeFormat(locale, {
    month: withDay ? '2-digit' : undefined,
    day: withDay ? '2-digit' : undefined,
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZone,
  }).format(new Date(ms));
}

/**
 * A processing time of whole milliseconds (processing_ms is truncated to the millisecond): 0 is
 * anything under one, so it reads "<1 ms", never "0 ms".
 */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return ms < 1 ? '<1 ms' : `${ms} ms`;
}

const DAY_PARTS = { year: 'numeric', month: '2-digit', day: '2-digit', timeZone: 'UTC' } as const;
const PATTERN_OF: Record<string, string> = { year: 'yyyy', month: 'mm', day: 'dd' };

/** A calendar day (`yyyy-mm-dd`) as `locale` writes the day of a moment: `05/12/2026` en-GB, `12/05/2026` en-US, `2026/12/05` zh-CN. */
export function formatDay(day: string, locale: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!match) return day;
  return new Intl.DateTimeFormat(locale, DAY_PARTS).format(Date.UTC(+match[1], +match[2] - 1, +match[3]));
}

/** How `locale` writes a day, for a date field's label: `dd/mm/yyyy`, `mm/dd/yyyy`, `yyyy/mm/dd`. */
export function dayPattern(locale: string): string {
  return new Intl.DateTimeFormat(locale, DAY_PARTS)
    .formatToParts(Date.UTC(2026, 11, 31))
    .map((part) => PATTERN_OF[part.type] ?? part.value)
    .join('');
}

/**
 * A day typed as `locale` writes it (any separators between the three numbers), or as
 * `yyyy-mm-dd`, back to `yyyy-mm-dd`; null when it is not a real calendar day.
 */
export function parseDay(text: string, locale: string): string | null {
  const numbers = /^\s*(\d{1,4})\D{1,3}(\d{1,2}|\d{4})\D{1,3}(\d{1,4})\s*$/.exec(text);
  if (!numbers) return null;
  const order = numbers[1].length === 4 ? ['year', 'month', 'day'] : dayOrder(locale);
  const part = (type: string) => Number(numbers[order.indexOf(type) + 1]);
  const [year, month, day] = [part('year'), part('month'), part('day')];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (year < 1000 || date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day)
    return null;
  return date.toISOString().slice(0, 10);
}

function dayOrder(locale: string): string[] {
  return new Intl.DateTimeFormat(locale, DAY_PARTS)
    .formatToParts(Date.UTC(2026, 11, 31))
    .map((part) => part.type)
    .filter((type) => type in PATTERN_OF);
}

/** Today's calendar day in Beijing (the channels' bill days), shifted by `days`. */
export function beijingDate(days = 0, now = new Date()): string {
  const shifted = new Date(now.getTime() + days * 86_400_000);
  return new Intl.DateTimeFormat('en-CA', {
    timeZone: BEIJING,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(shifted);
}
