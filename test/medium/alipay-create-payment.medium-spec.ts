import { verify } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'mysql2/promise';
import { Channel } from '../../src/domain/notification';
import { NotifyModule } from '../../src/intake/notify.module';
import { ChannelPayments } from '../../src/order/channel-payments';
import { CreatePaymentOrderDto } from '../../src/order/dto/create-payment-order.dto';
import { OrderModule } from '../../src/order/order.module';
import { SettlementModule } from '../../src/settlement/settlement.module';
import { TradeModule } from '../../src/trade/trade.module';
import { createAlipayCertKeySet, writeAlipayCertFiles } from '../../tools/simulator/alipay/alipay-cert-keys';
import { FakeAlipayPayments } from '../../tools/simulator/alipay/fake-alipay-payments';
import { FakeAlipayApp, FakePlatform } from '../../tools/simulator/fake-platform';
import { beijingDateTime } from '../../tools/simulator/platform-signers';
import {
  createdOnceForConcurrentRequests,
  refusedAgainWithoutSecondCall,
  unavailableThenCreated,
} from '../support/create-payment-cases';
import { eventually } from '../support/eventually';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { FORM, receive } from '../support/medium-intake';
import { OrderEffects } from '../support/order-effects';
import { fakePlatformOptions, TestPlatforms, uniqueId } from '../support/test-app';

/**
 * Alipay payments created by the service (POST /payment-orders with method), as services on the real database
 * without HTTP: page, wap and app pay signed here with the app key and checked with the app's public key, as
 * Alipay checks them; precreate and create sent to the fake gateway, which verifies their signatures and signs its
 * answers; the buyer pays at the fake's cashier and the notification it signs is settled by the notify use case.
 */
const PUBLIC_BASE_URL = 'https://pay.example.com';
const NOTIFY_URL = `${PUBLIC_BASE_URL}/notify/alipay`;
const ENV = {
  PUBLIC_BASE_URL,
  // No query falls due while these tests run: every trade call here is a close's.
  PAYMENT_QUERY_SCHEDULE_SECONDS: '3600',
  PAYMENT_QUERY_POLL_INTERVAL_MS: '100',
  REFUND_REQUEST_TIMEOUT_MS: '1000',
};

let setup: Medium;
let platforms: TestPlatforms;
let fake: FakePlatform;
let gateway: FakeAlipayPayments;
let ctx: MediumContext;
let pool: Pool;
let effects: OrderEffects;
let app: FakeAlipayApp;

beforeAll(async () => {
  setup = await startMedium(ENV, {
    imports: [OrderModule, SettlementModule, TradeModule, NotifyModule],
    fake: { hangMs: 2500 },
  });
  ({ platforms, fake, ctx, pool } = setup);
  gateway = fake.alipayPayments;
  effects = new OrderEffects(pool);
  app = fakePlatformOptions(platforms).alipay as FakeAlipayApp;
});

afterAll(() => setup?.close());

function order(method: string, overrides: Partial<CreatePaymentOrderDto> = {}): CreatePaymentOrderDto {
  return {
    orderNo: uniqueId('ALI'),
    userId: 'u-1',
    amount: 1234,
    currency: 'CNY',
    channel: Channel.Alipay,
    method,
    description: '测试商品 Order',
    expiresAt: new Date(Date.now() + 30 * 60_000).toISOString(),
    ...overrides,
  };
}

const create = (dto: CreatePaymentOrderDto, on = ctx) => on.inContext(() => on.get(ChannelPayments).create(dto));
const alipay = {
  create: (dto: CreatePaymentOrderDto) => create(dto),
  callsFor: (orderNo: string) => fake.createCallsFor(orderNo, 'ALIPAY'),
};

/** The order's expiry as Alipay's time_expire: whole seconds, Beijing time. */
const timeExpire = (dto: CreatePaymentOrderDto) => beijingDateTime(new Date(dto.expiresAt!));

/** What Alipay checks: RSA2 over every parameter but sign, non-empty, sorted, `k=v&…`, with the app's public key. */
function appSignatureHolds(params: Record<string, string>, publicKeyPem = app.appPublicKeyPem): boolean {
  const content = Object.keys(params)
    .filter((key) => key !== 'sign' && params[key] !== '')
    .sort()
    .map((key) => `${key}=${params[key]}`)
    .join('&');
  return verify('sha256', Buffer.from(content, 'utf8'), publicKeyPem, Buffer.from(params.sign, 'base64'));
}

