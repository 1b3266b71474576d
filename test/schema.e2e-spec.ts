import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { loadDatabaseConfig } from '../src/platform/config/database.config';
import { buildExampleDataSourceOptions, EXAMPLE_ENTITIES } from '../src/events/after-payment/example-schema';
import { ENTITIES } from '../src/app.module';
import { serverDataSourceOptions } from '../src/platform/database/data-source-options';
import { assertTestDatabase, databaseUrl, TEST_DATABASE_PREFIX, withAdminConnection } from './support/test-database';
import { RunningApp, startApp, uniqueId } from './support/test-app';

const MIGRATION_FILES = readdirSync(join(__dirname, '../src/platform/database/migrations')).filter((f) =>
  f.endsWith('.ts'),
);
const EXAMPLE_TABLES = ['coupon_issue', 'points_grant', 'shipment_request'];

/** Migrations are the schema's only source; entities must describe exactly what they build. */
describe('schema migrations', () => {
  const name = assertTestDatabase(uniqueId(`${TEST_DATABASE_PREFIX}schema_`).toLowerCase());
  const url = databaseUrl(name);
  const runWith =
    <T>(fn: (ds: DataSource) => Promise<T>) =>
    async () => {
      const dataSource = await new DataSource(
        await serverDataSourceOptions({ ...loadDatabaseConfig(), url }, ENTITIES),
      ).initialize();
      try {
        return await fn(dataSource);
      } finally {
        await dataSource.destroy();
      }
    };

  beforeAll(() => withAdminConnection((conn) => conn.query(`CREATE DATABASE \`${name}\``)));
  afterAll(() => withAdminConnection((conn) => conn.query(`DROP DATABASE IF EXISTS \`${name}\``)));

  it('should apply the migrations once when several replicas start together', async () => {
    const saved = process.env.DATABASE_URL;
    process.env.DATABASE_URL = url;
    let replicas: RunningApp[] = [];
    try {
      replicas = await Promise.all([startApp({}), startApp({}), startApp({})]);
    } finally {
      process.env.DATABASE_URL = saved;
      await Promise.all(replicas.map((r) => r.close()));
    }
    const applied = await runWith((ds) =>
      ds.query<Array<{ n: string }>>('SELECT COUNT(*) AS n FROM schema_migrations'),
    )();
    expect(Number(applied[0].n)).toBe(MIGRATION_FILES.length);
  });

  it('should leave no difference between the entities and the migrated schema', async () => {
    const pending = await runWith(async (ds) => {
      await ds.runMigrations();
      return (await ds.driver.createSchemaBuilder().log()).upQueries.map((q) => q.query);
    })();
    expect(pending).toEqual([]);
  });

  it("should leave the example handlers' tables out of the schema unless EXAMPLE_HANDLERS=true", async () => {
    const exampleTables = runWith(async (ds) => {
      const rows: Array<{ name: string }> = await ds.query(
        'SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME IN (?)',
        [name, EXAMPLE_TABLES],
      );
      return rows.map((row) => row.name).sort();
    });
    expect(await exampleTables()).toEqual([]);

    await withApp({ EXAMPLE_HANDLERS: 'true' });

    expect(await exampleTables()).toEqual(EXAMPLE_TABLES);
    const applied = await runWith((ds) =>
      ds.query<Array<{ name: string }>>('SELECT name FROM example_schema_migrations'),
    )();
    expect(applied).toEqual([{ name: 'ExampleHandlerTables1796750000000' }]);
  });

  it('should leave no difference between the example entities and their migrated tables', async () => {
    const examples = await new DataSource({
      ...(await buildExampleDataSourceOptions({ ...loadDatabaseConfig(), url })),
      entities: [...ENTITIES, ...EXAMPLE_ENTITIES],
    }).initialize();
    try {
      await examples.runMigrations();
      const pending = (await examples.driver.createSchemaBuilder().log()).upQueries.map((q) => q.query);
      expect(pending).toEqual([]);
    } finally {
      await examples.destroy();
    }
  });

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
});
