import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'mysql2/promise';
import { NotifyModule } from '../../src/intake/notify.module';
import { OrderModule } from '../../src/order/order.module';
import { PaymentOrderService } from '../../src/order/payment-order.service';
import { CreatePaymentOrderDto } from '../../src/order/dto/create-payment-order.dto';
import { randomAlphanumeric } from '../../tools/simulator/platform-signers';
import {
  generateUnionpayKeySet,
  UnionpayKeySet,
  writeUnionpayKeySet,
} from '../../tools/simulator/unionpay/unionpay-keys';
import {
  newQueryId,
  signUnionpay,
  txnTime,
  unionpayConsumeFields,
  unionpayForm,
} from '../../tools/simulator/unionpay/unionpay-signer';
import { v2PaymentNotification } from '../../tools/simulator/wechatpay/v2/v2-notifications';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { FORM_CONTENT_TYPE, Intake } from '../support/medium-notify';
import { count, SignedDeliveries, TestPlatforms, uniqueId } from '../support/test-app';

/**
 * A captured delivery re-posted, re-encoded or not, is never a new delivery row,
 * in every dialect; a UnionPay or APIv2 notification far older than its platform ever retries, or
 * dated ahead of our clock, is refused. Every dialect enabled (WeChat Pay APIv3 and APIv2, Alipay,
 * UnionPay), through the notify route's use case.
 */
const MER_ID = '777290058167151';
const API_V2_KEY = randomAlphanumeric(32);
const DAY_MS = 24 * 3600 * 1000;

let setup: Medium;
let platforms: TestPlatforms;
let signed: SignedDeliveries;
let unionpayKeys: UnionpayKeySet;
let ctx: MediumContext;
let intake: Intake;
let pool: Pool;

beforeAll(async () => {
  unionpayKeys = generateUnionpayKeySet();
  const unionpayEnv = writeUnionpayKeySet(unionpayKeys, mkdtempSync(join(tmpdir(), 'pcs-replay-')), MER_ID);
  setup = await startMedium(
    {
      ...unionpayEnv,
      UNIONPAY_BACK_URL: 'https://pay.example.com/notify/unionpay',
      UNIONPAY_VALIDATE_CN: 'true',
      WECHATPAY_APIV2_KEY: API_V2_KEY,
    },
    { imports: [OrderModule, NotifyModule], fake: false },
  );
  ({ platforms, ctx, pool } = setup);
  signed = new SignedDeliveries(platforms);
  intake = new Intake(ctx);
});

afterAll(() => setup?.close());

function deliveryRows(orderNo: string): Promise<number> {
  return count(pool, 'SELECT COUNT(*) FROM callback_delivery WHERE order_no = ?', [orderNo]);
}

async function registered(amount: number, extra: Partial<CreatePaymentOrderDto> = {}): Promise<string> {
  const orderNo = uniqueId('RB');
  const { created } = await ctx.inContext(() =>
    ctx.get(PaymentOrderService).register({ orderNo, userId: 'u-1', amount, currency: 'CNY', ...extra }),
  );
  expect(created).toBe(true);
  return orderNo;
}

