import { verify } from 'node:crypto';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { AdminModule } from '../../src/admin/admin.module';
import { billDateOf, billDayRange, shiftBillDate } from '../../src/domain/bill';
import { NotifyModule } from '../../src/intake/notify.module';
import { ChannelPayments } from '../../src/order/channel-payments';
import { CreatePaymentOrderDto } from '../../src/order/dto/create-payment-order.dto';
import { OrderModule } from '../../src/order/order.module';
import { PaymentOrderService } from '../../src/order/payment-order.service';
import { ReconciliationModule } from '../../src/reconciliation/reconciliation.module';
import { ReconciliationService } from '../../src/reconciliation/reconciliation.service';
import { ReconciliationViews } from '../../src/reconciliation/reconciliation-views.queries';
import { Refunds } from '../../src/refund/refunds';
import { TradeCloseService } from '../../src/trade/trade-close.service';
import { FakePlatform } from '../../tools/simulator/fake-platform';
import { generateRsaKeyPair, wechatpayDelivery, WechatpaySigner } from '../../tools/simulator/platform-signers';
import { wechatpayPartnerTransaction } from '../../tools/simulator/wechatpay/partner-resources';
import { BillRowSpec, beijingTime, wechatpayBill, wechatpayBillLine } from '../support/bill-files';
import { eventually } from '../support/eventually';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { failure, receive, Reply } from '../support/medium-dialects';
import { createWechatpayAccount, WechatpayTestAccount } from '../support/merchant-accounts';
import { OrderEffects } from '../support/order-effects';
import { inParallel, paymentEffects } from '../support/payment-storm';
import { uniqueId } from '../support/test-app';

/**
 * WeChat Pay service-provider (partner) mode as services on the real database, without HTTP: one
 * provider account (WECHATPAY_MCHID is the sp_mchid) collecting for two configured sub-merchants
 * (WECHATPAY_SUB_MCHIDS). Its notifications name sp_mchid, sp_appid, sub_mchid and sub_appid and go
 * to the notify route's use case; its refunds, refund queries, trade queries and closes go through
 * the partner APIs of the fake platform, which checks the provider's signature and the sub_mchid of
 * each. The order API's validation of a subMerchantId is in test/channel-acks.e2e-spec.ts.
 */
const SP_MCHID = '1230000109';
const SP_APPID = 'wx8888888888888888';
const SUB_A = '1900000109';
const SUB_B = '1900000110';
const NOT_OURS = '1900000999';

let setup: Medium;
let provider: WechatpayTestAccount;
let fake: FakePlatform;
let ctx: MediumContext;
let pool: Pool;
let effects: OrderEffects;

beforeAll(async () => {
  // The refund worker takes every due refund of its database: other suites' would come first.
  provider = createWechatpayAccount(SP_MCHID, [SP_APPID]);
  setup = await startMedium(
    (platforms, apiEnv) => ({
      ...Object.fromEntries(Object.entries(platforms.env).filter(([name]) => !name.startsWith('WECHATPAY_'))),
      ...apiEnv,
      WECHATPAY_MCHID: SP_MCHID,
      WECHATPAY_APPIDS: SP_APPID,
      WECHATPAY_SUB_MCHIDS: `${SUB_A},${SUB_B}`,
      WECHATPAY_APIV3_KEY: provider.apiV3Key,
      WECHATPAY_PUBLIC_KEY_ID: provider.signer.serial,
      WECHATPAY_PUBLIC_KEY_PATH: provider.publicKeyPath,
      WECHATPAY_MERCHANT_PRIVATE_KEY_PATH: provider.merchantPrivateKeyPath,
      WECHATPAY_MERCHANT_SERIAL_NO: provider.merchantSerialNo,
      PAYMENT_QUERY_SCHEDULE_SECONDS: '3600',
      PUBLIC_BASE_URL: 'https://pay.example.com',
      REFUND_REQUEST_TIMEOUT_MS: '1000',
      REFUND_RETRY_BASE_DELAY_MS: '300',
      REFUND_POLL_INTERVAL_MS: '100',
    }),
    {
      imports: [OrderModule, NotifyModule, AdminModule, ReconciliationModule],
      fake: {
        wechatpay: {
          mchid: provider.mchid,
          merchantSerialNo: provider.merchantSerialNo,
          merchantPublicKeyPem: provider.merchantKey.publicKeyPem,
          platformSigner: provider.signer,
          subMchids: [SUB_A, SUB_B],
        },
        hangMs: 1500,
      },
      ownDatabase: true,
    },
  );
  ({ fake, ctx, pool } = setup);
  effects = new OrderEffects(pool);
});

