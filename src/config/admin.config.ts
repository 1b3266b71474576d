import { registerAs } from '@nestjs/config';
import { IsOptional } from 'class-validator';
import { ConfigurationError, IntegerBetween, validateEnv } from './validate-env';

export const AdminRole = { Admin: 'admin', Viewer: 'viewer' } as const;
export type AdminRole = (typeof AdminRole)[keyof typeof AdminRole];

export interface AdminOperator {
  operatorId: string;
  token: string;
  role: AdminRole;
}

const ENTRY = /^([A-Za-z0-9_.@\-]{1,64}):([\x21-\x2b\x2d-\x39\x3b-\x7e]{16,256}):(admin|viewer)$/;

/**
 * ADMIN_TOKENS: comma-separated `operatorId:token:role` entries. Unset: the admin API answers 503.
 * The error never quotes an entry, since entries hold tokens.
 */
export function loadAdminOperators(env: NodeJS.ProcessEnv = process.env): AdminOperator[] {
  const entries = (env.ADMIN_TOKENS ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  const operators = entries.map((entry, index) => {
    const match = ENTRY.exec(entry);
    if (!match) {
      throw new ConfigurationError(
        `Invalid configuration: ADMIN_TOKENS entry ${index + 1} must be operatorId:token:role, with a token of ` +
          `16 to 256 printable characters without ',' or ':' and a role of admin or viewer`,
      );
    }
    return { operatorId: match[1], token: match[2], role: match[3] as AdminRole };
  });
  const duplicate = (key: (o: AdminOperator) => string) => new Set(operators.map(key)).size !== operators.length;
  if (duplicate((o) => o.operatorId))
    throw new ConfigurationError('Invalid configuration: ADMIN_TOKENS repeats an operatorId');
  if (duplicate((o) => o.token))
    throw new ConfigurationError('Invalid configuration: ADMIN_TOKENS gives two operators the same token');
  return operators;
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
