import { createPublicKey } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { AdminModule } from '../../src/admin/admin.module';
import { ChannelsModule } from '../../src/channels/channels.module';
import { PaymentChannels } from '../../src/channels/payment-channels';
import { billDateOf, billDayRange, shiftBillDate } from '../../src/domain/bill';
import { NotifyModule } from '../../src/intake/notify.module';
import { OrderModule } from '../../src/order/order.module';
import { ReconciliationModule } from '../../src/reconciliation/reconciliation.module';
import { ReconciliationService } from '../../src/reconciliation/reconciliation.service';
import { Refunds } from '../../src/refund/refunds';
import { startSummary } from '../../src/start/start-line';
import { TradeCloseService } from '../../src/trade/trade-close.service';
import {
  alipayCertDelivery,
  createTestRoot,
  issueCertificate,
  IssuedCertificate,
  TestCertificateAuthority,
} from '../../tools/simulator/alipay/alipay-cert-keys';
import { FakePlatform } from '../../tools/simulator/fake-platform';
import {
  alipayRefundParams,
  alipayTradeParams,
  generateRsaKeyPair,
  RsaKeyPair,
  yuan,
} from '../../tools/simulator/platform-signers';
import { alipayBillDetail, alipayBillZip, beijingTime } from '../support/bill-files';
import { eventually } from '../support/eventually';
import { Factories } from '../support/factories';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { FORM, receive, Reply } from '../support/medium-dialects';
import { OrderEffects } from '../support/order-effects';
import { inParallel, paymentEffects, StormPayment } from '../support/payment-storm';
import { count, createTestPlatforms, fakePlatformOptions, TestPlatforms, uniqueId } from '../support/test-app';

/**
 * Alipay in certificate mode (公钥证书) as services on the real database, without HTTP: a test root made here, two
 * Alipay certificates under it (the one in use before a rotation and the new one), the app's certificate; the
 * notify route's use case, and the fake gateway in certificate mode (it checks app_cert_sn and alipay_root_cert_sn
 * with every request signature and names alipay_cert_sn in its answers, signed with the new certificate's key).
 * The certificates the service refuses to start with are in test/alipay-cert.e2e-spec.ts.
 */
const STORM_PAYMENTS = 30;
const DELIVERIES_PER_PAYMENT = 4;

let setup: Medium;
let platforms: TestPlatforms;
let root: TestCertificateAuthority;
let keys: { old: RsaKeyPair; next: RsaKeyPair };
let certs: { old: IssuedCertificate; next: IssuedCertificate; app: IssuedCertificate };
let files: { dir: string; old: string; next: string; root: string; app: string };
let certEnv: Record<string, string>;
let fake: FakePlatform;
let ctx: MediumContext;
let make: Factories;
let pool: Pool;
let effects: OrderEffects;

const appId = () => platforms.alipay.appId;