afterAll(() => setup?.close());

interface Payment {
  orderNo: string;
  transactionId: string;
  amount: number;
}

/** A partner TRANSACTION.SUCCESS, signed and encrypted with the provider's keys unless told otherwise. */
function partnerNotification(
  payment: Payment,
  names: { spMchid?: string; subMchid?: string; spAppid?: string; successTime?: Date } = {},
  signer: WechatpaySigner = provider.signer,
) {
  return wechatpayDelivery(signer, {
    resource: wechatpayPartnerTransaction({
      spMchid: names.spMchid ?? SP_MCHID,
      subMchid: names.subMchid ?? SUB_A,
      spAppid: names.spAppid ?? SP_APPID,
      subAppid: 'wxd678efh567hg6999',
      outTradeNo: payment.orderNo,
      transactionId: payment.transactionId,
      total: payment.amount,
      successTime: names.successTime,
    }),
  });
}

const post = (delivery: { headers: Record<string, string>; body: string }): Promise<Reply> =>
  receive(ctx, 'wechatpay', delivery.body, { 'content-type': 'application/json', ...delivery.headers });

async function newOrder(amount: number, extra: { subMerchantId?: string } = {}): Promise<Payment> {
  const orderNo = uniqueId('SP');
  await registerOrder(orderNo, amount, extra.subMerchantId ? { channel: 'WECHATPAY', ...extra } : {});
  return { orderNo, transactionId: uniqueId('42'), amount };
}

function registerOrder(orderNo: string, amount: number, extra: Partial<CreatePaymentOrderDto> = {}) {
  return ctx.inContext(() =>
    ctx.get(PaymentOrderService).register({ orderNo, userId: 'u-1', amount, currency: 'CNY', ...extra }),
  );
}

const closeOrder = (orderNo: string) => ctx.inContext(() => ctx.get(TradeCloseService).close(orderNo));

async function refundStatus(refundNo: string): Promise<unknown> {
  const [rows] = await pool.query<RowDataPacket[]>('SELECT status FROM refund WHERE refund_no = ?', [refundNo]);
  return rows[0]?.status;
}

async function emergencyRefund(payment: Payment, reason = 'customer complaint'): Promise<string> {
  const { refund, created } = await ctx
    .get(Refunds)
    .request({ orderNo: payment.orderNo, transactionId: payment.transactionId, reason }, 'alice');
  expect(created).toBe(true);
  return refund.refundNo;
}

