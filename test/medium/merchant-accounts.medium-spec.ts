import { Pool, RowDataPacket } from 'mysql2/promise';
import { AdminModule } from '../../src/admin/admin.module';
import { PlatformReply } from '../../src/channels/payment-channel';
import { DomainError } from '../../src/domain/domain-error';
import { NotifyModule } from '../../src/intake/notify.module';
import { OrderModule } from '../../src/order/order.module';
import { PaymentOrderService } from '../../src/order/payment-order.service';
import { TradeCloseService } from '../../src/trade/trade-close.service';
import { TradeModule } from '../../src/trade/trade.module';
import { FakeChannel, FakePlatform } from '../../tools/simulator/fake-platform';
import {
  alipayDelivery,
  alipayTradeParams,
  wechatpayDelivery,
  wechatpayTransaction,
  yuan,
} from '../../tools/simulator/platform-signers';
import { eventually } from '../support/eventually';
import { Factories } from '../support/factories';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { Intake } from '../support/medium-notify';
import {
  accountsDocument,
  AlipayTestAccount,
  alipayAccountOf,
  createAlipayAccount,
  createWechatpayAccount,
  fakeAccountOptions,
  WechatpayTestAccount,
  wechatpayAccountOf,
  withoutAccountVariables,
  writeAccountsFile,
} from '../support/merchant-accounts';
import { OrderEffects } from '../support/order-effects';
import { createTestPlatforms, TestPlatforms, uniqueId } from '../support/test-app';

/**
 * Several merchant accounts per channel (PAYMENT_ACCOUNTS_FILE): each payment is verified with the keys of the
 * account it names and remembers that account, and its refund is signed with that account's merchant key. The
 * fake platform knows the same accounts and checks each refund request against the account it names. Payments go
 * through the notify route's use case (NotificationIntake), refunds through the refund use case, closes through
 * TradeCloseService. The configurations the service refuses to start with are in
 * test/merchant-accounts.e2e-spec.ts.
 */
let setup: Medium;
let platforms: TestPlatforms;
let wechatA: WechatpayTestAccount;
let wechatB: WechatpayTestAccount;
let alipayA: AlipayTestAccount;
let alipayB: AlipayTestAccount;
let fake: FakePlatform;
let ctx: MediumContext;
let make: Factories;
let intake: Intake;
let pool: Pool;
let effects: OrderEffects;
let baseEnv: Record<string, string>;

const SECOND_APPID_OF_A = 'wx2a0000000000a002';
const MODULES = [OrderModule, TradeModule, NotifyModule, AdminModule];

beforeAll(async () => {
  platforms = await createTestPlatforms();
  wechatA = wechatpayAccountOf(platforms, [SECOND_APPID_OF_A]);
  wechatB = createWechatpayAccount('1900009292', ['wxb00000000000b001']);
  alipayA = alipayAccountOf(platforms);
  alipayB = createAlipayAccount('2021000117600002', '2088531891660002');
  const accounts = { wechatpay: [wechatA, wechatB], alipay: [alipayA, alipayB] };
  const own = {
    PAYMENT_QUERY_SCHEDULE_SECONDS: '3600',
    REFUND_REQUEST_TIMEOUT_MS: '1000',
    REFUND_RETRY_BASE_DELAY_MS: '1000',
    REFUND_POLL_INTERVAL_MS: '100',
  };
  setup = await startMedium(
    (p, apiEnv) => ({
      ...withoutAccountVariables(p.env),
      ...apiEnv,
      ...own,
      PAYMENT_ACCOUNTS_FILE: writeAccountsFile(accountsDocument(accounts)),
    }),
    { imports: MODULES, platforms, fake: () => ({ ...fakeAccountOptions(accounts), hangMs: 1500 }) },
  );
  ({ fake, ctx, make, pool } = setup);
  baseEnv = { ...fake.apiEnv, ...own };
  intake = new Intake(ctx);
  effects = new OrderEffects(pool);
});

afterAll(() => setup?.close());

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

/** An order registered without a channel or account. */
async function newOrder(amount: number): Promise<Payment> {
  const payment = { orderNo: uniqueId('M'), transactionId: uniqueId('T'), amount };
  await make.order({ orderNo: payment.orderNo, amount });
  return payment;
}

