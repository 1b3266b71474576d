import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { loadDatabaseConfig } from '../../src/platform/config/database.config';
import { buildExampleDataSourceOptions, EXAMPLE_ENTITIES } from '../../src/events/after-payment/example-schema';
import { ENTITIES } from '../../src/app.module';
import { serverDataSourceOptions } from '../../src/platform/database/data-source-options';
import { applyMigrationsLocked, migrationLockName } from '../../src/platform/database/migration-runner';
import { Medium, startMedium } from '../support/medium';
import { assertTestDatabase, databaseUrl, TEST_DATABASE_PREFIX, withAdminConnection } from '../support/test-database';
import { uniqueId } from '../support/test-app';

const MIGRATION_FILES = readdirSync(join(__dirname, '../../src/platform/database/migrations')).filter((f) =>
  f.endsWith('.ts'),
);

/**
 * Migrations are the schema's only source; entities must describe exactly what they build. On a
 * fresh database of this suite's own, migrated by the modules' start (MigrationRunner) as the
 * app's start migrates it. The app's
 * opt-in to the example handlers' tables (EXAMPLE_HANDLERS) is in test/schema.e2e-spec.ts.
 */
describe('schema migrations', () => {
  const name = assertTestDatabase(uniqueId(`${TEST_DATABASE_PREFIX}schema_`).toLowerCase());
  const url = databaseUrl(name);
  const runWith =
    <T>(fn: (ds: DataSource) => Promise<T>, on = url) =>
    async () => {
      const dataSource = await new DataSource(
        await serverDataSourceOptions({ ...loadDatabaseConfig(), url: on }, ENTITIES),
      ).initialize();
      try {
        return await fn(dataSource);
      } finally {
        await dataSource.destroy();
      }
    };

  let medium: Medium;

  beforeAll(async () => {
    await withAdminConnection((conn) => conn.query(`CREATE DATABASE \`${name}\``));
    medium = await startMedium({}, { imports: [], fake: false, replicas: 0 });
  });
  afterAll(async () => {
    await medium?.close();
    await withAdminConnection((conn) => conn.query(`DROP DATABASE IF EXISTS \`${name}\``));
  });

  it('should apply the migrations once when several replicas start together', async () => {
    const started = await Promise.allSettled([1, 2, 3].map(() => medium.another(() => ({ DATABASE_URL: url }), [])));
    for (const s of started) if (s.status === 'fulfilled') await s.value.close();
    expect(started.map((s) => (s.status === 'rejected' ? String(s.reason) : 'started'))).toEqual(
      Array(3).fill('started'),
    );
    const applied = await runWith((ds) =>
      ds.query<Array<{ n: string }>>('SELECT COUNT(*) AS n FROM schema_migrations'),
    )();
    expect(Number(applied[0].n)).toBe(MIGRATION_FILES.length);
  });

  it('should compose the data source of replicas in one process once, without a duplicate-name warning', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      const replicas = await Promise.all([1, 2].map(() => medium.another(() => ({ DATABASE_URL: url }), [])));
      for (const replica of replicas) await replica.close();
      expect(warn.mock.calls.map(([message]) => String(message)).filter((m) => /already registered/.test(m))).toEqual(
        [],
      );
    } finally {
      warn.mockRestore();
    }
  });

  it("should migrate another database on the same server while this one's migration lock is held", async () => {
    const other = assertTestDatabase(uniqueId(`${TEST_DATABASE_PREFIX}schema_other_`).toLowerCase());
    await withAdminConnection(async (conn) => {
      await conn.query(`CREATE DATABASE \`${other}\``);
      try {
        const [[{ held }]] = (await conn.query('SELECT GET_LOCK(?, 0) AS held', [migrationLockName(name)])) as [
          Array<{ held: number }>,
          unknown,
        ];
        expect(held).toBe(1);
        const applied = await runWith((ds) => applyMigrationsLocked(ds, 2), databaseUrl(other))();
        expect(applied).toHaveLength(MIGRATION_FILES.length);
        // This database's migrators still wait for its lock, and give up at the timeout.
        await expect(runWith((ds) => applyMigrationsLocked(ds, 1))()).rejects.toThrow(
          'could not take the migration lock within 1s',
        );
      } finally {
        await conn.query(`DROP DATABASE IF EXISTS \`${other}\``);
      }
    });
  });

  it('should leave no difference between the entities and the migrated schema', async () => {
    const pending = await runWith(async (ds) => {
      await ds.runMigrations();
      return (await ds.driver.createSchemaBuilder().log()).upQueries.map((q) => q.query);
    })();
    expect(pending).toEqual([]);
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
});