describe('partner notifications', () => {
  it('should apply each payment exactly once, 8 concurrent deliveries each, keeping its sub-merchant', async () => {
    const payments = await Promise.all(
      Array.from({ length: 12 }, (_, i) => newOrder(100 + i, i % 3 === 0 ? { subMerchantId: SUB_A } : {})),
    );
    const storm = payments.map((p, i) => ({ ...p, channel: 'WECHATPAY' as const, index: i }));
    // The orders that name SUB_A are paid there; the others at SUB_A or SUB_B, which they then record.
    const paidAt = (i: number) => (i % 3 === 0 || i % 2 === 0 ? SUB_A : SUB_B);

    const answers: Reply[] = [];
    await inParallel(
      storm.flatMap((p) => Array.from({ length: 8 }, () => p)),
      24,
      async (p) => {
        answers.push(await post(partnerNotification(p, { subMchid: paidAt(p.index) })));
      },
    );

    expect(answers.filter((a) => a.status !== 204).map((a) => `${a.status} ${a.body}`)).toEqual([]);
    const counted = await paymentEffects(pool, storm);
    expect(counted).toMatchObject({
      paidOrders: 12,
      ordersNotExactlyOnce: [],
      paidTransitions: 12,
      outboxEvents: 12,
      callbacks: 12,
      deliveries: 96,
      paidDeliveries: 12,
      anomalies: 0,
    });
    const [rows] = await pool.query<RowDataPacket[]>(
      `SELECT o.order_no, o.merchant_id, o.sub_merchant_id AS order_sub, c.sub_merchant_id AS payment_sub
       FROM payment_order o JOIN payment_callback c ON c.order_no = o.order_no WHERE o.order_no IN (?)`,
      [storm.map((p) => p.orderNo)],
    );
    const byOrder = new Map(rows.map((r) => [r.order_no as string, r]));
    for (const p of storm) {
      expect({ ...byOrder.get(p.orderNo) }).toEqual({
        order_no: p.orderNo,
        merchant_id: SP_MCHID,
        order_sub: paidAt(p.index),
        payment_sub: paidAt(p.index),
      });
    }
    const view = await ctx.get(PaymentOrderService).get(storm[1].orderNo);
    expect(view).toMatchObject({ status: 'PAID', merchantId: SP_MCHID, subMerchantId: SUB_B });
  });

  it.each([
    [
      'signed with a key that is not the provider platform key',
      (p: Payment) => partnerNotification(p, {}, { ...provider.signer, privateKey: generateRsaKeyPair().privateKey }),
    ],
    [
      'with a byte of its body changed after signing',
      (p: Payment) => {
        const delivery = partnerNotification(p);
        return { ...delivery, body: delivery.body.replace('"summary":"支付成功"', '"summary":"支付失败"') };
      },
    ],
    ['for a sub-merchant that is not configured', (p: Payment) => partnerNotification(p, { subMchid: NOT_OURS })],
    ["for another provider's sp_mchid", (p: Payment) => partnerNotification(p, { spMchid: '1230000999' })],
    [
      'for an sp_appid that is not configured',
      (p: Payment) => partnerNotification(p, { spAppid: 'wx9999999999999999' }),
    ],
    [
      "shaped as a direct merchant's (mchid, appid)",
      (p: Payment) =>
        wechatpayDelivery(provider.signer, {
          resource: {
            mchid: SP_MCHID,
            appid: SP_APPID,
            out_trade_no: p.orderNo,
            transaction_id: p.transactionId,
            trade_state: 'SUCCESS',
            success_time: '2026-12-01T10:00:00+08:00',
            amount: { total: p.amount, currency: 'CNY' },
          },
        }),
    ],
  ])('should refuse with 401 a notification %s, and write nothing', async (_case, forge) => {
    const payment = await newOrder(4100);
    const before = await effects.everythingAbout(payment.orderNo);

    const answer = await post(forge(payment));

    expect(answer.status).toBe(401);
    expect(await effects.everythingAbout(payment.orderNo)).toEqual(before);
    expect(await effects.status(payment.orderNo)).toBe('WAIT_PAY');
    const [callbacks] = await pool.query<RowDataPacket[]>('SELECT id FROM payment_callback WHERE transaction_id = ?', [
      payment.transactionId,
    ]);
    expect(callbacks).toEqual([]);
  });

  it("should ack a payment of an order's sub-merchant made under another one as a MERCHANT_MISMATCH, leave the order, and refund it there", async () => {
    const payment = await newOrder(5200, { subMerchantId: SUB_A });

    const answer = await post(partnerNotification(payment, { subMchid: SUB_B }));

    expect(answer.status).toBe(204);
    expect(await effects.order(payment.orderNo)).toMatchObject({ status: 'WAIT_PAY', sub_merchant_id: SUB_A });
    expect((await effects.anomalies(payment.orderNo)).map((a) => [a.type, a.status, a.transaction_id])).toEqual([
      ['MERCHANT_MISMATCH', 'OPEN', payment.transactionId],
    ]);
    expect(await effects.payments(payment.orderNo)).toEqual([
      expect.objectContaining({ transaction_id: payment.transactionId, merchant_id: SP_MCHID, sub_merchant_id: SUB_B }),
    ]);

    const refundNo = await emergencyRefund(payment, 'paid at the wrong sub-merchant');
    await eventually(
      `refund ${refundNo} to succeed`,
      async () => (await refundStatus(refundNo)) === 'SUCCEEDED',
      15_000,
    );
    expect(fake.calls.filter((c) => c.refundNo === refundNo)).toEqual([
      expect.objectContaining({
        merchantId: SP_MCHID,
        subMerchantId: SUB_B,
        transactionId: payment.transactionId,
        amount: 5200,
      }),
    ]);
  });
});

