import { createPublicKey } from 'node:crypto';
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
import { FakeUnionpayGateway } from '../../tools/simulator/unionpay/fake-unionpay-gateway';
import {
  generateUnionpayKeySet,
  UnionpayKeySet,
  writeUnionpayKeySet,
} from '../../tools/simulator/unionpay/unionpay-keys';
import { txnTime, unionpaySignatureHolds } from '../../tools/simulator/unionpay/unionpay-signer';
import {
  createdOnceForConcurrentRequests,
  refusedAgainWithoutSecondCall,
  unavailableThenCreated,
} from '../support/create-payment-cases';
import { eventually } from '../support/eventually';
import { FORM, receive } from '../support/medium-intake';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { OrderEffects } from '../support/order-effects';
import { uniqueId } from '../support/test-app';

/**
 * UnionPay payments created by the service (POST /payment-orders with method), as services on the real database
 * without HTTP: the front consumption form (PC and mobile web) signed here and checked with the merchant's
 * certificate, as UnionPay checks it; the app's appTransReq sent to a fake gateway that verifies the merchant's
 * signature and signs its answers with UnionPay's certificate; the buyer pays at the fake's cashier and the
 * consumption notification it signs is settled by the notify use case.
 */
const MER_ID = '777290058167152';
const PUBLIC_BASE_URL = 'https://pay.example.com';
const BACK_URL = `${PUBLIC_BASE_URL}/notify/unionpay`;

let medium: Medium;
let keys: UnionpayKeySet;
let fake: FakeUnionpayGateway;
let ctx: MediumContext;
let pool: Pool;
let effects: OrderEffects;

beforeAll(async () => {
  keys = generateUnionpayKeySet();
  const unionpayEnv = writeUnionpayKeySet(keys, mkdtempSync(join(tmpdir(), 'pcs-unionpay-create-')), MER_ID);
  fake = await FakeUnionpayGateway.start({
    merchants: [{ merId: MER_ID, certificatePem: keys.merchant.pem }],
    signer: keys.unionpaySigner,
  });
  medium = await startMedium(
    {
      ...unionpayEnv,
      ...fake.apiEnv,
      PUBLIC_BASE_URL,
      SPOOL_DIR: mkdtempSync(join(tmpdir(), 'pcs-unionpay-create-spool-')),
      UNIONPAY_VALIDATE_CN: 'true',
      PAYMENT_QUERY_SCHEDULE_SECONDS: '3600',
      PAYMENT_QUERY_POLL_INTERVAL_MS: '100',
      REFUND_REQUEST_TIMEOUT_MS: '1000',
    },
    { imports: [OrderModule, SettlementModule, TradeModule, NotifyModule], fake: false },
  );
  ({ ctx, pool } = medium);
  effects = new OrderEffects(pool);
});

afterAll(async () => {
  await medium?.close();
  await fake?.close();
});

function order(method: string, overrides: Partial<CreatePaymentOrderDto> = {}): CreatePaymentOrderDto {
  return {
    orderNo: uniqueId('UP'),
    userId: 'u-1',
    amount: 1234,
    currency: 'CNY',
    channel: Channel.Unionpay,
    method,
    description: 'Order',
    expiresAt: new Date(Date.now() + 30 * 60_000).toISOString(),
    ...(method === 'APP' ? {} : { payer: { returnUrl: 'https://shop.example.com/paid' } }),
    ...overrides,
  };
}

const create = (dto: CreatePaymentOrderDto) => ctx.inContext(() => ctx.get(ChannelPayments).create(dto));
const unionpay = { create, callsFor: (orderNo: string) => fake.callsFor('appTrans', orderNo) };

/** What UnionPay checks: signMethod 01 with the public key of the merchant's certificate. */
const merchantSignatureHolds = (fields: Record<string, string>) =>
  unionpaySignatureHolds(fields, createPublicKey(keys.merchant.pem));

async function payAndNotify(orderNo: string): Promise<{ queryId: string; acks: number[] }> {
  const paid = await fake.pay(MER_ID, orderNo, false);
  // UnionPay posts the notification again until it reads a 200: twice here, settled once.
  const replies = [
    await receive(ctx, 'unionpay', { 'content-type': FORM }, paid.notification),
    await receive(ctx, 'unionpay', { 'content-type': FORM }, paid.notification),
  ];
  return { queryId: paid.queryId, acks: replies.map((r) => r.status) };
}

async function expectSettledOnce(orderNo: string, queryId: string): Promise<void> {
  expect(await effects.status(orderNo)).toBe('PAID');
  const payments = await effects.payments(orderNo);
  expect(payments.map((p) => [p.transaction_id, Number(p.amount)])).toEqual([[queryId, 1234]]);
  expect(await effects.events(orderNo)).toBe(1);
}

