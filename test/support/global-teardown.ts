import { assertTestDatabase, withAdminConnection } from './test-database';

/** Drops the run's database and every database made from its name: the workers' and the suites' own. */
export default async function globalTeardown(): Promise<void> {
  const run = assertTestDatabase(process.env.TEST_DATABASE_NAME);
  await withAdminConnection(async (conn) => {
    const [rows] = await conn.query(
      'SELECT schema_name AS name FROM information_schema.schemata WHERE schema_name = ? OR schema_name LIKE ?',
      [run, `${run.replace(/_/g, '\\_')}\\_%`],
    );
    for (const { name } of rows as Array<{ name: string }>) {
      await conn.query(`DROP DATABASE IF EXISTS \`${assertTestDatabase(name)}\``);
    }
  });
}
