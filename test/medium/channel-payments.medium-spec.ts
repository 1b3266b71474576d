import { verify } from 'node:crypto';
import { Pool } from 'mysql2/promise';
import { Channel } from '../../src/domain/notification';
import { DeliveryOutcome } from '../../src/settlement/settlement.service';
import { ChannelPayments } from '../../src/order/channel-payments';
import { CreatePaymentOrderDto } from '../../src/order/dto/create-payment-order.dto';
import { OrderModule } from '../../src/order/order.module';
import { SettlementModule } from '../../src/settlement/settlement.module';
import { TradeModule } from '../../src/trade/trade.module';
import { FakePlatform } from '../../tools/simulator/fake-platform';
import { eventually } from '../support/eventually';
import { Factories } from '../support/factories';
import { domainFailure, Medium, MediumContext, startMedium } from '../support/medium';
import { OrderEffects } from '../support/order-effects';
import { count, TestPlatforms, uniqueId } from '../support/test-app';

/**
 * Creating the payment at WeChat Pay (APIv3, direct merchant) as POST /payment-orders with `method`
 * does, against the fake platform, which verifies the merchant's request signature and signs its
 * answers: the request it receives is the order's, the buyer's parameters are signed with the
 * merchant's key, one create call per order however many requests race, a refusal and a lost
 * answer are told apart, and an expired order is closed at the channel.
 */
let setup: Medium;
let platforms: TestPlatforms;
let fake: FakePlatform;
let ctx: MediumContext;
let make: Factories;
let pool: Pool;
let effects: OrderEffects;

const PUBLIC_BASE_URL = 'https://pay.example.com';
const ENV = {
  PUBLIC_BASE_URL,
  PAYMENT_QUERY_SCHEDULE_SECONDS: '3600',
  PAYMENT_QUERY_POLL_INTERVAL_MS: '100',
  REFUND_REQUEST_TIMEOUT_MS: '1000',
};

beforeAll(async () => {
  setup = await startMedium(ENV, {
    imports: [OrderModule, SettlementModule, TradeModule],
    fake: { hangMs: 1500 },
    // The expiry worker closes every expired order of its database: another suite's would close this one's.
    ownDatabase: true,
  });
  ({ platforms, fake, ctx, make, pool } = setup);
  effects = new OrderEffects(pool);
});

afterAll(() => setup?.close());

const OPENID = 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o';

function jsapi(fields: Partial<CreatePaymentOrderDto> = {}): CreatePaymentOrderDto {
  return {
    orderNo: uniqueId('CP'),
    userId: 'u-1',
    amount: 2599,
    currency: 'CNY',
    channel: Channel.Wechatpay,
    method: 'JSAPI',
    description: 'Two coffees',
    payer: { openid: OPENID },
    ...fields,
  };
}

const create = (dto: CreatePaymentOrderDto) => ctx.inContext(() => ctx.get(ChannelPayments).create(dto));

const rows = (orderNo: string) => count(pool, 'SELECT COUNT(*) FROM channel_payment WHERE order_no = ?', [orderNo]);

/** What wx.requestPayment is given: paySign is the merchant's signature of appId, timeStamp, nonceStr, package. */
function paySignHolds(params: Record<string, string>): boolean {
  const message = `${params.appId}\n${params.timeStamp}\n${params.nonceStr}\n${params.package}\n`;
  return verify(
    'sha256',
    Buffer.from(message, 'utf8'),
    platforms.refunds.merchantKey.publicKeyPem,
    Buffer.from(params.paySign, 'base64'),
  );
}

function beijing(at: Date): string {
  return `${new Date(at.getTime() + 8 * 3600_000).toISOString().slice(0, 19)}+08:00`;
}