/** The buyer pays at the fake's cashier; its notification is delivered as Alipay posts it. */
async function payAndNotify(orderNo: string): Promise<{ tradeNo: string; ack: string }> {
  const payment = await gateway.pay(orderNo, app, false);
  const reply = await receive(ctx, 'alipay', { 'content-type': FORM }, payment.notification);
  return { tradeNo: payment.tradeNo, ack: reply.body };
}

async function expectSettledOnce(orderNo: string, tradeNo: string): Promise<void> {
  expect(await effects.status(orderNo)).toBe('PAID');
  const payments = await effects.payments(orderNo);
  expect(payments.map((p) => [p.transaction_id, Number(p.amount)])).toEqual([[tradeNo, 1234]]);
  expect(await effects.events(orderNo)).toBe(1);
}

describe('page and wap pay', () => {
  it.each(['PAGE', 'WAP'])(
    'should sign a %s pay form with the order terms, checked with the app public key, without calling Alipay',
    async (method) => {
      const dto = order(method, {
        payer: { returnUrl: 'https://shop.example.com/paid', quitUrl: 'https://shop.example.com/cart' },
      });

      const { payment } = await create(dto);

      expect(payment.state).toBe('CREATED');
      const buyer = JSON.parse(payment.buyer!) as { params: Record<string, string>; form: object };
      expect(buyer.form).toEqual({ action: `${fake.alipayGatewayUrl}?charset=utf-8`, method: 'POST' });
      expect(buyer.params).toMatchObject({
        app_id: platforms.alipay.appId,
        method: `alipay.trade.${method.toLowerCase()}.pay`,
        charset: 'utf-8',
        sign_type: 'RSA2',
        version: '1.0',
        notify_url: NOTIFY_URL,
        return_url: 'https://shop.example.com/paid',
      });
      expect(JSON.parse(buyer.params.biz_content)).toEqual({
        out_trade_no: dto.orderNo,
        total_amount: '12.34',
        subject: '测试商品 Order',
        product_code: method === 'PAGE' ? 'FAST_INSTANT_TRADE_PAY' : 'QUICK_WAP_WAY',
        time_expire: timeExpire(dto),
        ...(method === 'WAP' ? { quit_url: 'https://shop.example.com/cart' } : {}),
      });
      expect(appSignatureHolds(buyer.params)).toBe(true);
      const tampered = { ...buyer.params, biz_content: buyer.params.biz_content.replace('12.34', '0.01') };
      expect(appSignatureHolds(tampered)).toBe(false);
      expect(fake.createCallsFor(dto.orderNo, 'ALIPAY')).toHaveLength(0);
    },
  );

  it("should let the buyer's browser post the form to Alipay, pay at the cashier, and settle the order once", async () => {
    const dto = order('WAP');
    const { payment } = await create(dto);
    const buyer = JSON.parse(payment.buyer!) as { params: Record<string, string>; form: { action: string } };

    const posted = await fetch(buyer.form.action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(buyer.params).toString(),
    });
    expect(posted.status).toBe(200);
    expect(posted.headers.get('x-fake-cashier')).toMatch(/\/alipay\/cashier\/\d{28}$/);
    const paid = await gateway.pay(dto.orderNo, app, false);
    // Alipay delivers the notification again until it reads `success`: twice here, settled once.
    const replies = [
      await receive(ctx, 'alipay', { 'content-type': FORM }, paid.notification),
      await receive(ctx, 'alipay', { 'content-type': FORM }, paid.notification),
    ];

    expect(replies.map((r) => r.body)).toEqual(['success', 'success']);
    await expectSettledOnce(dto.orderNo, paid.tradeNo);
    expect(fake.trade('ALIPAY', dto.orderNo)?.state).toBe('PAID');
  });
});

describe('app pay', () => {
  it('should give the app an orderStr signed with the order terms, which the gateway takes', async () => {
    const dto = order('APP');

    const { payment } = await create(dto);

    const { params } = JSON.parse(payment.buyer!) as { params: { orderStr: string } };
    expect(Object.keys(params)).toEqual(['orderStr']);
    const fields = Object.fromEntries(new URLSearchParams(params.orderStr));
    expect(fields).toMatchObject({ method: 'alipay.trade.app.pay', notify_url: NOTIFY_URL });
    expect(JSON.parse(fields.biz_content)).toMatchObject({
      out_trade_no: dto.orderNo,
      total_amount: '12.34',
      product_code: 'QUICK_MSECURITY_PAY',
      time_expire: timeExpire(dto),
    });
    expect(appSignatureHolds(fields)).toBe(true);
    const taken = await fetch(fake.alipayGatewayUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: params.orderStr,
    });
    expect(taken.status).toBe(200);
    const { tradeNo, ack } = await payAndNotify(dto.orderNo);
    expect(ack).toBe('success');
    await expectSettledOnce(dto.orderNo, tradeNo);
  });
});

