import { Pool } from 'mysql2/promise';
import { FakePlatform } from '../../tools/simulator/fake-platform';
import { randomAlphanumeric } from '../../tools/simulator/platform-signers';
import { startFakePlatformSuite } from './fake-platform-suite';
import { RunningApp, TestClient, TestPlatforms } from './test-app';

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
  const suite = await startFakePlatformSuite();
  const carol = randomAlphanumeric(40);
  const appEnv = {
    ...suite.env,
    ADMIN_TOKENS: `${suite.platforms.env.ADMIN_TOKENS},carol:${carol}:admin`,
    REFUND_APPROVAL_THRESHOLD: String(threshold),
    ...env,
  };
  const replicas = [await suite.startApp(appEnv), await suite.startApp(appEnv)];
  return {
    platforms: suite.platforms,
    carol,
    fake: suite.fake,
    replicas,
    clients: replicas.map((r) => suite.clientOf(r)),
    pool: suite.pool,
    close: () => suite.close(),
  };
}