describe('a JSAPI payment created at WeChat Pay', () => {
  it("should send the order's own terms, signed, and answer wx.requestPayment's parameters signed with the merchant's key", async () => {
    const expiresAt = new Date(Math.floor(Date.now() / 1000) * 1000 + 20 * 60_000);
    const dto = jsapi({ expiresAt: expiresAt.toISOString() });

    const { order, payment, created } = await create(dto);

    expect(created).toBe(true);
    expect(order).toMatchObject({ status: 'WAIT_PAY', channel: 'WECHATPAY', merchantId: platforms.wechatpay.mchid });
    expect(fake.refusedRequests).toEqual([]);
    const [call] = fake.createCallsFor(dto.orderNo);
    expect(call).toMatchObject({ tradeType: 'jsapi', amount: 2599, currency: 'CNY', answered: 'created' });
    expect(call.request).toEqual({
      appid: platforms.wechatpay.appid,
      mchid: platforms.wechatpay.mchid,
      description: 'Two coffees',
      out_trade_no: dto.orderNo,
      time_expire: beijing(expiresAt),
      notify_url: `${PUBLIC_BASE_URL}/notify/wechatpay`,
      amount: { total: 2599, currency: 'CNY' },
      payer: { openid: OPENID },
    });
    const buyer = JSON.parse(payment.buyer!) as { params: Record<string, string> };
    expect(buyer.params).toEqual({
      appId: platforms.wechatpay.appid,
      timeStamp: expect.stringMatching(/^\d{10}$/),
      nonceStr: expect.any(String),
      package: `prepay_id=${payment.channelTradeId}`,
      signType: 'RSA',
      paySign: expect.any(String),
    });
    expect(paySignHolds(buyer.params)).toBe(true);
    expect(paySignHolds({ ...buyer.params, package: 'prepay_id=wx0' })).toBe(false);
    expect(payment.expiresAt).toEqual(expiresAt);
    expect(payment.validUntil!.getTime()).toBeLessThanOrEqual(expiresAt.getTime());
  });

  it('should answer the same parameters to the same request again, without a second call', async () => {
    const dto = jsapi();
    const first = await create(dto);
    const again = await create(dto);

    expect(again.created).toBe(false);
    expect(again.payment.buyer).toBe(first.payment.buyer);
    expect(fake.createCallsFor(dto.orderNo)).toHaveLength(1);
  });

  it('should make one create call at the platform for 10 concurrent identical requests, all answered alike', async () => {
    const dto = jsapi();
    fake.scriptCreate(dto.orderNo, 'answer');

    const answers = await Promise.all(Array.from({ length: 10 }, () => create(dto)));

    expect(fake.createCallsFor(dto.orderNo)).toHaveLength(1);
    expect(await rows(dto.orderNo)).toBe(1);
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_order WHERE order_no = ?', [dto.orderNo])).toBe(1);
    expect(new Set(answers.map((a) => a.payment.buyer)).size).toBe(1);
    expect(answers.filter((a) => a.created)).toHaveLength(1);
  });

  it('should refuse (409) another body under the same order number, calling nothing more', async () => {
    const dto = jsapi();
    await create(dto);

    const other = await domainFailure(create({ ...dto, description: 'Three coffees' }));

    expect(other).toMatchObject({ code: 'OrderConflict', status: 409 });
    expect(fake.createCallsFor(dto.orderNo)).toHaveLength(1);
  });

  it('should refuse (400) a JSAPI payment without the openid, writing and calling nothing', async () => {
    const dto = jsapi({ payer: {} });

    const refused = await domainFailure(create(dto));

    expect(refused).toMatchObject({
      code: 'MalformedRequest',
      status: 400,
      message: 'method JSAPI needs payer.openid',
    });
    expect(await effects.order(dto.orderNo)).toBeUndefined();
    expect(fake.createCallsFor(dto.orderNo)).toHaveLength(0);
  });
});

describe('a create call WeChat Pay refuses or leaves unanswered', () => {
  it("should answer 422 with the channel's code and message, and the same again without calling", async () => {
    const dto = jsapi();
    fake.scriptCreate(dto.orderNo, { reject: 'PARAM_ERROR', message: 'openid与appid不匹配' });

    const refused = await domainFailure(create(dto));
    const again = await domainFailure(create(dto));

    expect(refused).toMatchObject({ code: 'ChannelRefused', status: 422 });
    expect(refused.message).toContain('PARAM_ERROR openid与appid不匹配');
    expect(again).toEqual(refused);
    expect(fake.createCallsFor(dto.orderNo)).toHaveLength(1);
  });

  it('should answer 503 to a lost answer, then create nothing new on retry: the same terms, the same trade', async () => {
    const dto = jsapi();
    fake.scriptCreate(dto.orderNo, 'answer-lost');

    const lost = await domainFailure(create(dto));
    const retried = await create(dto);

    expect(lost).toMatchObject({ code: 'ChannelUnavailable', status: 503 });
    expect(retried.payment.state).toBe('CREATED');
    const calls = fake.createCallsFor(dto.orderNo);
    expect(calls.map((c) => c.answered)).toEqual(['answer-lost', 'created']);
    expect(calls[1].request).toEqual(calls[0].request);
    expect(fake.trade('WECHATPAY', dto.orderNo)).toMatchObject({ state: 'UNPAID', amount: 2599 });
  });

  it('should answer 503 to a timeout and create the payment on the retry', async () => {
    const dto = jsapi();
    fake.scriptCreate(dto.orderNo, 'timeout');

    expect(await domainFailure(create(dto))).toMatchObject({ code: 'ChannelUnavailable', status: 503 });
    const retried = await create(dto);

    expect(retried.payment).toMatchObject({ state: 'CREATED', attempts: 2 });
    expect(fake.createCallsFor(dto.orderNo).map((c) => c.answered)).toEqual(['timeout', 'created']);
  });
});

