import { failedStartup } from './support/app-process';
import { FakePlatform } from '../tools/simulator/fake-platform';
import {
  accountsDocument,
  alipayAccountOf,
  createAlipayAccount,
  createWechatpayAccount,
  fakeAccountOptions,
  TestAccounts,
  wechatpayAccountOf,
  withoutAccountVariables,
  writeAccountsFile,
} from './support/merchant-accounts';
import { createTestPlatforms, TestPlatforms } from './support/test-app';

/**
 * The merchant-account configurations (PAYMENT_ACCOUNTS_FILE, the env shorthand) the service
 * refuses to start with: the process ends, naming what is wrong. What several accounts per channel
 * do with payments, refunds and closes is in test/medium/merchant-accounts.medium-spec.ts.
 *
 * Each refused start-up runs in a child process of its own (Nest ends a process whose modules fail
 * to build), all at once, since most of their time is compiling the app.
 */
let platforms: TestPlatforms;
let accounts: TestAccounts;
let fake: FakePlatform;
let baseEnv: Record<string, string>;
let startups: Record<string, Promise<{ stderr: string; exit: string }>>;

type Spoil = (document: ReturnType<typeof accountsDocument>) => void;

function withFile(spoil: Spoil, extra: Record<string, string> = {}) {
  const document = structuredClone(accountsDocument(accounts));
  spoil(document);
  return failedStartup({
    ...withoutAccountVariables(platforms.env),
    ...baseEnv,
    ...extra,
    PAYMENT_ACCOUNTS_FILE: writeAccountsFile(document),
  });
}

beforeAll(async () => {
  platforms = await createTestPlatforms();
  accounts = {
    wechatpay: [
      wechatpayAccountOf(platforms, ['wx2a0000000000a002']),
      createWechatpayAccount('1900009292', ['wxb00000000000b001']),
    ],
    alipay: [alipayAccountOf(platforms), createAlipayAccount('2021000117600002', '2088531891660002')],
  };
  fake = await FakePlatform.start({ ...fakeAccountOptions(accounts), hangMs: 1500 });
  baseEnv = {
    ...fake.apiEnv,
    PAYMENT_QUERY_SCHEDULE_SECONDS: '3600',
    REFUND_REQUEST_TIMEOUT_MS: '1000',
    REFUND_RETRY_BASE_DELAY_MS: '1000',
    REFUND_POLL_INTERVAL_MS: '100',
  };
  startups = {
    shortKey: withFile((d) => ((d.wechatpay[1] as { apiV3Key: string }).apiV3Key = 'x'.repeat(31))),
    besideFile: withFile(() => undefined, { WECHATPAY_MCHID: platforms.wechatpay.mchid }),
    commaInMchid: failedStartup({ ...platforms.env, ...baseEnv, WECHATPAY_MCHID: '1900009191,1900009292' }),
  };
  // Each test awaits its own; none may go unhandled meanwhile.
  for (const startup of Object.values(startups)) startup.catch(() => undefined);
});

afterAll(() => fake?.close());

it.each([
  ['shortKey', 'an accounts file with a 31-character APIv3 key', /PAYMENT_ACCOUNTS_FILE.*wechatpay\[1\]\.apiV3Key/],
  [
    'besideFile',
    'an accounts file and WECHATPAY_MCHID beside it',
    /WECHATPAY_MCHID.*PAYMENT_ACCOUNTS_FILE|PAYMENT_ACCOUNTS_FILE.*WECHATPAY_MCHID/,
  ],
  ['commaInMchid', 'a comma-separated list in WECHATPAY_MCHID', /WECHATPAY_MCHID/],
])('%s: should refuse to start with %s, naming what is wrong', async (name, _, message) => {
  const failed = await startups[name];

  expect(failed.exit).not.toBe('0');
  expect(failed.stderr).toMatch(message);
});
