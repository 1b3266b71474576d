import { ReportingDatabase } from './reporting-database';
import { ServerFlavour } from './server-flavour';

/** A scrape never waits on the database longer than this; a slower answer leaves the gauges out. */
export const SCRAPE_QUERY_TIMEOUT_MS = 2000;
const CLIENT_TIMEOUT_MS = SCRAPE_QUERY_TIMEOUT_MS + 500;

/**
 * A read for a scrape-time gauge: stopped by the server at the limit, so that a slow database never
 * piles up scrapes, and abandoned by the client soon after, because the server's limit does not cover
 * a connection that hangs on the network. `sql` must begin with its top-level SELECT.
 */
export async function scrapeQuery<T>(reporting: ReportingDatabase, sql: string, params: unknown[] = []): Promise<T[]> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('the database did not answer in time')), CLIENT_TIMEOUT_MS);
  });
  try {
    // On the reporting pool: a scrape never takes a connection the notify path needs.
    const query = reporting
      .connection()
      .then(({ dataSource, flavour }) => dataSource.query<T[]>(withTimeLimit(flavour, sql), params));
    return await Promise.race([query, late]);
  } finally {
    clearTimeout(timer);
  }
}

function withTimeLimit(flavour: ServerFlavour, sql: string): string {
  if (flavour === 'mariadb') {
    return `SET STATEMENT max_statement_time = ${SCRAPE_QUERY_TIMEOUT_MS / 1000} FOR ${sql}`;
  }
  return sql.replace('SELECT', `SELECT /*+ MAX_EXECUTION_TIME(${SCRAPE_QUERY_TIMEOUT_MS}) */`);
}
