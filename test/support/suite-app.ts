import { Pool } from 'mysql2/promise';
import { createTestPlatforms, RunningApp, startApp, TestClient, testDatabasePool, TestPlatforms } from './test-app';

/** A suite's one app, its platforms' keys, a client of it and a pool on the test database. */
export interface SuiteApp {
  readonly platforms: TestPlatforms;
  readonly running: RunningApp;
  readonly client: TestClient;
  readonly pool: Pool;
}

/**
 * Starts the app before the suite's (or the describe block's) tests and closes it after them:
 * the setup that suites with a single app each wrote out. `env` builds the app's configuration
 * from the platforms' keys (all of them, unless told).
 */
export function suiteApp(env: (platforms: TestPlatforms) => Record<string, string> = (p) => p.env): SuiteApp {
  const suite = {} as { platforms: TestPlatforms; running: RunningApp; client: TestClient; pool: Pool };
  beforeAll(async () => {
    suite.platforms = await createTestPlatforms();
    suite.running = await startApp(env(suite.platforms));
    suite.client = new TestClient(suite.running.url, suite.platforms);
    suite.pool = testDatabasePool();
  });
  afterAll(async () => {
    await suite.running?.close();
    await suite.pool?.end();
  });
  return suite;
}
