import { Pool, RowDataPacket } from 'mysql2/promise';
import { eventually } from './support/eventually';
import { failedStartup } from './support/app-process';
import { FakeChannel, FakePlatform } from '../tools/simulator/fake-platform';
import {
  accountsDocument,
  AlipayTestAccount,
  alipayAccountOf,
  createAlipayAccount,
  createWechatpayAccount,
  fakeAccountOptions,
  TestAccounts,
  WechatpayTestAccount,
  wechatpayAccountOf,
  withoutAccountVariables,
  writeAccountsFile,
} from './support/merchant-accounts';
import { OrderEffects } from './support/order-effects';
import {
  alipayDelivery,
  alipayTradeParams,
  wechatpayDelivery,
  wechatpayTransaction,
  yuan,
} from '../tools/simulator/platform-signers';
import {
  createTestPlatforms,
  HttpAnswer,
  RunningApp,
  startApp,
  TestClient,
  testDatabasePool,
  TestPlatforms,
  uniqueId,
} from './support/test-app';

/**
 * Several merchant accounts per channel (PAYMENT_ACCOUNTS_FILE): each payment is verified with the keys of the
 * account it names and remembers that account, and its refund is signed with that account's merchant key. The
 * fake platform knows the same accounts and checks each refund request against the account it names.
 */
let platforms: TestPlatforms;
let accounts: TestAccounts;
let wechatA: WechatpayTestAccount;
let wechatB: WechatpayTestAccount;
let alipayA: AlipayTestAccount;
let alipayB: AlipayTestAccount;
let fake: FakePlatform;
let app: RunningApp;
let client: TestClient;
let pool: Pool;
let effects: OrderEffects;
let baseEnv: Record<string, string>;

const SECOND_APPID_OF_A = 'wx2a0000000000a002';

beforeAll(async () => {
  platforms = await createTestPlatforms();
  wechatA = wechatpayAccountOf(platforms, [SECOND_APPID_OF_A]);
  wechatB = createWechatpayAccount('1900009292', ['wxb00000000000b001']);
  alipayA = alipayAccountOf(platforms);
  alipayB = createAlipayAccount('2021000117600002', '2088531891660002');
  accounts = { wechatpay: [wechatA, wechatB], alipay: [alipayA, alipayB] };
  fake = await FakePlatform.start({ ...fakeAccountOptions(accounts), hangMs: 1500 });
  baseEnv = {
    ...fake.apiEnv,
    PAYMENT_QUERY_SCHEDULE_SECONDS: '3600',
    REFUND_REQUEST_TIMEOUT_MS: '1000',
    REFUND_RETRY_BASE_DELAY_MS: '1000',
    REFUND_POLL_INTERVAL_MS: '100',
  };
  app = await startApp({
    ...withoutAccountVariables(platforms.env),
    ...baseEnv,
    PAYMENT_ACCOUNTS_FILE: writeAccountsFile(accountsDocument(accounts)),
  });
  client = new TestClient(app.url, platforms);
  pool = testDatabasePool();
  effects = new OrderEffects(pool);
});

afterAll(async () => {
  await app?.close();
  await fake?.close();
  await pool?.end();
});

interface Payment {
  orderNo: string;
  transactionId: string;
  amount: number;
}

/** A TRANSACTION.SUCCESS signed and encrypted with `account`'s keys, naming whichever mchid and appid it is told. */
function wechatpayNotification(
  account: WechatpayTestAccount,
  payment: Payment,
  names: { mchid?: string; appid?: string } = {},
) {
  return wechatpayDelivery(account.signer, {
    resource: wechatpayTransaction({
      mchid: names.mchid ?? account.mchid,
      appid: names.appid ?? account.appids[0],
      outTradeNo: payment.orderNo,
      transactionId: payment.transactionId,
      total: payment.amount,
    }),
  });
}

/** A trade_status_sync signed with `account`'s Alipay key, naming whichever app_id it is told. */
function alipayNotification(account: AlipayTestAccount, payment: Payment, appId = account.appId): string {
  return alipayDelivery(
    account.alipayKey.privateKey,
    alipayTradeParams({
      appId,
      sellerId: account.sellerId,
      outTradeNo: payment.orderNo,
      tradeNo: payment.transactionId,
      totalAmount: yuan(payment.amount),
    }),
  );
}

async function newOrder(amount: number, registration: { channel?: FakeChannel; merchantId?: string } = {}) {
  const payment = { orderNo: uniqueId('M'), transactionId: uniqueId('T'), amount };
  expect((await client.registerOrder({ orderNo: payment.orderNo, amount, ...registration })).status).toBe(201);
  return payment;
}