describe('orders naming a sub-merchant', () => {
  it('should take and return a configured subMerchantId', async () => {
    const orderNo = uniqueId('SP');

    const { created } = await registerOrder(orderNo, 700, { channel: 'WECHATPAY', subMerchantId: SUB_B });

    expect(created).toBe(true);
    expect(await ctx.get(PaymentOrderService).get(orderNo)).toMatchObject({
      channel: 'WECHATPAY',
      subMerchantId: SUB_B,
    });
  });

  // A subMerchantId that is no id at all ('1900 0001') is refused by the order API's request validation (e2e).
  it.each([
    [{ channel: 'WECHATPAY', subMerchantId: NOT_OURS }, `subMerchantId ${NOT_OURS} is not a sub-merchant of WECHATPAY`],
    [{ subMerchantId: SUB_A }, 'subMerchantId needs channel'],
    [{ channel: 'ALIPAY', subMerchantId: SUB_A }, `subMerchantId ${SUB_A} is not a sub-merchant of ALIPAY`],
  ] as Array<[Partial<CreatePaymentOrderDto>, string]>)(
    'should refuse %j with 400 and write nothing',
    async (extra, message) => {
      const orderNo = uniqueId('SP');

      const refused = await failure(registerOrder(orderNo, 700, extra));

      expect(refused.status).toBe(400);
      expect(refused.message).toContain(message);
      expect(await effects.everythingAbout(orderNo)).toMatchObject({ payment_order: 0, order_status_change: 0 });
    },
  );
});

describe('partner API calls', () => {
  it("should refund through the partner refund API with the payment's sub_mchid, and query it there", async () => {
    const payment = await newOrder(6600);
    expect((await post(partnerNotification(payment, { subMchid: SUB_B }))).status).toBe(204);
    fake.script('*', 'processing');

    const refundNo = await emergencyRefund(payment);
    await eventually(
      `refund ${refundNo} accepted`,
      async () => (await refundStatus(refundNo)) === 'PROCESSING',
      15_000,
    );
    fake.settle(refundNo, 'SUCCESS');
    await eventually(
      `refund ${refundNo} to succeed`,
      async () => (await refundStatus(refundNo)) === 'SUCCEEDED',
      15_000,
    );

    expect(fake.calls.filter((c) => c.refundNo === refundNo)).toEqual([
      expect.objectContaining({ merchantId: SP_MCHID, subMerchantId: SUB_B, amount: 6600, behaviour: 'processing' }),
    ]);
    const queries = fake.queries.filter((q) => q.refundNo === refundNo);
    expect(queries.length).toBeGreaterThan(0);
    expect(queries.every((q) => q.subMerchantId === SUB_B)).toBe(true);
    expect(queries.at(-1)?.answered).toBe('SUCCESS');
    expect(await effects.status(payment.orderNo)).toBe('REFUNDED');
  });

  it("should close an order at its own sub-merchant's partner close path only", async () => {
    const payment = await newOrder(3100, { subMerchantId: SUB_B });
    fake.openTrade({ channel: 'WECHATPAY', outTradeNo: payment.orderNo, amount: 3100, subMerchantId: SUB_B });

    const closed = await closeOrder(payment.orderNo);

    expect(closed.order.status).toBe('CLOSED');
    expect(closed.channelClose).toMatchObject([{ merchantId: SP_MCHID, outcome: 'CLOSED' }]);
    expect(
      fake.tradeCallsFor(payment.orderNo).map((c) => `${c.request} ${c.merchantId}/${c.subMerchantId} ${c.answered}`),
    ).toEqual([`CLOSE ${SP_MCHID}/${SUB_B} CLOSED`]);
    expect(fake.trade('WECHATPAY', payment.orderNo)?.state).toBe('CLOSED');
  });

  it('should find an order without a sub-merchant paid at one of them, by the partner close and query paths, and take the payment for it', async () => {
    const payment = await newOrder(3200);
    fake.payTrade({
      channel: 'WECHATPAY',
      outTradeNo: payment.orderNo,
      transactionId: payment.transactionId,
      amount: 3200,
      appid: SP_APPID,
      subMerchantId: SUB_B,
    });

    const closing = await failure(closeOrder(payment.orderNo));

    expect(closing.status).toBe(409);
    expect(await effects.order(payment.orderNo)).toMatchObject({ status: 'PAID', sub_merchant_id: SUB_B });
    expect(await effects.payments(payment.orderNo)).toEqual([
      expect.objectContaining({ transaction_id: payment.transactionId, merchant_id: SP_MCHID, sub_merchant_id: SUB_B }),
    ]);
    expect(fake.tradeCallsFor(payment.orderNo).map((c) => `${c.request} ${c.subMerchantId} ${c.answered}`)).toEqual([
      `CLOSE ${SUB_A} NOT_EXIST`,
      `CLOSE ${SUB_B} PAID`,
      `QUERY ${SUB_A} NOT_EXIST`,
      `QUERY ${SUB_B} SUCCESS`,
    ]);
  });

  it('should not take a trade another sub-merchant answers for an order of its own', async () => {
    const payment = await newOrder(3300, { subMerchantId: SUB_A });
    fake.payTrade({
      channel: 'WECHATPAY',
      outTradeNo: payment.orderNo,
      transactionId: payment.transactionId,
      amount: 3300,
      appid: SP_APPID,
      subMerchantId: SUB_B,
      answersAnyAccount: true,
    });

    const closing = await failure(closeOrder(payment.orderNo));

    // The answer is about SUB_B: FOREIGN to the order's SUB_A, so the close cannot be confirmed.
    expect(closing.status).toBe(503);
    expect(await effects.order(payment.orderNo)).toMatchObject({ status: 'WAIT_PAY', sub_merchant_id: SUB_A });
    expect(await effects.payments(payment.orderNo)).toEqual([]);
  });
});

