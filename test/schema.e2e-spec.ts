import { DataSource } from 'typeorm';
import { loadDatabaseConfig } from '../src/platform/config/database.config';
import { ENTITIES } from '../src/app.module';
import { serverDataSourceOptions } from '../src/platform/database/data-source-options';
import { assertTestDatabase, databaseUrl, TEST_DATABASE_PREFIX, withAdminConnection } from './support/test-database';
import { startApp, uniqueId } from './support/test-app';

const EXAMPLE_TABLES = ['coupon_issue', 'points_grant', 'shipment_request'];

/**
 * The app's start opts in to the example handlers' tables (EXAMPLE_HANDLERS=true) or leaves them
 * out. The migrations themselves, their lock and the entities' drift are
 * test/medium/schema.medium-spec.ts.
 */
describe('schema migrations at the start', () => {
  const name = assertTestDatabase(uniqueId(`${TEST_DATABASE_PREFIX}schema_`).toLowerCase());
  const url = databaseUrl(name);

  beforeAll(() => withAdminConnection((conn) => conn.query(`CREATE DATABASE \`${name}\``)));
  afterAll(() => withAdminConnection((conn) => conn.query(`DROP DATABASE IF EXISTS \`${name}\``)));

  async function query<T>(sql: string, params: unknown[] = []): Promise<T> {
    const ds = await new DataSource(
      await serverDataSourceOptions({ ...loadDatabaseConfig(), url }, ENTITIES),
    ).initialize();
    try {
      return await ds.query<T>(sql, params);
    } finally {
      await ds.destroy();
    }
  }

  async function withApp(env: Record<string, string>): Promise<void> {
    const saved = process.env.DATABASE_URL;
    process.env.DATABASE_URL = url;
    try {
      const app = await startApp(env);
      await app.close();
    } finally {
      process.env.DATABASE_URL = saved;
    }
  }

  it("should leave the example handlers' tables out of the schema unless EXAMPLE_HANDLERS=true", async () => {
    const exampleTables = async () =>
      (
        await query<Array<{ name: string }>>(
          'SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME IN (?)',
          [name, EXAMPLE_TABLES],
        )
      )
        .map((row) => row.name)
        .sort();
    await withApp({});
    expect(await query<Array<{ n: string }>>('SELECT COUNT(*) AS n FROM schema_migrations')).not.toEqual([{ n: '0' }]);
    expect(await exampleTables()).toEqual([]);

    await withApp({ EXAMPLE_HANDLERS: 'true' });

    expect(await exampleTables()).toEqual(EXAMPLE_TABLES);
    expect(await query('SELECT name FROM example_schema_migrations')).toEqual([
      { name: 'ExampleHandlerTables1796750000000' },
    ]);
  });
});