async function refundStatus(refundNo: string): Promise<unknown> {
  const [rows] = await pool.query<RowDataPacket[]>('SELECT status FROM refund WHERE refund_no = ?', [refundNo]);
  return rows[0]?.status;
}

interface AccountCase {
  channel: FakeChannel;
  merchantId: () => string;
  /** Registers with the channel and account when true; without either when false. */
  registerWithAccount: boolean;
  pay: (payment: Payment) => Promise<HttpAnswer>;
}

const ACCOUNT_CASES: Array<[string, AccountCase]> = [
  [
    'WeChat Pay account A, paying through its second appid',
    {
      channel: 'WECHATPAY',
      merchantId: () => wechatA.mchid,
      registerWithAccount: false,
      pay: (p) => client.postWechatpay(wechatpayNotification(wechatA, p, { appid: SECOND_APPID_OF_A })),
    },
  ],
  [
    'WeChat Pay account B',
    {
      channel: 'WECHATPAY',
      merchantId: () => wechatB.mchid,
      registerWithAccount: true,
      pay: (p) => client.postWechatpay(wechatpayNotification(wechatB, p)),
    },
  ],
  [
    'Alipay app A',
    {
      channel: 'ALIPAY',
      merchantId: () => alipayA.appId,
      registerWithAccount: false,
      pay: (p) => client.postAlipay(alipayNotification(alipayA, p)),
    },
  ],
  [
    'Alipay app B',
    {
      channel: 'ALIPAY',
      merchantId: () => alipayB.appId,
      registerWithAccount: true,
      pay: (p) => client.postAlipay(alipayNotification(alipayB, p)),
    },
  ],
];

describe('several accounts per channel', () => {
  it.each(ACCOUNT_CASES)(
    'should take a payment of %s with its own keys, and refund it signed by the same account',
    async (_, account) => {
      const registration = account.registerWithAccount
        ? { channel: account.channel, merchantId: account.merchantId() }
        : {};
      const payment = await newOrder(6600, registration);

      const paid = await account.pay(payment);

      expect(paid.status).toBe(account.channel === 'WECHATPAY' ? 204 : 200);
      expect(await effects.status(payment.orderNo)).toBe('PAID');
      const payments = await effects.payments(payment.orderNo);
      expect(payments).toHaveLength(1);
      expect(payments[0]).toMatchObject({
        channel: account.channel,
        transaction_id: payment.transactionId,
        merchant_id: account.merchantId(),
      });
      const view = await client.api('GET', `/payment-orders/${payment.orderNo}`);
      expect(view.json()).toMatchObject({ status: 'PAID', channel: account.channel, merchantId: account.merchantId() });

      const refund = await client.admin('POST', '/admin/refunds/emergency', platforms.admins.admin, {
        orderNo: payment.orderNo,
        transactionId: payment.transactionId,
        reason: 'customer complaint',
      });

      expect(refund.status).toBe(202);
      const { refundNo } = refund.json<{ refundNo: string }>();
      await eventually(
        `refund ${refundNo} to succeed`,
        async () => (await refundStatus(refundNo)) === 'SUCCEEDED',
        15_000,
      );
      expect(fake.calls.filter((c) => c.refundNo === refundNo)).toEqual([
        expect.objectContaining({
          channel: account.channel,
          merchantId: account.merchantId(),
          transactionId: payment.transactionId,
          amount: 6600,
        }),
      ]);
      expect(await effects.status(payment.orderNo)).toBe('REFUNDED');
    },
  );

  it('should refuse with 401 a WeChat notification signed with account B but claiming account A, and write nothing', async () => {
    const payment = await newOrder(4100);
    const before = await effects.everythingAbout(payment.orderNo);

    const claimingA = await client.postWechatpay(
      wechatpayNotification(wechatB, payment, { mchid: wechatA.mchid, appid: wechatA.appids[0] }),
    );
    const claimingAsAppid = await client.postWechatpay(
      wechatpayNotification(wechatB, payment, { appid: wechatA.appids[0] }),
    );

    expect(claimingA.status).toBe(401);
    expect(claimingAsAppid.status).toBe(401);
    expect(await effects.everythingAbout(payment.orderNo)).toEqual(before);
    expect(await effects.status(payment.orderNo)).toBe('WAIT_PAY');

    // The genuine notification of account A still pays.
    expect((await client.postWechatpay(wechatpayNotification(wechatA, payment))).status).toBe(204);
    expect(await effects.status(payment.orderNo)).toBe('PAID');
  });

  it("should refuse with 401 an Alipay notification signed with app B's key but naming app A, or an unknown app", async () => {
    const payment = await newOrder(4200);
    const before = await effects.everythingAbout(payment.orderNo);

    const namingA = await client.postAlipay(alipayNotification(alipayB, payment, alipayA.appId));
    const unknownApp = await client.postAlipay(alipayNotification(alipayB, payment, '2021000117609999'));

    expect(namingA.status).toBe(401);
    expect(unknownApp.status).toBe(401);
    expect(await effects.everythingAbout(payment.orderNo)).toEqual(before);
    expect(await effects.status(payment.orderNo)).toBe('WAIT_PAY');
  });
});