beforeAll(async () => {
  platforms = await createTestPlatforms();
  root = await createTestRoot();
  // The key that signed in public key mode stays the "old" certificate's; the rotation brings a new one.
  const oldPrivate = platforms.alipay.privateKey;
  keys = {
    old: {
      privateKey: oldPrivate,
      publicKeyPem: createPublicKey(oldPrivate).export({ type: 'spki', format: 'pem' }).toString(),
      privateKeyPem: oldPrivate.export({ type: 'pkcs8', format: 'pem' }).toString(),
    },
    next: generateRsaKeyPair(),
  };
  certs = {
    old: await issueCertificate(
      root,
      keys.old.publicKeyPem,
      `支付宝(中国)网络技术有限公司-${platforms.alipay.sellerId}`,
    ),
    next: await issueCertificate(
      root,
      keys.next.publicKeyPem,
      `支付宝(中国)网络技术有限公司-${platforms.alipay.sellerId}`,
    ),
    app: await issueCertificate(root, platforms.refunds.alipayAppKey.publicKeyPem, `2088-${appId()}`),
  };
  const dir = mkdtempSync(join(tmpdir(), 'pcs-alipay-cert-'));
  files = {
    dir,
    old: join(dir, 'alipayCertPublicKey_RSA2.old.crt'),
    next: join(dir, 'alipayCertPublicKey_RSA2.crt'),
    root: join(dir, 'alipayRootCert.crt'),
    app: join(dir, `appCertPublicKey_${appId()}.crt`),
  };
  writeFileSync(files.old, certs.old.pem);
  writeFileSync(files.next, certs.next.pem);
  writeFileSync(files.root, root.pem);
  writeFileSync(files.app, certs.app.pem);

  const { ALIPAY_PUBLIC_KEY_PATH: _publicKeyMode, ...env } = platforms.env;
  const certEnvOf = (apiEnv: Record<string, string>) => ({
    ...env,
    ...apiEnv,
    ALIPAY_PUBLIC_CERT_PATHS: `${files.old},${files.next}`,
    ALIPAY_ROOT_CERT_PATH: files.root,
    ALIPAY_APP_CERT_PATH: files.app,
    PAYMENT_QUERY_SCHEDULE_SECONDS: '1,2,3',
    PAYMENT_QUERY_POLL_INTERVAL_MS: '100',
    PAYMENT_QUERY_RATE_PER_SECOND: '1000',
    PAYMENT_QUERY_CONCURRENCY: '16',
    REFUND_REQUEST_TIMEOUT_MS: '500',
    REFUND_RETRY_BASE_DELAY_MS: '1000',
    REFUND_RETRY_MAX_DELAY_MS: '2000',
    REFUND_POLL_INTERVAL_MS: '100',
  });
  // The payment-query and refund workers take every due row of their database: other suites' would come first.
  setup = await startMedium((_, apiEnv) => certEnvOf(apiEnv), {
    imports: [OrderModule, NotifyModule, AdminModule, ReconciliationModule],
    platforms,
    fake: {
      hangMs: 1500,
      alipay: {
        appId: appId(),
        appPublicKeyPem: platforms.refunds.alipayAppKey.publicKeyPem,
        alipayPrivateKey: keys.next.privateKey,
        certMode: { appCertSn: certs.app.sn, rootCertSn: root.sn, alipayCertSn: certs.next.sn },
      },
    },
    ownDatabase: true,
  });
  ({ fake, ctx, make, pool } = setup);
  certEnv = certEnvOf(fake.apiEnv);
  effects = new OrderEffects(pool);
});

afterAll(() => setup?.close());

interface Signing {
  key: RsaKeyPair;
  /** The alipay_cert_sn the notification names; undefined: it names none. */
  sn?: string;
}

/** A certificate-mode notification of the payment, signed with `signing` (by default the new certificate, named). */
function paymentNotice(
  p: { orderNo: string; transactionId: string; amount: number; paidAt?: Date },
  signing: Signing = { key: keys.next, sn: certs.next.sn },
): string {
  const params = alipayTradeParams({
    appId: appId(),
    sellerId: platforms.alipay.sellerId,
    outTradeNo: p.orderNo,
    tradeNo: p.transactionId,
    totalAmount: yuan(p.amount),
    paidAt: p.paidAt,
    notifiedAt: p.paidAt && new Date(),
  });
  return signed(params, signing);
}

function signed(params: Record<string, string>, signing: Signing): string {
  const body = alipayCertDelivery(signing.key.privateKey, signing.sn ?? '-', params);
  return signing.sn === undefined ? body.replace(/&alipay_cert_sn=-/, '') : body;
}

const post = (body: string) => receive(ctx, 'alipay', body, FORM);
const isAck = (answer: Reply) => answer.status === 200 && answer.body === 'success';

async function registered(prefix: string, amount: number) {
  const order = { orderNo: uniqueId(prefix), transactionId: uniqueId('T'), amount };
  await make.order({ orderNo: order.orderNo, amount, channel: 'ALIPAY' });
  return order;
}

/** Nothing of the delivery reached the database: the order still waits, no payment, no delivery row. */
async function expectNothingWritten(order: { orderNo: string; transactionId: string }): Promise<void> {
  expect(await effects.status(order.orderNo)).toBe('WAIT_PAY');
  expect(await effects.history(order.orderNo)).toEqual(['->WAIT_PAY']);
  expect(
    await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE transaction_id = ?', [order.transactionId]),
  ).toBe(0);
  expect(await count(pool, 'SELECT COUNT(*) FROM callback_delivery WHERE order_no = ?', [order.orderNo])).toBe(0);
}

