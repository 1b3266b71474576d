import { createConnection } from 'mysql2/promise';
import { DataSource } from 'typeorm';

/** Which server answers: what statement time limits, collations and schema metadata depend on. */
export type ServerFlavour = 'mariadb' | 'mysql';

/** MariaDB's VERSION() says so ("10.11.6-MariaDB-0+deb12u1"); MySQL's is a bare number ("8.4.3"). */
export function flavourOfVersion(version: string): ServerFlavour {
  return /mariadb/i.test(version) ? 'mariadb' : 'mysql';
}

/**
 * Asks the server behind a pool, not the URL: `mysql://` is what most people write for a MariaDB
 * server too, and every MySQL client accepts it.
 */
export async function askServerFlavour(dataSource: DataSource): Promise<ServerFlavour> {
  const [{ version }] = await dataSource.query<Array<{ version: string }>>('SELECT VERSION() AS version');
  return flavourOfVersion(version);
}

/**
 * The same question before a DataSource exists, on one short-lived connection, so that TypeORM is
 * given the server's own type. Resolves undefined when the server cannot be reached (the caller
 * falls back on the URL's scheme, and says so).
 */
export async function probeServerFlavour(url: string, connectTimeoutMs: number): Promise<ServerFlavour | undefined> {
  const connection = await createConnection({ uri: toMysql2Uri(url), connectTimeout: connectTimeoutMs }).catch(
    () => undefined,
  );
  if (!connection) return undefined;
  try {
    const [rows] = await connection.query({ sql: 'SELECT VERSION() AS version', timeout: connectTimeoutMs });
    return flavourOfVersion((rows as Array<{ version: string }>)[0].version);
  } catch {
    return undefined;
  } finally {
    connection.destroy();
  }
}

/** mysql2 reads only mysql:// URLs; the rest of the URL means the same under either scheme. */
function toMysql2Uri(url: string): string {
  return url.replace(/^mariadb:/, 'mysql:');
}
