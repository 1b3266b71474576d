import { Pool } from 'mysql2/promise';
import { FakePlatform } from '../../tools/simulator/fake-platform';
import { randomAlphanumeric } from '../../tools/simulator/platform-signers';
import {
  createTestPlatforms,
  fakePlatformOptions,
  RunningApp,
  startApp,
  TestClient,
  testDatabasePool,
  TestPlatforms,
} from './test-app';

/** Two replicas behind one database, with a third admin (carol) and the fake platform's APIs: a four-eyes set-up. */
export interface FourEyesReplicas {
  platforms: TestPlatforms;
  /** Carol's admin token: a second admin besides the requester. */
  carol: string;
  fake: FakePlatform;
  replicas: RunningApp[];
  clients: TestClient[];
  pool: Pool;
  close(): Promise<void>;
}

export async function startFourEyesReplicas(threshold: number, env: Record<string, string>): Promise<FourEyesReplicas> {
  const platforms = await createTestPlatforms();
  const carol = randomAlphanumeric(40);
  const fake = await FakePlatform.start(fakePlatformOptions(platforms));
  const appEnv = {
    ...platforms.env,
    ADMIN_TOKENS: `${platforms.env.ADMIN_TOKENS},carol:${carol}:admin`,
    ...fake.apiEnv,
    REFUND_APPROVAL_THRESHOLD: String(threshold),
    ...env,
  };
  const replicas = [await startApp(appEnv), await startApp(appEnv)];
  const pool = testDatabasePool();
  return {
    platforms,
    carol,
    fake,
    replicas,
    clients: replicas.map((r) => new TestClient(r.url, platforms)),
    pool,
    close: async () => {
      for (const replica of replicas) await replica.close();
      await fake.close();
      await pool.end();
    },
  };
}