describe('precreate (QR)', () => {
  it('should precreate once for ten concurrent identical requests, each answered the same qr_code', async () => {
    const dto = order('QR');

    const { answers, call } = await createdOnceForConcurrentRequests(alipay, dto);

    expect(call.tradeType).toBe('alipay.trade.precreate');
    expect(call.request).toMatchObject({ app_id: platforms.alipay.appId, notify_url: NOTIFY_URL });
    expect(call.request.biz_content).toEqual({
      out_trade_no: dto.orderNo,
      total_amount: '12.34',
      subject: '测试商品 Order',
      product_code: 'FACE_TO_FACE_PAYMENT',
      time_expire: timeExpire(dto),
    });
    const qrCodes = new Set(
      answers.map((a) => (JSON.parse(a.payment.buyer!) as { params: { qr_code: string } }).params.qr_code),
    );
    expect([...qrCodes]).toEqual([`${fake.url}/alipay/cashier/${gateway.tradeNoOf(dto.orderNo)!}`]);
  });

  it('should settle once a payment the buyer makes by scanning the qr_code', async () => {
    const dto = order('QR');
    const { payment } = await create(dto);
    const { qr_code } = (JSON.parse(payment.buyer!) as { params: { qr_code: string } }).params;

    const scanned = (await (await fetch(qr_code)).json()) as { outTradeNo: string; amount: number };
    const { tradeNo, ack } = await payAndNotify(dto.orderNo);

    expect(scanned).toMatchObject({ outTradeNo: dto.orderNo, amount: 1234 });
    expect(ack).toBe('success');
    await expectSettledOnce(dto.orderNo, tradeNo);
  });
});

describe('mini-program (alipay.trade.create)', () => {
  it.each([
    ['user id', '2088102146225135', { buyer_id: '2088102146225135' }],
    [
      'open id',
      '074a1CcTG1LelxKe4xQC0zgNdId0nxi95b5lsNpazWYoCo5',
      { buyer_open_id: '074a1CcTG1LelxKe4xQC0zgNdId0nxi95b5lsNpazWYoCo5' },
    ],
  ])(
    'should create the trade for the buyer by %s and answer its trade_no for my.tradePay',
    async (_what, buyerId, buyer) => {
      const dto = order('MINI_PROGRAM', { payer: { buyerId } });

      const { payment } = await create(dto);

      const [call] = fake.createCallsFor(dto.orderNo, 'ALIPAY');
      expect(call.tradeType).toBe('alipay.trade.create');
      expect(call.request.notify_url).toBe(NOTIFY_URL);
      expect(call.request.biz_content).toEqual({
        out_trade_no: dto.orderNo,
        total_amount: '12.34',
        subject: '测试商品 Order',
        product_code: 'JSAPI_PAY',
        time_expire: timeExpire(dto),
        ...buyer,
      });
      const tradeNo = gateway.tradeNoOf(dto.orderNo)!;
      expect(JSON.parse(payment.buyer!)).toEqual({ params: { tradeNO: tradeNo } });
      expect(payment.channelTradeId).toBe(tradeNo);
    },
  );
});

describe('refusals and timeouts', () => {
  it("should answer Alipay's refusal as a 422 with its code, again without a second call", async () => {
    const dto = order('QR');

    await refusedAgainWithoutSecondCall(
      alipay,
      dto,
      () => fake.scriptCreate(dto.orderNo, { reject: 'ACQ.TRADE_HAS_SUCCESS', message: '交易已被支付' }),
      'ACQ.TRADE_HAS_SUCCESS',
    );
  });

  it.each([
    ['a timeout', 'timeout', 'created'],
    ['a server error', 'server-error', 'created'],
    ['a lost answer (the trade was made)', 'answer-lost', 'same-trade'],
  ] as const)(
    'should answer 503 to %s, then send the same terms again: one trade at Alipay',
    async (_what, behaviour, second) => {
      const dto = order('MINI_PROGRAM', { payer: { buyerId: '2088102146225135' } });

      const { payment, calls } = await unavailableThenCreated(alipay, dto, () =>
        fake.scriptCreate(dto.orderNo, behaviour),
      );

      expect(calls.map((c) => c.answered)).toEqual([behaviour, second]);
      expect(calls[1].request.biz_content).toEqual(calls[0].request.biz_content);
      expect(calls[1].request.notify_url).toBe(calls[0].request.notify_url);
      expect(payment.channelTradeId).toBe(fake.trade('ALIPAY', dto.orderNo)!.transactionId);
    },
  );
});

