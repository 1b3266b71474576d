import { DomainError } from './domain-error';

/** Largest amount accepted anywhere, in minor units: well inside both BIGINT and Number.MAX_SAFE_INTEGER. */
export const MAX_AMOUNT = 10_000_000_000_000;

export function isValidMinorAmount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 && value <= MAX_AMOUNT;
}

/**
 * Parses a decimal major-unit string such as "88.88" into minor units (8888) using only
 * string and integer operations, so no binary floating point ever touches the amount. Accepts
 * exactly what the order API accepts: 0.01 up to MAX_AMOUNT minor units.
 */
export function parseDecimalAmount(text: string, field: string): number {
  // 12 integer digits: up to 999,999,999,999.99, beyond MAX_AMOUNT yet well inside safe integers.
  const match = /^(0|[1-9]\d{0,11})(?:\.(\d{1,2}))?$/.exec(text);
  if (!match) {
    throw new DomainError(
      'MalformedRequest',
      `${field} must be a decimal amount with at most 2 decimals, got "${text}"`,
    );
  }
  const minor = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  if (minor <= 0) throw new DomainError('MalformedRequest', `${field} must be greater than zero, got "${text}"`);
  if (minor > MAX_AMOUNT) {
    throw new DomainError('MalformedRequest', `${field} must be at most ${formatMajor(MAX_AMOUNT)}, got "${text}"`);
  }
  return minor;
}

/** 8888 → "88.88", by integer operations. */
function formatMajor(minor: number): string {
  return `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;
}

/** The BIGINT column transformer: mysql2 returns BIGINT as a string; refuse anything not exactly representable. */
export const bigintAmount = {
  to: (value: number | null | undefined) => value,
  from: (value: string | number | null): number | null => {
    if (value === null) return null;
    const n = Number(value);
    if (!Number.isSafeInteger(n)) throw new Error(`amount ${value} is not a safe integer`);
    return n;
  },
};

/** Yuan as the channels write it ("88.88"), from integer fen, without floating point. */
export function formatYuan(minor: number): string {
  return `${Math.trunc(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;
}
