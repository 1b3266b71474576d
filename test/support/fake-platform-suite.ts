import { Pool } from 'mysql2/promise';
import { FakePlatform, FakePlatformOptions } from '../../tools/simulator/fake-platform';
import {
  createTestPlatforms,
  fakePlatformOptions,
  RunningApp,
  startApp,
  TestClient,
  testDatabasePool,
  TestPlatforms,
} from './test-app';

/**
 * The set-up of a suite whose apps call the platforms' APIs: the test keys, the fake platform
 * serving them, the run's database pool, and the apps (replicas, or apps configured apart) started
 * on them, all closed together.
 */
export interface FakePlatformSuite {
  platforms: TestPlatforms;
  fake: FakePlatform;
  pool: Pool;
  /** The env every app here starts from: the test keys and the fake platform's API addresses. */
  env: Record<string, string>;
  /** Starts an app on `env` (the suite's, unless given whole), closed with the suite. */
  startApp(env?: Record<string, string>): Promise<RunningApp>;
  clientOf(app: RunningApp): TestClient;
  close(): Promise<void>;
}

export async function startFakePlatformSuite(options: Partial<FakePlatformOptions> = {}): Promise<FakePlatformSuite> {
  const platforms = await createTestPlatforms();
  const fake = await FakePlatform.start({ ...fakePlatformOptions(platforms), ...options });
  const pool = testDatabasePool();
  const apps: RunningApp[] = [];
  const env = { ...platforms.env, ...fake.apiEnv };
  return {
    platforms,
    fake,
    pool,
    env,
    startApp: async (appEnv = env) => {
      const app = await startApp(appEnv);
      apps.push(app);
      return app;
    },
    clientOf: (app) => new TestClient(app.url, platforms),
    close: async () => {
      for (const app of apps) await app.close();
      await fake.close();
      await pool.end();
    },
  };
}
