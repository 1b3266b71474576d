import { DEFAULT_DATABASE_URL } from '../config/database.config';

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

interface DriverError {
  code?: string;
  errno?: number;
  message?: string;
}

/**
 * A start that failed on the database, said with what to do: the host, port and database DATABASE_URL names (never its
 * password), and for a missing database the command that creates it. Undefined for any other error.
 */
export function explainDatabaseStartError(
  error: unknown,
  databaseUrl = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL,
): string | undefined {
  const { code, message } = (error ?? {}) as DriverError;
  const where = describeDatabaseUrl(databaseUrl);
  if (code === 'ER_BAD_DB_ERROR') {
    return `${message}: database ${where.name} does not exist on ${where.server} (DATABASE_URL); create it with \`npm run db:create\``;
  }
  if (code === 'ER_ACCESS_DENIED_ERROR' || code === 'ER_DBACCESS_DENIED_ERROR') {
    return `${message}: check the user and password DATABASE_URL gives for ${where.server}`;
  }
  if ((code && UNREACHABLE_CODES.has(code)) || /connect ETIMEDOUT|connect timed out/i.test(message ?? '')) {
    return (
      `cannot reach the database at ${where.server} (${code ?? message}), as DATABASE_URL says: ` +
      'is MariaDB/MySQL running there, and is DATABASE_URL right?'
    );
  }
  return undefined;
}

/** host:port and the database's name, without the user's password. */
function describeDatabaseUrl(databaseUrl: string): { server: string; name: string } {
  try {
    const url = new URL(databaseUrl);
    return { server: `${url.hostname}:${url.port || '3306'}`, name: `"${decodeURIComponent(url.pathname.slice(1))}"` };
  } catch {
    return { server: 'the host DATABASE_URL names', name: 'the one DATABASE_URL names' };
  }
}
