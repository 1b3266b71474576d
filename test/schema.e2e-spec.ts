import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { loadDatabaseConfig } from '../src/config/database.config';
import { buildDataSourceOptions } from '../src/database/data-source-options';
import { assertTestDatabase, databaseUrl, TEST_DATABASE_PREFIX, withAdminConnection } from './support/test-database';
import { RunningApp, startApp, uniqueId } from './support/test-app';

const MIGRATION_FILES = readdirSync(join(__dirname, '../src/database/migrations')).filter((f) => f.endsWith('.ts'));

/** Migrations are the schema's only source; entities must describe exactly what they build. */
describe('schema migrations', () => {
  const name = assertTestDatabase(uniqueId(`${TEST_DATABASE_PREFIX}schema_`).toLowerCase());
  const url = databaseUrl(name);
  const runWith =
    <T>(fn: (ds: DataSource) => Promise<T>) =>
    async () => {
      const dataSource = await new DataSource(buildDataSourceOptions({ ...loadDatabaseConfig(), url })).initialize();
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
    const applied = await runWith((ds) => ds.query('SELECT COUNT(*) AS n FROM schema_migrations'))();
    expect(Number(applied[0].n)).toBe(MIGRATION_FILES.length);
  });

  it('should leave no difference between the entities and the migrated schema', async () => {
    const pending = await runWith(async (ds) => {
      await ds.runMigrations();
      return (await ds.driver.createSchemaBuilder().log()).upQueries.map((q) => q.query);
    })();
    expect(pending).toEqual([]);
  });
});