describe('the start line', () => {
  it('should show the SNs: both Alipay certificates, the app certificate, the root bundle', () => {
    const summary = startSummary(ctx.module, 3000, 3000);

    expect(summary.channels.alipay).toMatchObject({
      accounts: [appId()],
      keyIds: [
        `alipay_cert_sn=${certs.old.sn}`,
        `alipay_cert_sn=${certs.next.sn}`,
        `app_cert_sn=${certs.app.sn}`,
        `alipay_root_cert_sn=${root.sn}`,
      ],
      refunds: [appId()],
    });
    expect(summary.msg).toContain(`alipay_cert_sn=${certs.next.sn}`);
  });
});

describe('a storm of certificate-mode notifications', () => {
  it('should make every payment PAID exactly once, whichever certificate signed each delivery', async () => {
    const payments: StormPayment[] = Array.from({ length: STORM_PAYMENTS }, (_, i) => ({
      orderNo: uniqueId('CS'),
      channel: 'ALIPAY',
      transactionId: uniqueId('T'),
      amount: 100 + i,
    }));
    await inParallel(payments, 10, async (p) => {
      await make.order({ orderNo: p.orderNo, amount: p.amount, channel: 'ALIPAY' });
    });
    // During a rotation: the new certificate named by SN, the old one named, and the new one unnamed.
    const signings: Signing[] = [
      { key: keys.next, sn: certs.next.sn },
      { key: keys.old, sn: certs.old.sn },
      { key: keys.next },
    ];
    const answers: Reply[] = [];

    await inParallel(payments, 10, async (p) => {
      const order = { orderNo: p.orderNo, transactionId: p.transactionId, amount: p.amount };
      await Promise.all(
        Array.from({ length: DELIVERIES_PER_PAYMENT }, async (_, i) => {
          answers.push(await post(paymentNotice(order, signings[(i + p.amount) % signings.length])));
        }),
      );
    });

    expect(answers.filter((a) => !isAck(a)).map((a) => `${a.status} ${a.body}`)).toEqual([]);
    expect(await paymentEffects(pool, payments)).toEqual({
      paidOrders: STORM_PAYMENTS,
      ordersNotExactlyOnce: [],
      paidTransitions: STORM_PAYMENTS,
      outboxEvents: STORM_PAYMENTS,
      callbacks: STORM_PAYMENTS,
      deliveries: STORM_PAYMENTS * DELIVERIES_PER_PAYMENT,
      paidDeliveries: STORM_PAYMENTS,
      anomalies: 0,
    });
  });
});

describe('forged certificate-mode notifications', () => {
  it('should refuse a tampered amount with 401, writing nothing', async () => {
    const order = await registered('CF', 1000);
    const body = paymentNotice(order);
    const tampered = body.replace('total_amount=10.00', 'total_amount=0.01');
    expect(tampered).not.toBe(body);

    const answer = await post(tampered);

    expect(answer.status).toBe(401);
    expect(answer.body).toBe('fail');
    await expectNothingWritten(order);
  });

  it('should refuse a notification naming a certificate not configured with 401, writing nothing', async () => {
    const order = await registered('CU', 1000);
    const stranger = generateRsaKeyPair();
    const strangerCert = await issueCertificate(root, stranger.publicKeyPem, 'not configured');

    const answer = await post(paymentNotice(order, { key: stranger, sn: strangerCert.sn }));

    expect(answer.status).toBe(401);
    expect(answer.body).toBe('fail');
    await expectNothingWritten(order);
  });

  it('should refuse a notification signed by the new certificate but naming the old one, and one signed by no certificate of ours', async () => {
    const order = await registered('CW', 1000);

    const misnamed = await post(paymentNotice(order, { key: keys.next, sn: certs.old.sn }));
    const unnamed = await post(paymentNotice(order, { key: generateRsaKeyPair() }));

    expect([misnamed.status, unnamed.status]).toEqual([401, 401]);
    await expectNothingWritten(order);
  });
});