describe('front consumption (PC and mobile web)', () => {
  it.each([
    ['PAGE', '07'],
    ['WAP', '08'],
  ])(
    'should sign a %s consumption form with the order terms and its txnTime, checked with the merchant certificate, without calling UnionPay',
    async (method, channelType) => {
      const dto = order(method);

      const { order: registered, payment } = await create(dto);

      const buyer = JSON.parse(payment.buyer!) as { params: Record<string, string>; form: object };
      expect(buyer.form).toEqual({ action: `${fake.url}/gateway/api/frontTransReq.do`, method: 'POST' });
      expect(buyer.params).toMatchObject({
        version: '5.1.0',
        encoding: 'UTF-8',
        signMethod: '01',
        txnType: '01',
        txnSubType: '01',
        bizType: '000201',
        accessType: '0',
        channelType,
        merId: MER_ID,
        orderId: dto.orderNo,
        txnTime: registered.channelOrderTime,
        txnAmt: '1234',
        currencyCode: '156',
        backUrl: BACK_URL,
        frontUrl: 'https://shop.example.com/paid',
        payTimeout: txnTime(new Date(dto.expiresAt!)),
      });
      expect((await effects.order(dto.orderNo))?.channel_order_time).toBe(buyer.params.txnTime);
      expect(merchantSignatureHolds(buyer.params)).toBe(true);
      expect(merchantSignatureHolds({ ...buyer.params, txnAmt: '1' })).toBe(false);
      expect(fake.calls.filter((c) => c.fields.orderId === dto.orderNo)).toHaveLength(0);
    },
  );

  it("should let the buyer's browser post the form to UnionPay, pay at the cashier, and settle the order once", async () => {
    const dto = order('WAP');
    const { payment } = await create(dto);
    const buyer = JSON.parse(payment.buyer!) as { params: Record<string, string>; form: { action: string } };

    const posted = await fetch(buyer.form.action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(buyer.params).toString(),
    });
    const { queryId, acks } = await payAndNotify(dto.orderNo);

    expect(posted.status).toBe(200);
    expect(posted.headers.get('x-fake-cashier')).toMatch(/\/unionpay\/cashier\/\d+$/);
    expect(acks).toEqual([200, 200]);
    await expectSettledOnce(dto.orderNo, queryId);
  });
});

describe("the app's tn (appTransReq)", () => {
  it('should send one appTransReq for ten concurrent identical requests, each answered the same tn', async () => {
    const dto = order('APP');

    const { answers, call } = await createdOnceForConcurrentRequests(unionpay, dto);

    expect(call.fields).toMatchObject({
      txnType: '01',
      channelType: '08',
      merId: MER_ID,
      orderId: dto.orderNo,
      txnTime: answers[0].order.channelOrderTime,
      txnAmt: '1234',
      currencyCode: '156',
      backUrl: BACK_URL,
      payTimeout: txnTime(new Date(dto.expiresAt!)),
    });
    expect(call.fields.frontUrl).toBeUndefined();
    const tn = fake.consumptions.get(`${MER_ID} ${dto.orderNo}`)!.tn;
    expect(new Set(answers.map((a) => a.payment.buyer))).toEqual(new Set([JSON.stringify({ params: { tn } })]));
  });

  it('should settle once a payment the buyer makes in the app with the tn', async () => {
    const dto = order('APP');
    const { payment } = await create(dto);
    const { tn } = (JSON.parse(payment.buyer!) as { params: { tn: string } }).params;

    const shown = (await (await fetch(`${fake.url}/unionpay/cashier/${tn}`)).json()) as { orderId: string };
    const { queryId, acks } = await payAndNotify(dto.orderNo);

    expect(shown.orderId).toBe(dto.orderNo);
    expect(acks).toEqual([200, 200]);
    await expectSettledOnce(dto.orderNo, queryId);
  });

  it("should answer UnionPay's refusal as a 422 with its respCode, again without a second call", async () => {
    const dto = order('APP');

    await refusedAgainWithoutSecondCall(
      unionpay,
      dto,
      () => fake.consumeBehaviours.push({ respCode: '61', respMsg: 'merchant not permitted' }),
      '61 merchant not permitted',
    );
  });

  it.each([
    ['a lost connection', 'timeout' as const],
    ['an answer still pending (03)', { respCode: '03', respMsg: 'in process' }],
  ])('should answer 503 to %s, then send the very same request again and get the tn', async (_what, behaviour) => {
    const dto = order('APP');

    const { calls } = await unavailableThenCreated(unionpay, dto, () => fake.consumeBehaviours.push(behaviour));

    expect(calls).toHaveLength(2);
    expect(calls[1].fields).toEqual(calls[0].fields);
  });
});

describe('expiry', () => {
  it('should close the order here at its expiry (UnionPay has no close) and UnionPay refuses payment past payTimeout', async () => {
    const dto = order('APP');
    await create(dto);

    await pool.query('UPDATE channel_payment SET close_due_at = ? WHERE order_no = ?', [
      new Date(Date.now() - 1000),
      dto.orderNo,
    ]);
    await eventually('the order closed', async () => (await effects.status(dto.orderNo)) === 'CLOSED', 20_000);
    // UnionPay's clock reaches payTimeout: the consumption can no longer be paid there.
    fake.consumptions.get(`${MER_ID} ${dto.orderNo}`)!.payTimeout = txnTime(new Date(Date.now() - 1000));

    await expect(fake.pay(MER_ID, dto.orderNo, false)).rejects.toThrow('expired at its payTimeout');
  });
});