/** A provider's trade bill of one sub-merchant: 商户号 the provider, 特约商户号 the sub-merchant on every line. */
function partnerBill(rows: BillRowSpec[], subMchid: string, otherLines: string[] = []): string {
  const lines = rows.map((row) => {
    const fields = wechatpayBillLine(row, SP_MCHID).split(',');
    fields[3] = `\`${subMchid}`;
    return fields.join(',');
  });
  return wechatpayBill([], SP_MCHID, [...lines, ...otherLines]);
}

describe('payments created for a sub-merchant', () => {
  const create = (fields: Partial<CreatePaymentOrderDto>) =>
    ctx.inContext(() =>
      ctx.get(ChannelPayments).create({
        orderNo: uniqueId('PP'),
        userId: 'u-1',
        amount: 4200,
        currency: 'CNY',
        channel: 'WECHATPAY',
        method: 'JSAPI',
        description: 'A sandwich',
        subMerchantId: SUB_A,
        payer: { openid: 'oSpOpenid0000000000000000001' },
        ...fields,
      }),
    );

  it("should create it through the partner path with sp_mchid, sub_mchid and sp_openid, and sign the buyer's parameters with the provider's key", async () => {
    const { order, payment } = await create({});

    const [call] = fake.createCallsFor(order.orderNo);
    expect(call).toMatchObject({ tradeType: 'jsapi', merchantId: SP_MCHID, subMerchantId: SUB_A, answered: 'created' });
    expect(call.request).toMatchObject({
      sp_appid: SP_APPID,
      sp_mchid: SP_MCHID,
      sub_mchid: SUB_A,
      notify_url: 'https://pay.example.com/notify/wechatpay',
      amount: { total: 4200, currency: 'CNY' },
      payer: { sp_openid: 'oSpOpenid0000000000000000001' },
    });
    expect(order).toMatchObject({ merchantId: SP_MCHID, subMerchantId: SUB_A });
    const { params } = JSON.parse(payment.buyer!) as { params: Record<string, string> };
    const message = `${params.appId}\n${params.timeStamp}\n${params.nonceStr}\n${params.package}\n`;
    expect(params.appId).toBe(SP_APPID);
    expect(
      verify('sha256', Buffer.from(message), provider.merchantKey.publicKeyPem, Buffer.from(params.paySign, 'base64')),
    ).toBe(true);
  });

  it("should send the sub-merchant's app and sub_openid with subAppId", async () => {
    const { order, payment } = await create({ subAppId: 'wx1234567890abcdef' });

    expect(fake.createCallsFor(order.orderNo)[0].request).toMatchObject({
      sub_appid: 'wx1234567890abcdef',
      payer: { sub_openid: 'oSpOpenid0000000000000000001' },
    });
    expect(JSON.parse(payment.buyer!)).toMatchObject({ params: { appId: 'wx1234567890abcdef' } });
  });

  it('should refuse (400) a payment naming no sub-merchant, or one not configured, calling nothing', async () => {
    for (const subMerchantId of [undefined, NOT_OURS]) {
      const orderNo = uniqueId('PP');
      await expect(create({ orderNo, subMerchantId })).rejects.toMatchObject({ code: 'MalformedRequest' });
      expect(fake.createCallsFor(orderNo)).toHaveLength(0);
    }
  });
});

