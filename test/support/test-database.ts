import { randomBytes } from 'node:crypto';
import { createConnection } from 'mysql2/promise';

/** Every test database's name starts with this; nothing else is ever created or dropped by the tests. */
export const TEST_DATABASE_PREFIX = 'pcs_test_';

/** The server the tests may create databases on: root on the local MariaDB unless .ci/run says otherwise. */
export const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'mysql://root@127.0.0.1:3306';

/** The app's URL for a test database; mariadb:// when the server is MariaDB (see DatabaseConfig.url). */
export function databaseUrl(name: string): string {
  const scheme = process.env.TEST_DATABASE_SERVER === 'mariadb' ? 'mariadb:' : 'mysql:';
  return `${ADMIN_URL.replace(/\/$/, '').replace(/^\w+:/, scheme)}/${name}`;
}

export function assertTestDatabase(name: string | undefined): string {
  if (!name || !name.startsWith(TEST_DATABASE_PREFIX) || !/^\w+$/.test(name)) {
    throw new Error(`refusing to touch database "${name}": test databases must be named ${TEST_DATABASE_PREFIX}*`);
  }
  return name;
}

export async function withAdminConnection<T>(
  fn: (conn: Awaited<ReturnType<typeof createConnection>>) => Promise<T>,
): Promise<T> {
  const conn = await createConnection({ uri: ADMIN_URL });
  try {
    return await fn(conn);
  } finally {
    await conn.end();
  }
}

/**
 * Moves the calling suite (this test file: Jest gives each its own process.env) onto a database of
 * its own, for a suite whose background workers must not work through other suites' rows first
 * (the refund worker takes every due refund in the database). Returns the function that drops it.
 */
export async function useOwnDatabase(): Promise<() => Promise<void>> {
  const name = assertTestDatabase(
    `${assertTestDatabase(process.env.TEST_DATABASE_NAME)}_${randomBytes(3).toString('hex')}`,
  );
  await withAdminConnection((conn) =>
    conn.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`),
  );
  process.env.TEST_DATABASE_NAME = name;
  process.env.DATABASE_URL = databaseUrl(name);
  return () => withAdminConnection((conn) => conn.query(`DROP DATABASE IF EXISTS \`${name}\``)).then(() => undefined);
}