describe('API calls in certificate mode', () => {
  async function paid(prefix: string, amount: number) {
    const order = await registered(prefix, amount);
    expect(isAck(await post(paymentNotice(order)))).toBe(true);
    return order;
  }

  async function refundStatus(refundNo: string): Promise<unknown> {
    const [rows] = await pool.query<RowDataPacket[]>('SELECT status FROM refund WHERE refund_no = ?', [refundNo]);
    return rows[0]?.status;
  }

  const refund = (request: { orderNo: string; transactionId: string; refundNo?: string }) =>
    ctx.get(Refunds).request({ ...request, reason: 'customer complaint' }, 'alice');

  it('should refund through the gateway, which checks app_cert_sn and alipay_root_cert_sn, and trust its answer by alipay_cert_sn', async () => {
    const order = await paid('CR', 8888);
    const refusedBefore = fake.refusedRequests.length;

    const { refund: asked, created } = await refund({ orderNo: order.orderNo, transactionId: order.transactionId });

    expect(created).toBe(true);
    const { refundNo } = asked;
    await eventually('the refund to succeed', async () => (await refundStatus(refundNo)) === 'SUCCEEDED');
    expect(await effects.status(order.orderNo)).toBe('REFUNDED');
    expect(fake.calls.filter((c) => c.refundNo === refundNo)).toEqual([
      expect.objectContaining({ channel: 'ALIPAY', merchantId: appId(), amount: 8888 }),
    ]);
    expect(fake.refusedRequests.slice(refusedBefore)).toEqual([]);
  });

  it('should settle a refund by its certificate-mode notification while the API call is unanswered', async () => {
    const order = await paid('CN', 600);
    const refundNo = uniqueId('CRN');
    fake.script(refundNo, 'timeout');
    expect((await refund({ orderNo: order.orderNo, transactionId: order.transactionId, refundNo })).created).toBe(true);
    await eventually('the channel call', () => fake.callsFor(refundNo) === 1);

    const notice = signed(
      alipayRefundParams({
        appId: appId(),
        sellerId: platforms.alipay.sellerId,
        outTradeNo: order.orderNo,
        tradeNo: order.transactionId,
        totalAmount: '6.00',
        outBizNo: refundNo,
        refundFee: '6.00',
      }),
      { key: keys.next, sn: certs.next.sn },
    );
    const answers = await Promise.all([post(notice), post(notice), post(notice)]);

    expect(answers.map((a) => a.body)).toEqual(['success', 'success', 'success']);
    expect(await refundStatus(refundNo)).toBe('SUCCEEDED');
    expect(await effects.status(order.orderNo)).toBe('REFUNDED');
  });

  it('should find by trade query an order paid at the gateway whose notification never came', async () => {
    const order = await registered('CQ', 4321);
    fake.payTrade({ channel: 'ALIPAY', outTradeNo: order.orderNo, transactionId: order.transactionId, amount: 4321 });

    await eventually(
      'the order to be PAID by query',
      async () => (await effects.status(order.orderNo)) === 'PAID',
      30_000,
    );

    expect(await effects.events(order.orderNo)).toBe(1);
    // The query's channel call is recorded once its outcome has been applied.
    await eventually('the paid query recorded', async () =>
      (await effects.channelCalls(order.orderNo, 'QUERY')).some((c) => c.outcome === 'PAID'),
    );
    expect(await effects.channelCalls(order.orderNo, 'QUERY')).toContainEqual(
      expect.objectContaining({
        channel: 'ALIPAY',
        merchantId: appId(),
        outcome: 'PAID',
        transactionId: order.transactionId,
      }),
    );
  });

  it('should close an unpaid trade at the gateway', async () => {
    const order = await registered('CC', 500);
    fake.openTrade({ channel: 'ALIPAY', outTradeNo: order.orderNo, amount: 500 });

    const closed = await ctx.inContext(() => ctx.get(TradeCloseService).close(order.orderNo));

    expect(closed.order.status).toBe('CLOSED');
    expect(closed.channelClose).toMatchObject([{ channel: 'ALIPAY', merchantId: appId(), outcome: 'CLOSED' }]);
    expect(await effects.status(order.orderNo)).toBe('CLOSED');
    expect(fake.tradeClosesFor(order.orderNo)).toBe(1);
  });

  it('should reconcile a day against the bill whose URL a certificate-mode answer gave', async () => {
    // A day no other case here reconciles or pays on for this test app id.
    const date = shiftBillDate(billDateOf(new Date()), -20);
    const { start } = billDayRange(date);
    const matched = {
      orderNo: uniqueId('CM'),
      transactionId: uniqueId('T'),
      amount: 8888,
      paidAt: new Date(start.getTime() + 3_600_000),
    };
    const lost = {
      orderNo: uniqueId('CL'),
      transactionId: uniqueId('T'),
      amount: 2000,
      paidAt: new Date(start.getTime() + 7_200_000),
    };
    for (const p of [matched, lost]) await make.order({ orderNo: p.orderNo, amount: p.amount, channel: 'ALIPAY' });
    expect(isAck(await post(paymentNotice(matched)))).toBe(true);
    fake.payTrade({
      channel: 'ALIPAY',
      outTradeNo: lost.orderNo,
      transactionId: lost.transactionId,
      amount: lost.amount,
      paidAt: lost.paidAt,
    });
    const line = (p: typeof matched) => ({
      kind: 'PAYMENT' as const,
      transactionId: p.transactionId,
      orderNo: p.orderNo,
      amount: p.amount,
      at: beijingTime(p.paidAt),
    });
    fake.serveBill(appId(), date, {
      channel: 'ALIPAY',
      zip: alipayBillZip(alipayBillDetail([line(matched), line(lost)], date), date),
    });

    const report = await ctx.inContext(() => ctx.get(ReconciliationService).run('ALIPAY', appId(), date, 'MANUAL'));

    expect(report?.counts).toMatchObject({ MATCHED: 1, MISSING_LOCAL: 1, MISSING_CHANNEL: 0 });
    expect(await effects.status(lost.orderNo)).toBe('PAID');
    expect(await effects.events(lost.orderNo)).toBe(1);
  });

  /** The Alipay channel of a module of its own, configured with `env`: the calls of another configuration. */
  async function alipayOf(env: Record<string, string>) {
    const other = await setup.another(() => env, [ChannelsModule]);
    return { other, channel: other.get(PaymentChannels).all.find((c) => c.channel === 'ALIPAY')! };
  }

  it('should be refused by the gateway when it sends the SN of another app certificate', async () => {
    const otherAppCert = join(files.dir, 'appCertPublicKey.other.crt');
    writeFileSync(
      otherAppCert,
      (await issueCertificate(root, platforms.refunds.alipayAppKey.publicKeyPem, 'other')).pem,
    );
    const { other, channel } = await alipayOf({ ...certEnv, ALIPAY_APP_CERT_PATH: otherAppCert });
    try {
      const order = await registered('CA', 800);
      fake.payTrade({ channel: 'ALIPAY', outTradeNo: order.orderNo, transactionId: order.transactionId, amount: 800 });
      const refusedBefore = fake.refusedRequests.length;

      const result = await channel.queryTrade({ merchantId: appId(), orderNo: order.orderNo });

      expect(result).toEqual({ outcome: 'FAILED', detail: expect.stringContaining('isv.invalid-app-cert-sn') });
      expect(fake.refusedRequests.slice(refusedBefore)).toEqual([
        {
          path: '/gateway.do',
          reason: expect.stringMatching(/^isv\.invalid-app-cert-sn: app_cert_sn "[0-9a-f]{32}" is not /),
        },
      ]);
    } finally {
      await other.close();
    }
  });

  it('should not trust an answer naming a certificate that is not configured', async () => {
    const stranger = generateRsaKeyPair();
    const strangerCert = await issueCertificate(root, stranger.publicKeyPem, 'not configured');
    const otherGateway = await FakePlatform.start({
      ...fakePlatformOptions(platforms),
      alipay: {
        appId: appId(),
        appPublicKeyPem: platforms.refunds.alipayAppKey.publicKeyPem,
        alipayPrivateKey: stranger.privateKey,
        certMode: { appCertSn: certs.app.sn, rootCertSn: root.sn, alipayCertSn: strangerCert.sn },
      },
    });
    const { other, channel } = await alipayOf({ ...certEnv, ...otherGateway.apiEnv });
    try {
      const order = await registered('CT', 700);
      otherGateway.payTrade({
        channel: 'ALIPAY',
        outTradeNo: order.orderNo,
        transactionId: order.transactionId,
        amount: 700,
      });

      const result = await channel.queryTrade({ merchantId: appId(), orderNo: order.orderNo });

      expect(result).toEqual({ outcome: 'FAILED', detail: 'Alipay alipay.trade.query answer has no valid signature' });
      expect(otherGateway.tradeQueriesFor(order.orderNo, 'ALIPAY')).toBe(1);
    } finally {
      await other.close();
      await otherGateway.close();
    }
  });
});
