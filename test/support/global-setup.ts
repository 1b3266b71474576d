import { randomBytes } from 'node:crypto';
import { assertTestDatabase, databaseUrl, TEST_DATABASE_PREFIX, withAdminConnection } from './test-database';

/** Each test run makes its own database; global-teardown drops it. Suites apply the migrations by starting the app. */
export default async function globalSetup(): Promise<void> {
  const name = assertTestDatabase(
    `${TEST_DATABASE_PREFIX}${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`,
  );
  const version = await withAdminConnection(async (conn) => {
    await conn.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    const [rows] = await conn.query('SELECT VERSION() AS version');
    return String((rows as Array<{ version: string }>)[0].version);
  });
  process.env.TEST_DATABASE_SERVER = /mariadb/i.test(version) ? 'mariadb' : 'mysql';
  process.env.TEST_DATABASE_NAME = name;
  process.env.DATABASE_URL = databaseUrl(name);
}