describe('a payment at another account than the order was registered with', () => {
  it.each([
    [
      'WeChat Pay account A, for an order of account B',
      () => ({ channel: 'WECHATPAY' as const, merchantId: wechatB.mchid }),
      (p: Payment) => client.postWechatpay(wechatpayNotification(wechatA, p)),
    ],
    [
      'Alipay app B, for an order of app A',
      () => ({ channel: 'ALIPAY' as const, merchantId: alipayA.appId }),
      (p: Payment) => client.postAlipay(alipayNotification(alipayB, p)),
    ],
    [
      'Alipay app A, for an order of WeChat Pay account A',
      () => ({ channel: 'WECHATPAY' as const, merchantId: wechatA.mchid }),
      (p: Payment) => client.postAlipay(alipayNotification(alipayA, p)),
    ],
  ])(
    'should be a MERCHANT_MISMATCH anomaly, acked, with the order and its account unchanged: %s',
    async (_name, registration, pay) => {
      const payment = await newOrder(5100, registration());

      const answer = await pay(payment);

      expect(answer.status).toBeLessThan(300);
      const [orders] = await pool.query<RowDataPacket[]>(
        'SELECT status, channel, merchant_id, transaction_id FROM payment_order WHERE order_no = ?',
        [payment.orderNo],
      );
      expect({ ...orders[0] }).toEqual({
        status: 'WAIT_PAY',
        channel: registration().channel,
        merchant_id: registration().merchantId,
        transaction_id: null,
      });
      const [anomalies] = await pool.query<RowDataPacket[]>(
        'SELECT type, status, transaction_id FROM payment_anomaly WHERE order_no = ?',
        [payment.orderNo],
      );
      expect(anomalies.map((a) => ({ ...a }))).toEqual([
        { type: 'MERCHANT_MISMATCH', status: 'OPEN', transaction_id: payment.transactionId },
      ]);
    },
  );

  it('should be refundable through the account that took it', async () => {
    const payment = await newOrder(5200, { channel: 'WECHATPAY', merchantId: wechatB.mchid });
    expect((await client.postWechatpay(wechatpayNotification(wechatA, payment))).status).toBe(204);

    const refund = await client.admin('POST', '/admin/refunds/emergency', platforms.admins.admin, {
      orderNo: payment.orderNo,
      transactionId: payment.transactionId,
      reason: 'paid at the wrong account',
    });

    expect(refund.status).toBe(202);
    const { refundNo, purpose } = refund.json<{ refundNo: string; purpose: string }>();
    expect(purpose).toBe('MERCHANT_MISMATCH');
    await eventually(
      `refund ${refundNo} to succeed`,
      async () => (await refundStatus(refundNo)) === 'SUCCEEDED',
      15_000,
    );
    expect(fake.calls.filter((c) => c.refundNo === refundNo)).toEqual([
      expect.objectContaining({ channel: 'WECHATPAY', merchantId: wechatA.mchid, amount: 5200 }),
    ]);
    expect(await effects.status(payment.orderNo)).toBe('WAIT_PAY');
  });
});