describe('expiry', () => {
  it('should close the trade at Alipay once the order expires, after which the buyer cannot pay it', async () => {
    const dto = order('QR');
    await create(dto);

    // The order's expiry comes: the close falls due now, as it does at expiresAt.
    await pool.query('UPDATE channel_payment SET close_due_at = ? WHERE order_no = ?', [
      new Date(Date.now() - 1000),
      dto.orderNo,
    ]);
    await eventually('the order closed', async () => (await effects.status(dto.orderNo)) === 'CLOSED', 20_000);

    expect(fake.tradeCallsFor(dto.orderNo, 'CLOSE').map((c) => c.answered)).toEqual(['CLOSED']);
    expect(fake.trade('ALIPAY', dto.orderNo)?.state).toBe('CLOSED');
    await expect(gateway.pay(dto.orderNo, app, false)).rejects.toThrow('CLOSED');
  });
});

describe('certificate mode', () => {
  let certFake: FakePlatform;
  let certCtx: MediumContext;
  let certApp: FakeAlipayApp;

  beforeAll(async () => {
    const set = await createAlipayCertKeySet(
      platforms.alipay.appId,
      platforms.alipay.sellerId,
      platforms.refunds.alipayAppKey.publicKeyPem,
    );
    const paths = writeAlipayCertFiles(mkdtempSync(join(tmpdir(), 'pcs-alipay-create-')), platforms.alipay.appId, set);
    certApp = {
      ...app,
      alipayPrivateKey: set.alipayKey.privateKey,
      certMode: { appCertSn: set.appCert.sn, rootCertSn: set.rootCertSn, alipayCertSn: set.alipayCert.sn },
    };
    certFake = await FakePlatform.start({ ...fakePlatformOptions(platforms), alipay: certApp });
    const { ALIPAY_PUBLIC_KEY_PATH: _publicKeyMode, ...env } = platforms.env;
    certCtx = await setup.another(
      () => ({
        ...env,
        ...certFake.apiEnv,
        ...ENV,
        ALIPAY_PUBLIC_CERT_PATHS: paths.publicCertPath,
        ALIPAY_ROOT_CERT_PATH: paths.rootCertPath,
        ALIPAY_APP_CERT_PATH: paths.appCertPath,
        SPOOL_DIR: mkdtempSync(join(tmpdir(), 'pcs-alipay-create-spool-')),
      }),
      [OrderModule, SettlementModule, NotifyModule],
    );
  });

  afterAll(async () => {
    await certCtx?.close();
    await certFake?.close();
  });

  it('should sign the app pay orderStr with app_cert_sn and alipay_root_cert_sn', async () => {
    const dto = order('APP');

    const { payment } = await create(dto, certCtx);

    const fields = Object.fromEntries(
      new URLSearchParams((JSON.parse(payment.buyer!) as { params: { orderStr: string } }).params.orderStr),
    );
    expect(fields).toMatchObject({
      app_cert_sn: certApp.certMode!.appCertSn,
      alipay_root_cert_sn: certApp.certMode!.rootCertSn,
    });
    expect(appSignatureHolds(fields)).toBe(true);
  });

  it('should precreate with the certificate SNs, verify the answer by its alipay_cert_sn, and settle the payment', async () => {
    const dto = order('QR');

    const { payment } = await create(dto, certCtx);

    const [call] = certFake.createCallsFor(dto.orderNo, 'ALIPAY');
    expect(call.request).toMatchObject({
      app_cert_sn: certApp.certMode!.appCertSn,
      alipay_root_cert_sn: certApp.certMode!.rootCertSn,
    });
    expect(payment.state).toBe('CREATED');
    const paid = await certFake.alipayPayments.pay(dto.orderNo, certApp, false);
    const reply = await receive(certCtx, 'alipay', { 'content-type': FORM }, paid.notification);
    expect(reply.body).toBe('success');
    expect(await effects.status(dto.orderNo)).toBe('PAID');
  });
});