describe('the other WeChat Pay methods', () => {
  it("should answer Native's code_url", async () => {
    const dto = jsapi({ method: 'NATIVE', payer: undefined });
    const { payment } = await create(dto);

    expect(JSON.parse(payment.buyer!)).toEqual({ params: { code_url: expect.stringMatching(/^weixin:\/\/wxpay\//) } });
    expect(fake.createCallsFor(dto.orderNo)[0]).toMatchObject({ tradeType: 'native' });
    expect(fake.createCallsFor(dto.orderNo)[0].request).not.toHaveProperty('payer');
  });

  it("should send H5's scene and answer its h5_url, valid 5 minutes", async () => {
    const dto = jsapi({ method: 'H5', payer: { clientIp: '203.0.113.7', h5Type: 'iOS' } });
    const { payment } = await create(dto);
    const answeredAt = Date.now();

    expect(JSON.parse(payment.buyer!)).toEqual({ params: { h5_url: expect.stringMatching(/^https:\/\//) } });
    expect(fake.createCallsFor(dto.orderNo)[0].request.scene_info).toEqual({
      payer_client_ip: '203.0.113.7',
      h5_info: { type: 'iOS' },
    });
    // 5 minutes from a moment of the call, whatever it took: not a prepay_id's 2 hours.
    expect(payment.validUntil!.getTime()).toBeLessThanOrEqual(answeredAt + 5 * 60_000);
  });

  it("should answer App's parameters, signed with the merchant's key", async () => {
    const dto = jsapi({ method: 'APP', payer: undefined });
    const { payment } = await create(dto);

    const { params } = JSON.parse(payment.buyer!) as { params: Record<string, string> };
    expect(params).toMatchObject({
      appid: platforms.wechatpay.appid,
      partnerid: platforms.wechatpay.mchid,
      prepayid: payment.channelTradeId,
      package: 'Sign=WXPay',
    });
    const message = `${params.appid}\n${params.timestamp}\n${params.noncestr}\n${params.prepayid}\n`;
    expect(
      verify(
        'sha256',
        Buffer.from(message),
        platforms.refunds.merchantKey.publicKeyPem,
        Buffer.from(params.sign, 'base64'),
      ),
    ).toBe(true);
  });
});

describe('a payment created here, then', () => {
  it('should be paid by its notification and settled once', async () => {
    const dto = jsapi();
    await create(dto);
    const transactionId = uniqueId('T');

    const outcomes = await Promise.all(
      [1, 2].map(() => make.payment(Channel.Wechatpay, { orderNo: dto.orderNo, transactionId, amount: 2599 })),
    );

    expect(outcomes.sort()).toEqual([DeliveryOutcome.Duplicate, DeliveryOutcome.Paid].sort());
    expect(await effects.status(dto.orderNo)).toBe('PAID');
    expect(await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no = ?', [dto.orderNo])).toBe(1);
  });

  it('should be closed at the channel, then here, once its expiry has passed', async () => {
    const dto = jsapi();
    await create(dto);
    // Its expiry reached: the row as it will be once time_expire has passed.
    await pool.query(
      'UPDATE channel_payment SET expires_at = NOW(3), valid_until = NOW(3), close_due_at = NOW(3) WHERE order_no = ?',
      [dto.orderNo],
    );

    await eventually('the expired order closed', async () => (await effects.status(dto.orderNo)) === 'CLOSED');

    expect(fake.tradeCallsFor(dto.orderNo, 'CLOSE')).toEqual([
      expect.objectContaining({ merchantId: platforms.wechatpay.mchid, answered: 'CLOSED' }),
    ]);
    expect(fake.trade('WECHATPAY', dto.orderNo)?.state).toBe('CLOSED');
    await eventually(
      'nothing more to close',
      async () =>
        (await count(pool, 'SELECT COUNT(*) FROM channel_payment WHERE order_no = ? AND close_due_at IS NULL', [
          dto.orderNo,
        ])) === 1,
    );
    expect(await domainFailure(create(dto))).toMatchObject({ code: 'OrderConflict', status: 409 });
  });
});
