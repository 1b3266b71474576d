import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  generateUnionpayKeySet,
  UnionpayKeySet,
  writeUnionpayKeySet,
} from '../../tools/simulator/unionpay/unionpay-keys';
import { createTestPlatforms, RunningApp, startApp, TestPlatforms } from './test-app';

export interface AllDialectsApp {
  platforms: TestPlatforms;
  unionpayKeys: UnionpayKeySet;
  running: RunningApp;
}

/** The app with every dialect enabled: WeChat Pay APIv3 and APIv2 (under `apiV2Key`), Alipay, and UnionPay for `merId`. */
export async function startAllDialectsApp(
  merId: string,
  apiV2Key: string,
  keysFolderPrefix: string,
): Promise<AllDialectsApp> {
  const platforms = await createTestPlatforms();
  const unionpayKeys = generateUnionpayKeySet();
  const unionpayEnv = writeUnionpayKeySet(unionpayKeys, mkdtempSync(join(tmpdir(), keysFolderPrefix)), merId);
  const running = await startApp({
    ...platforms.env,
    ...unionpayEnv,
    UNIONPAY_BACK_URL: 'https://pay.example.com/notify/unionpay',
    UNIONPAY_VALIDATE_CN: 'true',
    WECHATPAY_APIV2_KEY: apiV2Key,
  });
  return { platforms, unionpayKeys, running };
}