describe("trade calls go to the order's account", () => {
  it('should close an order registered to account B at account B only', async () => {
    const payment = await newOrder(3100, { channel: 'WECHATPAY', merchantId: wechatB.mchid });
    fake.openTrade({ channel: 'WECHATPAY', outTradeNo: payment.orderNo, amount: 3100, merchantId: wechatB.mchid });

    const answer = await client.api('POST', `/payment-orders/${payment.orderNo}/close`);

    expect(answer.status).toBe(200);
    expect(answer.json()).toMatchObject({
      status: 'CLOSED',
      channelClose: [{ channel: 'WECHATPAY', merchantId: wechatB.mchid, outcome: 'CLOSED' }],
    });
    expect(fake.tradeCallsFor(payment.orderNo).map((c) => `${c.request} ${c.channel} ${c.merchantId}`)).toEqual([
      `CLOSE WECHATPAY ${wechatB.mchid}`,
    ]);
  });

  it('should find an unrouted order paid at Alipay app B, take the payment for app B and refund it with its key', async () => {
    const payment = await newOrder(3200);
    fake.payTrade({
      channel: 'ALIPAY',
      outTradeNo: payment.orderNo,
      transactionId: payment.transactionId,
      amount: 3200,
      merchantId: alipayB.appId,
    });

    const closing = await client.api('POST', `/payment-orders/${payment.orderNo}/close`);

    expect(closing.status).toBe(409);
    expect(await effects.status(payment.orderNo)).toBe('PAID');
    expect(await effects.payments(payment.orderNo)).toEqual([
      expect.objectContaining({ channel: 'ALIPAY', transaction_id: payment.transactionId, merchant_id: alipayB.appId }),
    ]);
    // Every account was asked to close it; only app B knows the trade.
    const asked = fake.tradeCallsFor(payment.orderNo, 'CLOSE').map((c) => `${c.channel} ${c.merchantId} ${c.answered}`);
    expect(asked.sort()).toEqual(
      [
        `ALIPAY ${alipayA.appId} NOT_EXIST`,
        `ALIPAY ${alipayB.appId} PAID`,
        `WECHATPAY ${wechatA.mchid} NOT_EXIST`,
        `WECHATPAY ${wechatB.mchid} NOT_EXIST`,
      ].sort(),
    );

    const refund = await client.admin('POST', '/admin/refunds/emergency', platforms.admins.admin, {
      orderNo: payment.orderNo,
      transactionId: payment.transactionId,
      reason: 'customer complaint',
    });
    expect(refund.status).toBe(202);
    const { refundNo } = refund.json<{ refundNo: string }>();
    await eventually(
      `refund ${refundNo} to succeed`,
      async () => (await refundStatus(refundNo)) === 'SUCCEEDED',
      15_000,
    );
    expect(fake.calls.filter((c) => c.refundNo === refundNo)).toEqual([
      expect.objectContaining({ channel: 'ALIPAY', merchantId: alipayB.appId, transactionId: payment.transactionId }),
    ]);
  });
});

describe('the env shorthand', () => {
  it('should accept a second appid through WECHATPAY_APPIDS, and refuse an appid it does not list', async () => {
    const env = { ...platforms.env, ...baseEnv };
    delete env.WECHATPAY_APPID;
    const shorthand = await startApp({ ...env, WECHATPAY_APPIDS: `${platforms.wechatpay.appid},${SECOND_APPID_OF_A}` });
    try {
      const shorthandClient = new TestClient(shorthand.url, platforms);
      const viaSecond = await newOrder(800);
      const viaUnlisted = await newOrder(900);

      const second = await shorthandClient.postWechatpay(
        shorthandClient.wechatpayPayment({
          outTradeNo: viaSecond.orderNo,
          transactionId: viaSecond.transactionId,
          total: 800,
          appid: SECOND_APPID_OF_A,
        }),
      );
      const unlisted = await shorthandClient.postWechatpay(
        shorthandClient.wechatpayPayment({
          outTradeNo: viaUnlisted.orderNo,
          transactionId: viaUnlisted.transactionId,
          total: 900,
          appid: 'wxc00000000000c003',
        }),
      );

      expect(second.status).toBe(204);
      expect(await effects.status(viaSecond.orderNo)).toBe('PAID');
      expect(unlisted.status).toBe(401);
      expect(await effects.status(viaUnlisted.orderNo)).toBe('WAIT_PAY');
      expect(await effects.payments(viaUnlisted.orderNo)).toHaveLength(0);
    } finally {
      await shorthand.close();
    }
  });
});

/**
 * Each refused start-up runs in a child process of its own (Nest ends a process whose modules fail to build), all
 * at once, since most of their time is compiling the app.
 */
describe('a configuration the service refuses to start with', () => {
  type Spoil = (document: ReturnType<typeof accountsDocument>) => void;
  const withFile = (spoil: Spoil, extra: Record<string, string> = {}) => {
    const document = structuredClone(accountsDocument(accounts));
    spoil(document);
    return failedStartup({
      ...withoutAccountVariables(platforms.env),
      ...baseEnv,
      ...extra,
      PAYMENT_ACCOUNTS_FILE: writeAccountsFile(document),
    });
  };
  let startups: Record<string, Promise<{ stderr: string; exit: string }>>;

  beforeAll(() => {
    startups = {
      shortKey: withFile((d) => ((d.wechatpay[1] as { apiV3Key: string }).apiV3Key = 'x'.repeat(31))),
      besideFile: withFile(() => undefined, { WECHATPAY_MCHID: platforms.wechatpay.mchid }),
      commaInMchid: failedStartup({ ...platforms.env, ...baseEnv, WECHATPAY_MCHID: '1900009191,1900009292' }),
    };
    // Each test awaits its own; none may go unhandled meanwhile.
    for (const startup of Object.values(startups)) startup.catch(() => undefined);
  });

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
});
