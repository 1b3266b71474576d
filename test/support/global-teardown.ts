import { assertTestDatabase, withAdminConnection } from './test-database';

export default async function globalTeardown(): Promise<void> {
  const name = assertTestDatabase(process.env.TEST_DATABASE_NAME);
  await withAdminConnection((conn) => conn.query(`DROP DATABASE IF EXISTS \`${name}\``));
}