describe('reconciliation per sub-merchant', () => {
  async function runRow(subMchid: string, date: string): Promise<RowDataPacket | undefined> {
    const [rows] = await pool.query<RowDataPacket[]>(
      `SELECT status, counts, detail FROM reconciliation_run
       WHERE channel = 'WECHATPAY' AND merchant_id = ? AND sub_merchant_id = ? AND bill_date = ?`,
      [SP_MCHID, subMchid, date],
    );
    return rows[0];
  }

  it("should download each configured sub-merchant's bill and report each apart", async () => {
    const date = shiftBillDate(billDateOf(new Date()), -1);
    const noon = new Date(billDayRange(date).start.getTime() + 12 * 3600 * 1000);
    const paidAtA = await newOrder(1000);
    const missingAtA = await newOrder(3000);
    const paidAtB = await newOrder(2000);
    for (const [payment, sub] of [
      [paidAtA, SUB_A],
      [missingAtA, SUB_A],
      [paidAtB, SUB_B],
    ] as const) {
      const answer = await post(partnerNotification(payment, { subMchid: sub, successTime: noon }));
      expect(answer.status).toBe(204);
    }
    const row = (p: Payment): BillRowSpec => ({
      kind: 'PAYMENT',
      transactionId: p.transactionId,
      orderNo: p.orderNo,
      amount: p.amount,
      at: beijingTime(noon),
    });
    // SUB_A's bill lacks one of its payments, and holds a line of SUB_B's, which is not its own.
    const strayLine = partnerBill([row(paidAtB)], SUB_B).split('\r\n')[1];
    fake.serveBill(`${SP_MCHID}/${SUB_A}`, date, {
      channel: 'WECHATPAY',
      csv: partnerBill([row(paidAtA)], SUB_A, [strayLine]),
    });
    fake.serveBill(`${SP_MCHID}/${SUB_B}`, date, { channel: 'WECHATPAY', csv: partnerBill([row(paidAtB)], SUB_B) });

    // What POST /admin/reconciliations/wechatpay/:date/run starts (claimed here, run in the background).
    const started = await ctx.inContext(() => ctx.get(ReconciliationService).startForOperator('WECHATPAY', date, {}));

    expect(started).toEqual([
      { channel: 'WECHATPAY', merchantId: SP_MCHID, subMerchantId: SUB_A, date, started: true },
      { channel: 'WECHATPAY', merchantId: SP_MCHID, subMerchantId: SUB_B, date, started: true },
    ]);
    await eventually('both runs to complete', async () => {
      const runs = await Promise.all([runRow(SUB_A, date), runRow(SUB_B, date)]);
      return runs.every((r) => r?.status === 'COMPLETED');
    });
    const countsOf = async (sub: string) =>
      JSON.parse(String((await runRow(sub, date))!.counts)) as Record<string, number>;
    expect(await countsOf(SUB_A)).toMatchObject({ MATCHED: 1, MISSING_CHANNEL: 1, MALFORMED: 1, MISSING_LOCAL: 0 });
    expect(await countsOf(SUB_B)).toMatchObject({ MATCHED: 1, MISSING_CHANNEL: 0, MALFORMED: 0, MISSING_LOCAL: 0 });
    expect(
      fake.billCalls
        .filter((c) => c.date === date && c.answered === 'READY')
        .map((c) => c.subMerchantId)
        .sort(),
    ).toEqual([SUB_A, SUB_B]);

    // What a viewer reads at GET /admin/reconciliations/WECHATPAY/:date.
    const runs = await ctx.get(ReconciliationViews).day('WECHATPAY', date);
    const itemsOf = (sub: string) =>
      runs.find((r) => r.subMerchantId === sub)?.items.map((i) => `${i.outcome} ${i.transactionId ?? ''}`.trim());
    expect(itemsOf(SUB_A)?.sort()).toEqual([`MALFORMED`, `MISSING_CHANNEL ${missingAtA.transactionId}`].sort());
    expect(itemsOf(SUB_B)).toEqual([]);
  });
});
