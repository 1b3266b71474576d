import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeAlipayApp } from '../tools/simulator/fake-platform';
import { FakeUnionpayGateway } from '../tools/simulator/unionpay/fake-unionpay-gateway';
import { generateUnionpayKeySet, writeUnionpayKeySet } from '../tools/simulator/unionpay/unionpay-keys';
import { FakePlatformSuite, startFakePlatformSuite } from './support/fake-platform-suite';
import { OrderEffects } from './support/order-effects';
import { count, fakePlatformOptions, RunningApp, TestClient, uniqueId } from './support/test-app';

/**
 * POST /payment-orders with `method` for Alipay and UnionPay as a shop calls it, against the fake Alipay gateway
 * and a fake UnionPay gateway: the answer's buyer parameters, a refusal's 422 and no answer's 503, and the buyer
 * then paying at the fake's cashier, whose signed notification reaches the notify route. What the use case and
 * the adapters do (terms, signatures, retries, expiry) is in test/medium/alipay-create-payment.medium-spec.ts and
 * test/medium/unionpay-create-payment.medium-spec.ts.
 */
const MER_ID = '777290058167153';
const PUBLIC_BASE_URL = 'https://pay.example.com';
const FORM = 'application/x-www-form-urlencoded; charset=utf-8';

let suite: FakePlatformSuite;
let unionpay: FakeUnionpayGateway;
let app: RunningApp;
let client: TestClient;
let effects: OrderEffects;

beforeAll(async () => {
  suite = await startFakePlatformSuite({ hangMs: 1500 });
  const keys = generateUnionpayKeySet();
  const unionpayEnv = writeUnionpayKeySet(keys, mkdtempSync(join(tmpdir(), 'pcs-create-e2e-')), MER_ID);
  unionpay = await FakeUnionpayGateway.start({
    merchants: [{ merId: MER_ID, certificatePem: keys.merchant.pem }],
    signer: keys.unionpaySigner,
  });
  app = await suite.startApp({
    ...suite.env,
    ...unionpayEnv,
    ...unionpay.apiEnv,
    UNIONPAY_VALIDATE_CN: 'true',
    PUBLIC_BASE_URL,
    PAYMENT_QUERY_SCHEDULE_SECONDS: '3600',
    REFUND_REQUEST_TIMEOUT_MS: '1000',
  });
  client = suite.clientOf(app);
  effects = new OrderEffects(suite.pool);
});

afterAll(async () => {
  await suite?.close();
  await unionpay?.close();
});

const order = (fields: Record<string, unknown>) => ({
  orderNo: uniqueId('PCX'),
  userId: 'u-1',
  amount: 1999,
  currency: 'CNY',
  description: 'A coffee',
  ...fields,
});

const post = (body: unknown) => client.api('POST', '/payment-orders', body);

interface Created {
  payment: { method: string; state: string; buyer: { params: Record<string, string>; form?: { action: string } } };
}

/** The platform's notification, posted to the path of the notify URL the service gave the channel. */
async function notify(notifyUrl: string, body: string): Promise<Response> {
  return fetch(app.url + new URL(notifyUrl).pathname, { method: 'POST', headers: { 'content-type': FORM }, body });
}

