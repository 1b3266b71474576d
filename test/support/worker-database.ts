/**
 * One database per jest worker, so that suites can run in parallel: suites in one worker run one
 * at a time on one database, as the whole run once did, and no suite ever sees another worker's
 * rows (the background workers under test take every due row of their database). The run's name
 * comes from global-setup; each worker's database is `<run>_w<worker id>`, created by the first
 * suite that worker runs and migrated by the first app or module it starts. global-teardown drops
 * them all with the run's own.
 */
import { assertTestDatabase, databaseUrl, withAdminConnection } from './test-database';

const runDatabase = assertTestDatabase(process.env.TEST_DATABASE_RUN ?? process.env.TEST_DATABASE_NAME);
const workerDatabase = assertTestDatabase(`${runDatabase}_w${process.env.JEST_WORKER_ID ?? '1'}`);

process.env.TEST_DATABASE_RUN = runDatabase;
process.env.TEST_DATABASE_NAME = workerDatabase;
process.env.DATABASE_URL = databaseUrl(workerDatabase);

beforeAll(() =>
  withAdminConnection((conn) =>
    conn.query(`CREATE DATABASE IF NOT EXISTS \`${workerDatabase}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`),
  ),
);