/** The same base64 text written another way: each still decodes, leniently, to the same bytes. */
function reencodings(base64: string): string[] {
  const urlSafe = base64.replace(/\+/g, '-').replace(/\//g, '_');
  const unpadded = base64.replace(/=+$/, '');
  const spaced = `${base64.slice(0, 40)} ${base64.slice(40, 200)}\t${base64.slice(200)}`;
  return [urlSafe, unpadded, spaced, urlSafe.replace(/=+$/, ''), ` ${base64}`, `${base64}\n`.trimEnd() + ' '];
}

describe('replays, whatever their encoding', () => {
  it('should store one row for an APIv3 delivery re-posted with its signature re-encoded', async () => {
    const orderNo = await registered(1234);
    const sending = signed.wechatpayPayment({ outTradeNo: orderNo, transactionId: uniqueId('T'), total: 1234 });
    expect((await intake.wechatpay(sending)).status).toBe(204);

    for (const signature of reencodings(sending.headers['wechatpay-signature'])) {
      const answer = await intake.wechatpay({
        headers: { ...sending.headers, 'wechatpay-signature': signature },
        body: sending.body,
      });
      expect(answer.status).not.toBeGreaterThanOrEqual(500);
    }

    expect(await deliveryRows(orderNo)).toBe(1);
  });

  it('should store one row for an Alipay delivery re-posted with its sign re-encoded', async () => {
    const orderNo = await registered(8888);
    const form = signed.alipayPayment({ outTradeNo: orderNo, tradeNo: uniqueId('T'), totalAmount: '88.88' });
    expect((await intake.alipay(form)).body).toBe('success');
    const sign = new URLSearchParams(form).get('sign') ?? '';

    for (const variant of reencodings(sign)) {
      const params = new URLSearchParams(form);
      params.set('sign', variant);
      const answer = await intake.alipay(params.toString());
      expect(answer.status).not.toBeGreaterThanOrEqual(500);
    }

    expect(await deliveryRows(orderNo)).toBe(1);
  });
});

describe('UnionPay replays and freshness', () => {
  function consumeForm(orderNo: string, amount: number, at: string): string {
    const fields = unionpayConsumeFields({
      merId: MER_ID,
      orderId: orderNo,
      queryId: newQueryId(),
      txnAmt: amount,
      txnTime: at,
    });
    return unionpayForm(signUnionpay(fields, unionpayKeys.unionpaySigner));
  }
  const unionpay = (form: string) =>
    intake.receive('unionpay', { headers: { 'content-type': FORM_CONTENT_TYPE }, body: form });

  it('should store one delivery row for an identical UnionPay repost', async () => {
    const at = txnTime();
    const orderNo = await registered(500, { channel: 'UNIONPAY', merchantId: MER_ID, channelOrderTime: at });
    const form = consumeForm(orderNo, 500, at);

    for (let i = 0; i < 3; i++) expect((await unionpay(form)).body).toBe('ok');

    expect(await deliveryRows(orderNo)).toBe(1);
    expect(
      await count(pool, "SELECT COUNT(*) FROM payment_order WHERE order_no = ? AND status = 'PAID'", [orderNo]),
    ).toBe(1);
  });

  it('should refuse a UnionPay payment whose txnTime is 400 days old, paying nothing', async () => {
    const at = txnTime(new Date(Date.now() - 400 * DAY_MS));
    const orderNo = await registered(600);
    const answer = await unionpay(consumeForm(orderNo, 600, at));

    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
    expect(await deliveryRows(orderNo)).toBe(0);
    expect(
      await count(pool, "SELECT COUNT(*) FROM payment_order WHERE order_no = ? AND status = 'WAIT_PAY'", [orderNo]),
    ).toBe(1);
  });
});

describe('WeChat Pay APIv2 replays', () => {
  const v2 = (xml: string) => intake.receive('wechatpay-v2', { headers: { 'content-type': 'text/xml' }, body: xml });

  it('should store one delivery row for an identical APIv2 repost', async () => {
    const orderNo = await registered(700);
    const { mchid, appid } = platforms.wechatpay;
    const xml = v2PaymentNotification(
      { mchid, appid, outTradeNo: orderNo, transactionId: uniqueId('T'), totalFee: 700, paidAt: new Date() },
      API_V2_KEY,
    );

    for (let i = 0; i < 3; i++) expect((await v2(xml)).status).toBe(200);

    expect(await deliveryRows(orderNo)).toBe(1);
  });

  it.each([
    ['27 hours old', -27 * 3600_000],
    ['10 minutes ahead of our clock', 10 * 60_000],
  ])('should refuse a signed APIv2 payment whose time_end is %s, paying nothing', async (_when, offsetMs) => {
    const orderNo = await registered(800);
    const { mchid, appid } = platforms.wechatpay;
    const paidAt = new Date(Date.now() + offsetMs);
    const xml = v2PaymentNotification(
      { mchid, appid, outTradeNo: orderNo, transactionId: uniqueId('T'), totalFee: 800, paidAt },
      API_V2_KEY,
    );

    const answer = await v2(xml);

    expect(answer.status).toBe(401);
    expect(answer.body).toContain('<return_code><![CDATA[FAIL]]></return_code>');
    expect(answer.body).toContain('time_end');
    expect(await deliveryRows(orderNo)).toBe(0);
    expect(
      await count(pool, "SELECT COUNT(*) FROM payment_order WHERE order_no = ? AND status = 'WAIT_PAY'", [orderNo]),
    ).toBe(1);
  });
});
