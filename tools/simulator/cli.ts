/** What every simulator command shares: its options, its mistakes, its HTTP calls (each bounded), its output. */
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs, ParseArgsConfig, parseEnv } from 'node:util';

export const DEFAULT_KEYS_DIR = '.simulator';
export const DEFAULT_ENV_FILE = '.env.local';
export const DEFAULT_SERVICE_PORT = 3000;
export const DEFAULT_PLATFORM_PORT = 3100;

/** A mistake in how the simulator was called: printed without a stack, exit code 2. */
export class UsageError extends Error {}

/** Options every command takes; without --target, the service is the one `.env.local` configures (its PORT). */
export const COMMON_OPTIONS = {
  keys: { type: 'string', default: DEFAULT_KEYS_DIR },
  'env-local': { type: 'string', default: DEFAULT_ENV_FILE },
  target: { type: 'string' },
} as const;

export const COMMON_USAGE =
  'every command takes --keys DIR (default .simulator) and --target URL (default http://127.0.0.1:<PORT of .env.local>)';

/** `--help`, `-h` or `help`: what every command-line tool answers with its usage. */
export function asksForHelp(args: string[]): boolean {
  return args.some((arg) => arg === '--help' || arg === '-h') || (args.length === 1 && args[0] === 'help');
}

export function isHelpWord(word: string | undefined): boolean {
  return word === 'help' || word === '--help' || word === '-h';
}

export function parseCommand<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T) {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { ...COMMON_OPTIONS, ...options }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const common = parsed.values as { target?: string; 'env-local': string };
  return { ...parsed, values: { ...parsed.values, target: serviceTarget(common.target, common['env-local']) } };
}

/** --target when given; else the service on this machine at the PORT `.env.local` sets (3000 without one). */
export function serviceTarget(target: string | undefined, envFile: string): string {
  if (target !== undefined) return target;
  const port = existsSync(envFile) ? parseEnv(readFileSync(envFile, 'utf8')).PORT : undefined;
  return `http://127.0.0.1:${port ?? DEFAULT_SERVICE_PORT}`;
}

export function positiveInteger(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9]\d{0,14}$/.test(value)) throw new UsageError(`--${name} must be a positive integer, got "${value}"`);
  return Number(value);
}

export function onePositional(positionals: string[], what: string): string {
  if (positionals.length !== 1) throw new UsageError(`expected exactly one ${what}, got ${positionals.length}`);
  return positionals[0];
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  body: string;
  ms: number;
}

const HTTP_TIMEOUT_MS = 10_000;

/** One HTTP request, answered or failed within 10 s. A connection refused says which service is down. */
export async function http(
  url: string,
  init: { method: string; headers?: Record<string, string>; body?: string },
): Promise<HttpAnswer> {
  const started = performance.now();
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(HTTP_TIMEOUT_MS) });
    const body = await response.text();
    return { status: response.status, headers: response.headers, body, ms: performance.now() - started };
  } catch (error) {
    const { cause } = error as { cause?: { code?: string; message?: string } };
    const why = cause?.code ?? cause?.message ?? (error as Error).message;
    throw new UnreachableError(`${init.method} ${url} failed (${why}): is it running?`);
  }
}

/** The service or the platform server did not answer at all: exit code 1, with what to check. */
export class UnreachableError extends Error {}

export async function json(
  url: string,
  method: string,
  token: string | undefined,
  body?: unknown,
): Promise<HttpAnswer & { json: Record<string, unknown> }> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  const answer = await http(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(answer.body) as Record<string, unknown>;
  } catch {
    // not JSON: callers print the body
  }
  return { ...answer, json: parsed };
}

/** 1999 → "19.99", with integers only. */
export function formatMinor(amount: number): string {
  return `${Math.floor(amount / 100)}.${String(amount % 100).padStart(2, '0')}`;
}

export function print(line = ''): void {
  process.stdout.write(`${line}\n`);
}