/** An order registered with the channel and account it will be paid through. */
async function newOrderAt(amount: number, registration: { channel: FakeChannel; merchantId: string }) {
  const payment = { orderNo: uniqueId('M'), transactionId: uniqueId('T'), amount };
  const { created } = await ctx.inContext(() =>
    ctx
      .get(PaymentOrderService)
      .register({ orderNo: payment.orderNo, amount, userId: 'u-1', currency: 'CNY', ...registration }),
  );
  expect(created).toBe(true);
  return payment;
}

async function refundStatus(refundNo: string): Promise<unknown> {
  const [rows] = await pool.query<RowDataPacket[]>('SELECT status FROM refund WHERE refund_no = ?', [refundNo]);
  return rows[0]?.status;
}

/** An emergency refund as alice asks for it (POST /admin/refunds/emergency), awaited until SUCCEEDED. */
async function refundToSuccess(payment: Payment, reason: string) {
  const { refund, created } = await make.refund({
    orderNo: payment.orderNo,
    transactionId: payment.transactionId,
    reason,
  });
  expect(created).toBe(true);
  await eventually(
    `refund ${refund.refundNo} to succeed`,
    async () => (await refundStatus(refund.refundNo)) === 'SUCCEEDED',
    15_000,
  );
  return refund;
}

const close = (orderNo: string) => ctx.inContext(() => ctx.get(TradeCloseService).close(orderNo));

interface AccountCase {
  channel: FakeChannel;
  merchantId: () => string;
  /** Registers with the channel and account when true; without either when false. */
  registerWithAccount: boolean;
  pay: (payment: Payment) => Promise<PlatformReply>;
}

const ACCOUNT_CASES: Array<[string, AccountCase]> = [
  [
    'WeChat Pay account A, paying through its second appid',
    {
      channel: 'WECHATPAY',
      merchantId: () => wechatA.mchid,
      registerWithAccount: false,
      pay: (p) => intake.wechatpay(wechatpayNotification(wechatA, p, { appid: SECOND_APPID_OF_A })),
    },
  ],
  [
    'WeChat Pay account B',
    {
      channel: 'WECHATPAY',
      merchantId: () => wechatB.mchid,
      registerWithAccount: true,
      pay: (p) => intake.wechatpay(wechatpayNotification(wechatB, p)),
    },
  ],
  [
    'Alipay app A',
    {
      channel: 'ALIPAY',
      merchantId: () => alipayA.appId,
      registerWithAccount: false,
      pay: (p) => intake.alipay(alipayNotification(alipayA, p)),
    },
  ],
  [
    'Alipay app B',
    {
      channel: 'ALIPAY',
      merchantId: () => alipayB.appId,
      registerWithAccount: true,
      pay: (p) => intake.alipay(alipayNotification(alipayB, p)),
    },
  ],
];

