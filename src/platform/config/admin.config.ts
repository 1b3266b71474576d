import { registerAs } from '@nestjs/config';
import { IsOptional } from 'class-validator';
import { ConfigurationError, IntegerBetween, validateEnv } from '../../domain/env-validation';

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

/**
 * ADMIN_TOKENS: comma-separated `operatorId:token:role` entries. Unset: the admin API answers 503.
 * The error names the entry's position and the part that is wrong, and never quotes an entry, since entries hold tokens.
 */
export function loadAdminOperators(env: NodeJS.ProcessEnv = process.env): AdminOperator[] {
  const entries = (env.ADMIN_TOKENS ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  const operators = entries.map((entry, index) => {
    const parts = entry.split(':');
    const problem = entryProblem(parts);
    if (problem) {
      throw new ConfigurationError(
        `Invalid configuration: ADMIN_TOKENS entry ${index + 1} must be operatorId:token:role: ${problem}`,
      );
    }
    // Operator ids compare one way everywhere (the database's collation ignores case): lower case.
    return { operatorId: parts[0].toLowerCase(), token: parts[1], role: parts[2] as AdminRole };
  });
  const duplicate = (key: (o: AdminOperator) => string) => new Set(operators.map(key)).size !== operators.length;
  if (duplicate((o) => o.operatorId))
    throw new ConfigurationError('Invalid configuration: ADMIN_TOKENS repeats an operatorId');
  if (duplicate((o) => o.token))
    throw new ConfigurationError('Invalid configuration: ADMIN_TOKENS gives two operators the same token');
  return operators;
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

export const adminConfig = registerAs('admin', () => ({
  operators: loadAdminOperators(),
  readsPerOperator: loadAdminReadsPerOperator(),
}));
