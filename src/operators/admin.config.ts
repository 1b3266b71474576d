import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { registerAs } from '@nestjs/config';
import { IsOptional } from 'class-validator';
import { ConfigurationError, IntegerBetween, validateEnv } from '../platform/config/env-validation';

export const AdminRole = { Admin: 'admin', Viewer: 'viewer' } as const;
export type AdminRole = (typeof AdminRole)[keyof typeof AdminRole];

export interface AdminOperator {
  operatorId: string;
  token: string;
  role: AdminRole;
}

const OPERATOR_ID = /^[A-Za-z0-9_.@\-]{1,64}$/;
/** Printable ASCII without space, ',' (the entry separator) or ':' (the part separator). */
const TOKEN_CHARACTERS = /^[\x21-\x2b\x2d-\x39\x3b-\x7e]*$/;
const TOKEN_LENGTH = { min: 16, max: 256 };
const ROLES: readonly string[] = Object.values(AdminRole);

/** A token given as the SHA-256 of its bytes, in lower-case hex, so that the configuration never holds it. */
export const HASHED_TOKEN = /^sha256=[0-9a-f]{64}$/;

/**
 * ADMIN_TOKENS: comma-separated `operatorId:token:role` entries; and ADMIN_TOKENS_FILE: a file of
 * such entries, one a line (`#` comments and blank lines allowed), which the service re-reads when
 * it changes (see OperatorDirectory). A token may be given as `sha256=<hex>`. Neither set: the admin
 * API answers 503. The error names the entry's position and the part that is wrong, and never
 * quotes an entry, since entries hold tokens.
 */
export function loadAdminOperators(env: NodeJS.ProcessEnv = process.env): AdminOperator[] {
  const fromEnv = parseEntries(
    (env.ADMIN_TOKENS ?? '').split(',').map((entry, index) => ({ entry, where: `ADMIN_TOKENS entry ${index + 1}` })),
  );
  checkUnique(fromEnv, 'ADMIN_TOKENS');
  if (!env.ADMIN_TOKENS_FILE) return fromEnv;
  return withTokensFile(fromEnv, env.ADMIN_TOKENS_FILE);
}

/**
 * ADMIN_TOKENS's operators and ADMIN_TOKENS_FILE's together, as the start reads them and as every
 * re-read of the file does: an operator id, or a token, in both is refused.
 */
export function withTokensFile(fromEnv: readonly AdminOperator[], path: string): AdminOperator[] {
  const operators = [...fromEnv, ...readAdminTokensFile(path)];
  checkUnique(operators, 'ADMIN_TOKENS_FILE (with ADMIN_TOKENS)');
  return operators;
}

/** SHA-256 of the token: the configured token hashed, or the hash configured as `sha256=<hex>`. */
export function tokenDigest(token: string): Buffer {
  return HASHED_TOKEN.test(token)
    ? Buffer.from(token.slice('sha256='.length), 'hex')
    : createHash('sha256').update(token).digest();
}

/** The entries of ADMIN_TOKENS_FILE, each named by its line number in an error. */
export function readAdminTokensFile(path: string): AdminOperator[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ConfigurationError(`Invalid configuration: ADMIN_TOKENS_FILE ${path} cannot be read (${code})`);
  }
  const operators = parseEntries(
    text
      .split('\n')
      .map((entry, index) => ({ entry, where: `ADMIN_TOKENS_FILE line ${index + 1}` }))
      .filter(({ entry }) => !entry.trim().startsWith('#')),
  );
  checkUnique(operators, 'ADMIN_TOKENS_FILE');
  return operators;
}

function parseEntries(entries: Array<{ entry: string; where: string }>): AdminOperator[] {
  return entries
    .map(({ entry, where }) => ({ entry: entry.trim(), where }))
    .filter(({ entry }) => entry !== '')
    .map(({ entry, where }) => {
      const parts = entry.split(':');
      const problem = entryProblem(parts);
      if (problem) {
        throw new ConfigurationError(`Invalid configuration: ${where} must be operatorId:token:role: ${problem}`);
      }
      // Operator ids compare one way everywhere (the database's collation ignores case): lower case.
      return { operatorId: parts[0].toLowerCase(), token: parts[1], role: parts[2] as AdminRole };
    });
}

function checkUnique(operators: AdminOperator[], source: string): void {
  const duplicate = (key: (o: AdminOperator) => string) => new Set(operators.map(key)).size !== operators.length;
  if (duplicate((o) => o.operatorId)) {
    throw new ConfigurationError(`Invalid configuration: ${source} repeats an operatorId`);
  }
  // What a token authenticates, not its text: a token and its `sha256=` are the same token.
  if (duplicate((o) => tokenDigest(o.token).toString('hex'))) {
    throw new ConfigurationError(`Invalid configuration: ${source} gives two operators the same token`);
  }
}

/** Which part of `operatorId:token:role` is wrong, in words that quote no token; undefined when none is. */
function entryProblem(parts: string[]): string | undefined {
  if (parts.length !== 3) {
    return `it has ${parts.length - 1} ':' separators, not 2 (a token may contain neither ':' nor ',')`;
  }
  const [operatorId, token, role] = parts;
  if (!OPERATOR_ID.test(operatorId)) return 'the operatorId must be 1 to 64 letters, digits or _ . @ -';
  if (token.length < TOKEN_LENGTH.min || token.length > TOKEN_LENGTH.max) {
    return `the token is ${token.length} characters long, not ${TOKEN_LENGTH.min} to ${TOKEN_LENGTH.max}`;
  }
  if (!TOKEN_CHARACTERS.test(token)) return "the token must be printable ASCII without spaces, ',' or ':'";
  if (token.startsWith('sha256=') && !HASHED_TOKEN.test(token)) {
    return 'a hashed token must be sha256= and 64 lower-case hex digits';
  }
  if (!ROLES.includes(role)) return `the role must be ${ROLES.join(' or ')} (lower case)`;
  return undefined;
}

class AdminReadsEnv {
  @IsOptional()
  @IntegerBetween(1, 100)
  ADMIN_READS_PER_OPERATOR?: number;
}

export const DEFAULT_ADMIN_READS_PER_OPERATOR = 4;

/** ADMIN_READS_PER_OPERATOR: how many admin reads one operator may have running at once. */
export function loadAdminReadsPerOperator(env: NodeJS.ProcessEnv = process.env): number {
  return validateEnv(AdminReadsEnv, env).ADMIN_READS_PER_OPERATOR ?? DEFAULT_ADMIN_READS_PER_OPERATOR;
}

/** The admin API's configuration, from `env`. */
export function loadAdminConfig(env: NodeJS.ProcessEnv = process.env) {
  return {
    operators: loadAdminOperators(env),
    /** ADMIN_TOKENS's alone: what stays when ADMIN_TOKENS_FILE is re-read. */
    envOperators: loadAdminOperators({ ADMIN_TOKENS: env.ADMIN_TOKENS }),
    tokensFile: env.ADMIN_TOKENS_FILE || undefined,
    readsPerOperator: loadAdminReadsPerOperator(env),
  };
}

export const adminConfig = registerAs('admin', () => loadAdminConfig());