describe('several accounts per channel', () => {
  it.each(ACCOUNT_CASES)(
    'should take a payment of %s with its own keys, and refund it signed by the same account',
    async (_, account) => {
      const payment = account.registerWithAccount
        ? await newOrderAt(6600, { channel: account.channel, merchantId: account.merchantId() })
        : await newOrder(6600);

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
      const view = await ctx.get(PaymentOrderService).get(payment.orderNo);
      expect(view).toMatchObject({ status: 'PAID', channel: account.channel, merchantId: account.merchantId() });

      const refund = await refundToSuccess(payment, 'customer complaint');

      expect(fake.calls.filter((c) => c.refundNo === refund.refundNo)).toEqual([
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

    const claimingA = await intake.wechatpay(
      wechatpayNotification(wechatB, payment, { mchid: wechatA.mchid, appid: wechatA.appids[0] }),
    );
    const claimingAsAppid = await intake.wechatpay(
      wechatpayNotification(wechatB, payment, { appid: wechatA.appids[0] }),
    );

    expect(claimingA.status).toBe(401);
    expect(claimingAsAppid.status).toBe(401);
    expect(await effects.everythingAbout(payment.orderNo)).toEqual(before);
    expect(await effects.status(payment.orderNo)).toBe('WAIT_PAY');

    // The genuine notification of account A still pays.
    expect((await intake.wechatpay(wechatpayNotification(wechatA, payment))).status).toBe(204);
    expect(await effects.status(payment.orderNo)).toBe('PAID');
  });

  it("should refuse with 401 an Alipay notification signed with app B's key but naming app A, or an unknown app", async () => {
    const payment = await newOrder(4200);
    const before = await effects.everythingAbout(payment.orderNo);

    const namingA = await intake.alipay(alipayNotification(alipayB, payment, alipayA.appId));
    const unknownApp = await intake.alipay(alipayNotification(alipayB, payment, '2021000117609999'));

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
      (p: Payment) => intake.wechatpay(wechatpayNotification(wechatA, p)),
    ],
    [
      'Alipay app B, for an order of app A',
      () => ({ channel: 'ALIPAY' as const, merchantId: alipayA.appId }),
      (p: Payment) => intake.alipay(alipayNotification(alipayB, p)),
    ],
    [
      'Alipay app A, for an order of WeChat Pay account A',
      () => ({ channel: 'WECHATPAY' as const, merchantId: wechatA.mchid }),
      (p: Payment) => intake.alipay(alipayNotification(alipayA, p)),
    ],
  ])(
    'should be a MERCHANT_MISMATCH anomaly, acked, with the order and its account unchanged: %s',
    async (_name, registration, pay) => {
      const payment = await newOrderAt(5100, registration());

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
    const payment = await newOrderAt(5200, { channel: 'WECHATPAY', merchantId: wechatB.mchid });
    expect((await intake.wechatpay(wechatpayNotification(wechatA, payment))).status).toBe(204);

    const refund = await refundToSuccess(payment, 'paid at the wrong account');

    expect(refund.purpose).toBe('MERCHANT_MISMATCH');
    expect(fake.calls.filter((c) => c.refundNo === refund.refundNo)).toEqual([
      expect.objectContaining({ channel: 'WECHATPAY', merchantId: wechatA.mchid, amount: 5200 }),
    ]);
    expect(await effects.status(payment.orderNo)).toBe('WAIT_PAY');
  });
});

describe("trade calls go to the order's account", () => {
  it('should close an order registered to account B at account B only', async () => {
    const payment = await newOrderAt(3100, { channel: 'WECHATPAY', merchantId: wechatB.mchid });
    fake.openTrade({ channel: 'WECHATPAY', outTradeNo: payment.orderNo, amount: 3100, merchantId: wechatB.mchid });

    const closed = await close(payment.orderNo);

    expect(closed.order.status).toBe('CLOSED');
    expect(closed.channelClose).toMatchObject([{ channel: 'WECHATPAY', merchantId: wechatB.mchid, outcome: 'CLOSED' }]);
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

    const closing = await close(payment.orderNo).catch((e: unknown) => e);

    expect(closing).toBeInstanceOf(DomainError);
    expect((closing as DomainError).status).toBe(409);

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

    const refund = await refundToSuccess(payment, 'customer complaint');
    expect(fake.calls.filter((c) => c.refundNo === refund.refundNo)).toEqual([
      expect.objectContaining({ channel: 'ALIPAY', merchantId: alipayB.appId, transactionId: payment.transactionId }),
    ]);
  });
});

describe('the env shorthand', () => {
  it('should accept a second appid through WECHATPAY_APPIDS, and refuse an appid it does not list', async () => {
    const env = { ...platforms.env, ...baseEnv };
    delete env.WECHATPAY_APPID;
    const shorthand = await setup.another(
      () => ({
        ...env,
        WECHATPAY_APPIDS: `${platforms.wechatpay.appid},${SECOND_APPID_OF_A}`,
      }),
      MODULES,
    );
    try {
      const shorthandIntake = new Intake(shorthand);
      const viaSecond = await newOrder(800);
      const viaUnlisted = await newOrder(900);

      const second = await shorthandIntake.wechatpay(
        make.deliveries.wechatpayPayment({
          outTradeNo: viaSecond.orderNo,
          transactionId: viaSecond.transactionId,
          total: 800,
          appid: SECOND_APPID_OF_A,
        }),
      );
      const unlisted = await shorthandIntake.wechatpay(
        make.deliveries.wechatpayPayment({
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