async function expectPaidOnce(orderNo: string): Promise<void> {
  expect(await effects.status(orderNo)).toBe('PAID');
  expect(await count(suite.pool, 'SELECT COUNT(*) FROM payment_callback WHERE order_no = ?', [orderNo])).toBe(1);
  expect(await count(suite.pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no = ?', [orderNo])).toBe(1);
}

describe('Alipay', () => {
  it('should answer 201 with the qr_code, and settle once the payment the buyer makes by scanning it', async () => {
    const body = order({ channel: 'ALIPAY', method: 'QR' });

    const created = await post(body);

    expect(created.status).toBe(201);
    const { payment } = created.json<Created>();
    expect(payment).toMatchObject({
      method: 'QR',
      state: 'CREATED',
      buyer: { params: { qr_code: expect.any(String) } },
    });
    const scanned = await fetch(payment.buyer.params.qr_code);
    expect(await scanned.json()).toMatchObject({ outTradeNo: body.orderNo, amount: 1999 });
    const alipay = fakePlatformOptions(suite.platforms).alipay as FakeAlipayApp;
    const paid = await suite.fake.alipayPayments.pay(body.orderNo, alipay, false);
    expect(paid.notifyUrl).toBe(`${PUBLIC_BASE_URL}/notify/alipay`);
    const acks = [await notify(paid.notifyUrl!, paid.notification), await notify(paid.notifyUrl!, paid.notification)];
    expect(await Promise.all(acks.map((a) => a.text()))).toEqual(['success', 'success']);
    await expectPaidOnce(body.orderNo);
  });

  it("should answer 201 with page pay's form for the browser", async () => {
    const body = order({ channel: 'ALIPAY', method: 'PAGE', payer: { returnUrl: 'https://shop.example.com/paid' } });

    const created = await post(body);

    expect(created.status).toBe(201);
    expect(created.json<Created>().payment.buyer).toMatchObject({
      params: {
        method: 'alipay.trade.page.pay',
        return_url: 'https://shop.example.com/paid',
        sign: expect.any(String),
      },
      form: { action: `${suite.fake.alipayGatewayUrl}?charset=utf-8`, method: 'POST' },
    });
  });

  it("should answer 422 with Alipay's code to a refusal, and 400 to a mini-program payment without its buyer", async () => {
    const refused = order({ channel: 'ALIPAY', method: 'QR' });
    suite.fake.scriptCreate(refused.orderNo, { reject: 'ACQ.ACCESS_FORBIDDEN', message: '无权限使用接口' });
    const withoutBuyer = order({ channel: 'ALIPAY', method: 'MINI_PROGRAM' });

    const answers = [await post(refused), await post(withoutBuyer)];

    expect(answers[0].status).toBe(422);
    expect(answers[0].json()).toMatchObject({
      error: 'ChannelRefused',
      channelCode: 'ACQ.ACCESS_FORBIDDEN',
      channelMessage: '无权限使用接口',
    });
    expect(answers[1].status).toBe(400);
    expect(answers[1].json<{ message: string }>().message).toMatch(/MINI_PROGRAM needs payer.buyerId/);
    expect(await effects.order(withoutBuyer.orderNo)).toBeUndefined();
  });
});

describe('UnionPay', () => {
  it('should answer 201 with the consumption form, and settle once the payment the buyer makes by posting it', async () => {
    const body = order({ channel: 'UNIONPAY', method: 'PAGE', payer: { returnUrl: 'https://shop.example.com/paid' } });

    const created = await post(body);

    expect(created.status).toBe(201);
    const { buyer } = created.json<Created>().payment;
    expect(buyer.form).toEqual({ action: `${unionpay.url}/gateway/api/frontTransReq.do`, method: 'POST' });
    expect(created.json()).toMatchObject({ channelOrderTime: buyer.params.txnTime });
    const posted = await fetch(buyer.form!.action, {
      method: 'POST',
      headers: { 'content-type': FORM },
      body: new URLSearchParams(buyer.params).toString(),
    });
    expect(posted.status).toBe(200);
    const paid = await unionpay.pay(MER_ID, body.orderNo, false);
    expect(paid.backUrl).toBe(`${PUBLIC_BASE_URL}/notify/unionpay`);
    const acks = [await notify(paid.backUrl, paid.notification), await notify(paid.backUrl, paid.notification)];
    expect(acks.map((a) => a.status)).toEqual([200, 200]);
    await expectPaidOnce(body.orderNo);
  });

  it("should answer 201 with the app's tn, and 503 when UnionPay gives no answer", async () => {
    const unanswered = order({ channel: 'UNIONPAY', method: 'APP' });
    unionpay.consumeBehaviours.push('timeout');
    const answered = order({ channel: 'UNIONPAY', method: 'APP' });

    const answers = [await post(unanswered), await post(answered)];

    expect(answers.map((a) => a.status)).toEqual([503, 201]);
    expect(answers[0].json()).toMatchObject({ error: 'ChannelUnavailable' });
    expect(answers[1].json<Created>().payment.buyer).toEqual({
      params: { tn: unionpay.consumptions.get(`${MER_ID} ${answered.orderNo}`)!.tn },
    });
  });
});
