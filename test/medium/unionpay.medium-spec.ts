import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { billDateOf, billDayRange, shiftBillDate } from '../../src/domain/bill';
import { Channel } from '../../src/domain/notification';
import { NotifyModule } from '../../src/intake/notify.module';
import { CreatePaymentOrderDto } from '../../src/order/dto/create-payment-order.dto';
import { OrderModule } from '../../src/order/order.module';
import { PaymentOrderService } from '../../src/order/payment-order.service';
import { ReconciliationModule } from '../../src/reconciliation/reconciliation.module';
import { ReconciliationService } from '../../src/reconciliation/reconciliation.service';
import { Refunds } from '../../src/refund/refunds';
import { TradeCloseService } from '../../src/trade/trade-close.service';
import { FakeUnionpayGateway } from '../../tools/simulator/unionpay/fake-unionpay-gateway';
import { unionpayBillZip, zmLine } from '../../tools/simulator/unionpay/unionpay-bill-file';
import {
  generateUnionpayKeySet,
  IssuedCertificate,
  issueCertificate,
  UnionpayKeySet,
  writeUnionpayKeySet,
} from '../../tools/simulator/unionpay/unionpay-keys';
import {
  newQueryId,
  signUnionpay,
  txnTime,
  unionpayConsumeFields,
  UnionpayConsumeParams,
  unionpayForm,
} from '../../tools/simulator/unionpay/unionpay-signer';
import { eventually } from '../support/eventually';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { failure, FORM, receive, Reply } from '../support/medium-dialects';
import { OrderEffects } from '../support/order-effects';
import { databaseProxy, databaseUrlVia, inParallel } from '../support/payment-storm';
import { RefundEffects } from '../support/refund-effects';
import { TcpProxy } from '../support/tcp-proxy';
import { count as countRows, uniqueId } from '../support/test-app';

/**
 * UnionPay (acp 5.1.0) as services on the real database, without HTTP: notifications signed with a
 * key set made for the run (root, middle, UnionPay's signer, the merchant's PFX) go to the notify
 * route's use case, and a fake gateway checks the service's request signatures and signs its
 * answers. The
 * reply on the wire is in test/channel-acks.e2e-spec.ts. The module reaches the database through
 * a proxy that the spool case cuts.
 */
const MER_ID = '777290058167151';
const ORDERS = 60;
const DELIVERIES_PER_PAYMENT = 6;

let keys: UnionpayKeySet;
let medium: Medium;
let fake: FakeUnionpayGateway;
let proxy: TcpProxy;
let ctx: MediumContext;
let pool: Pool;
let effects: OrderEffects;
let refunds: RefundEffects;

beforeAll(async () => {
  keys = generateUnionpayKeySet();
  const unionpayEnv = writeUnionpayKeySet(keys, mkdtempSync(join(tmpdir(), 'pcs-unionpay-')), MER_ID);
  fake = await FakeUnionpayGateway.start({
    merchants: [{ merId: MER_ID, certificatePem: keys.merchant.pem }],
    signer: keys.unionpaySigner,
  });
  proxy = await databaseProxy();
  // The payment-query and refund workers take every due row of their database: other suites' would come first.
  // The env is a function, read once that database of the suite's own is DATABASE_URL.
  medium = await startMedium(
    (p) => ({
      ...p.env,
      ...unionpayEnv,
      ...fake.apiEnv,
      DATABASE_URL: databaseUrlVia(proxy),
      SPOOL_DIR: mkdtempSync(join(tmpdir(), 'pcs-unionpay-spool-')),
      UNIONPAY_BACK_URL: 'https://pay.example.com/notify/unionpay',
      UNIONPAY_VALIDATE_CN: 'true',
      PAYMENT_QUERY_SCHEDULE_SECONDS: '5',
      PAYMENT_QUERY_POLL_INTERVAL_MS: '200',
      PAYMENT_QUERY_RATE_PER_SECOND: '1000',
      REFUND_POLL_INTERVAL_MS: '200',
    }),
    { imports: [OrderModule, NotifyModule, ReconciliationModule], fake: false, ownDatabase: true },
  );
  ({ ctx, pool } = medium);
  effects = new OrderEffects(pool);
  refunds = new RefundEffects(pool);
});

afterAll(async () => {
  await ctx?.close();
  await proxy?.stop();
  await fake?.close();
  await medium?.close();
});

interface UnionpayPayment {
  orderNo: string;
  queryId: string;
  amount: number;
  /** The consumption's txnTime: registered as the order's channelOrderTime, carried by its notification. */
  txnTime: string;
}

/** reconciliation_item's columns, as the suite reads them. */
interface ItemColumns {
  outcome: string;
  kind: string;
  transaction_id: string | null;
  channel_amount: number | null;
  local_amount: number | null;
}

const count = (sql: string, params: unknown[]) => countRows(pool, sql, params);

function newPayment(prefix: string, amount: number, at = new Date()): UnionpayPayment {
  return { orderNo: uniqueId(prefix), queryId: newQueryId(), amount, txnTime: txnTime(at) };
}

function registration(p: UnionpayPayment): CreatePaymentOrderDto {
  return {
    orderNo: p.orderNo,
    userId: 'u-1',
    amount: p.amount,
    currency: 'CNY',
    channel: Channel.Unionpay,
    merchantId: MER_ID,
    channelOrderTime: p.txnTime,
  };
}

const registerOrder = (dto: CreatePaymentOrderDto) => ctx.inContext(() => ctx.get(PaymentOrderService).register(dto));

async function register(p: UnionpayPayment): Promise<void> {
  await registerOrder(registration(p));
}

function consumeForm(
  p: UnionpayPayment,
  overrides: Partial<UnionpayConsumeParams> = {},
  signer: IssuedCertificate = keys.unionpaySigner,
): string {
  const fields = unionpayConsumeFields({
    merId: MER_ID,
    orderId: p.orderNo,
    queryId: p.queryId,
    txnAmt: p.amount,
    txnTime: p.txnTime,
    ...overrides,
  });
  return unionpayForm(signUnionpay(fields, signer));
}

const post = (form: string) => receive(ctx, 'unionpay', form, FORM);
const isAck = (a: Reply) => a.status === 200 && a.body === 'ok';

/** A refund as an admin asks for it (the refund use case); its DomainError's status when refused. */
const refund = (request: { orderNo: string; transactionId: string; refundNo?: string; reason: string }) =>
  ctx.get(Refunds).request(request, 'alice');

describe('UnionPay notifications', () => {
  it(`should pay each of ${ORDERS} orders exactly once when each notification arrives ${DELIVERIES_PER_PAYMENT} times at once`, async () => {
    const payments = Array.from({ length: ORDERS }, (_, i) => newPayment('U', 100 + i));
    await inParallel(payments, 10, (p) => register(p));

    const answers: Reply[] = [];
    await inParallel(payments, 10, async (p) => {
      // UnionPay delivers the same signed message again until it sees a 200.
      const form = consumeForm(p);
      answers.push(...(await Promise.all(Array.from({ length: DELIVERIES_PER_PAYMENT }, () => post(form)))));
    });

    expect(answers.filter((a) => !isAck(a)).map((a) => `${a.status} ${a.body}`)).toEqual([]);
    expect(answers).toHaveLength(ORDERS * DELIVERIES_PER_PAYMENT);
    const orderNos = payments.map((p) => p.orderNo);
    expect(
      await count(`SELECT COUNT(*) FROM payment_order WHERE status = 'PAID' AND order_no IN (?)`, [orderNos]),
    ).toBe(ORDERS);
    const [perOrder] = await pool.query<RowDataPacket[]>(
      `SELECT o.order_no,
         (SELECT COUNT(*) FROM order_status_change c WHERE c.order_no = o.order_no AND c.to_status = 'PAID') AS transitions,
         (SELECT COUNT(*) FROM outbox_event e WHERE e.order_no = o.order_no AND e.type = 'payment.succeeded') AS events,
         (SELECT COUNT(*) FROM payment_callback p WHERE p.order_no = o.order_no AND p.channel = 'UNIONPAY') AS callbacks,
         (SELECT COUNT(*) FROM callback_delivery d WHERE d.order_no = o.order_no AND d.outcome = 'PAID') AS paid,
         -- An identical repost is a replay: counted on the first row, not stored again.
         (SELECT COUNT(*) FROM callback_delivery d WHERE d.order_no = o.order_no AND d.outcome = 'DUPLICATE')
           + (SELECT COALESCE(SUM(d.replays), 0) FROM callback_delivery d WHERE d.order_no = o.order_no) AS duplicates
       FROM payment_order o WHERE o.order_no IN (?)`,
      [orderNos],
    );
    expect(perOrder).toHaveLength(ORDERS);
    for (const r of perOrder) {
      expect([r.transitions, r.events, r.callbacks, r.paid, r.duplicates].map(Number)).toEqual([
        1,
        1,
        1,
        1,
        DELIVERIES_PER_PAYMENT - 1,
      ]);
    }
    expect(await count('SELECT COUNT(*) FROM payment_anomaly WHERE order_no IN (?)', [orderNos])).toBe(0);
    const [callback] = await pool.query<RowDataPacket[]>(
      'SELECT amount, currency, merchant_id, transaction_id FROM payment_callback WHERE order_no = ?',
      [payments[7].orderNo],
    );
    expect(callback[0]).toMatchObject({
      amount: payments[7].amount,
      currency: 'CNY',
      merchant_id: MER_ID,
      transaction_id: payments[7].queryId,
    });
  });

  it('should record an amount mismatch, a duplicate payment and a payment after close as the other channels do', async () => {
    const mismatch = newPayment('UM', 1000);
    const paidTwice = newPayment('UD', 1500);
    const closed = newPayment('UC', 2000);
    for (const p of [mismatch, paidTwice, closed]) await register(p);
    const close = () => ctx.inContext(() => ctx.get(TradeCloseService).close(closed.orderNo));

    expect(isAck(await post(consumeForm(mismatch, { txnAmt: 999 })))).toBe(true);
    expect(isAck(await post(consumeForm(paidTwice)))).toBe(true);
    const second = newQueryId();
    expect(isAck(await post(consumeForm(paidTwice, { queryId: second })))).toBe(true);
    const first = await close();
    expect(first.order.status).toBe('CLOSED');
    expect(first.channelClose).toMatchObject([{ channel: 'UNIONPAY', merchantId: MER_ID, outcome: 'NOT_APPLICABLE' }]);
    expect((await close()).channelClose).toMatchObject([{ channel: 'UNIONPAY', outcome: 'NOT_APPLICABLE' }]);
    expect(
      await count(
        "SELECT COUNT(*) FROM payment_channel_call WHERE order_no = ? AND request = 'CLOSE' AND outcome = 'NOT_APPLICABLE'",
        [closed.orderNo],
      ),
    ).toBe(1);
    expect(isAck(await post(consumeForm(closed)))).toBe(true);

    expect((await effects.anomalies(mismatch.orderNo)).map((a) => a.type)).toEqual(['AMOUNT_MISMATCH']);
    expect((await effects.anomalies(paidTwice.orderNo)).map((a) => [a.type, a.transaction_id])).toEqual([
      ['DUPLICATE_PAYMENT', second],
    ]);
    expect((await effects.anomalies(closed.orderNo)).map((a) => a.type)).toEqual(['PAID_AFTER_CLOSE']);
    expect(await effects.status(closed.orderNo)).toBe('CLOSED');
  });

  describe('forgeries: refused with 401 (so UnionPay retries), nothing written', () => {
    const rogue = () => generateUnionpayKeySet().unionpaySigner;
    const wrongCn = () => issueCertificate({ commonName: '041@Z12@00040000:SIGN@00000062', issuer: keys.middle });
    const cases: Array<[string, (p: UnionpayPayment) => string]> = [
      [
        'a field changed after signing',
        (p) => consumeForm(p).replace(`txnAmt=${p.amount}&`, `txnAmt=${p.amount * 100}&`),
      ],
      ['a signing certificate not chained to the configured root', (p) => consumeForm(p, {}, rogue())],
      ['a certificate under the right middle whose CN is not UnionPay', (p) => consumeForm(p, {}, wrongCn())],
      ['a merId that is not ours, correctly signed', (p) => consumeForm(p, { merId: '777290058199999' })],
    ];

    it.each(cases)('should refuse %s', async (_what, forge) => {
      const p = newPayment('UF', 3000);
      await register(p);
      const answer = await post(forge(p));

      expect(answer.status).toBe(401);
      expect(answer.body).toBe('fail');
      expect(await effects.deliveriesFor(p.orderNo)).toBe(0);
      expect(await count('SELECT COUNT(*) FROM payment_callback WHERE order_no = ?', [p.orderNo])).toBe(0);
      expect(await count('SELECT COUNT(*) FROM payment_anomaly WHERE order_no = ?', [p.orderNo])).toBe(0);
      expect(await effects.status(p.orderNo)).toBe('WAIT_PAY');
    });
  });

  it('should refuse an order for UNIONPAY without channelOrderTime, and write nothing', async () => {
    const p = newPayment('UT', 100);
    const { channelOrderTime: _omitted, ...withoutTime } = registration(p);
    const refused = await failure(registerOrder(withoutTime));
    expect(refused.status).toBe(400);
    expect(refused.message).toMatch(/channelOrderTime .*is required with channel UNIONPAY/);
    expect(await count('SELECT COUNT(*) FROM payment_order WHERE order_no = ?', [p.orderNo])).toBe(0);
  });

  it('should refuse an order number UnionPay would not take, at registration', async () => {
    const refused = await failure(
      registerOrder({ orderNo: 'U-1', userId: 'u-1', amount: 100, currency: 'CNY', channel: Channel.Unionpay }),
    );
    expect(refused.status).toBe(400);
    expect(refused.message).toMatch(/8 to 40 letters or digits/);
  });
});

describe('UnionPay notifications during a database cut (SPOOL_DIR)', () => {
  it('should ack them from the spool, and apply each payment exactly once when the database is back', async () => {
    const payments = Array.from({ length: 20 }, (_, i) => newPayment('US', 500 + i));
    await inParallel(payments, 5, (p) => register(p));

    await proxy.stop();
    let answers: Reply[];
    try {
      answers = await Promise.all(payments.flatMap((p) => [post(consumeForm(p)), post(consumeForm(p))]));
    } finally {
      await proxy.start();
    }
    expect(answers.filter((a) => !isAck(a)).map((a) => `${a.status} ${a.body}`)).toEqual([]);

    const orderNos = payments.map((p) => p.orderNo);
    await eventually(
      'the spool to apply every payment',
      async () => (await count('SELECT COUNT(*) FROM callback_delivery WHERE order_no IN (?)', [orderNos])) === 40,
      60_000,
    );
    expect(
      await count(`SELECT COUNT(*) FROM payment_order WHERE status = 'PAID' AND order_no IN (?)`, [orderNos]),
    ).toBe(20);
    expect(await count('SELECT COUNT(*) FROM payment_callback WHERE order_no IN (?)', [orderNos])).toBe(20);
    expect(
      await count(`SELECT COUNT(*) FROM outbox_event WHERE type = 'payment.succeeded' AND order_no IN (?)`, [orderNos]),
    ).toBe(20);
    expect(
      await count(`SELECT COUNT(*) FROM callback_delivery WHERE outcome = 'PAID' AND order_no IN (?)`, [orderNos]),
    ).toBe(20);
  });
});

describe('UnionPay channel calls', () => {
  it('should refund a duplicate payment with a signed txnType 04, and settle it by its result notification', async () => {
    const p = newPayment('UR', 4321);
    await register(p);
    expect(isAck(await post(consumeForm(p)))).toBe(true);
    const duplicate = newQueryId();
    expect(isAck(await post(consumeForm(p, { queryId: duplicate })))).toBe(true);

    const { refund: asked } = await refund({ orderNo: p.orderNo, transactionId: duplicate, reason: 'paid twice' });
    const { refundNo } = asked;
    await refunds.statusIs(refundNo, 'PROCESSING');
    expect(fake.refunds.filter((r) => r.orderId === refundNo)).toEqual([
      expect.objectContaining({
        merId: MER_ID,
        origQryId: duplicate,
        txnAmt: 4321,
        backUrl: 'https://pay.example.com/notify/unionpay',
      }),
    ]);

    const notice = fake.refundNotification(refundNo);
    const answers = await Promise.all([post(notice.body), post(notice.body)]);
    expect(answers.every(isAck)).toBe(true);
    expect(await refunds.row(refundNo)).toMatchObject({
      status: 'SUCCEEDED',
      channel_refund_id: fake.refunds.find((r) => r.orderId === refundNo)!.queryId,
    });
    expect(await effects.events(p.orderNo, 'refund.succeeded')).toBe(1);
    expect(await effects.status(p.orderNo)).toBe('PAID');
  });

  it('should ask queryTrans about a refund whose answer was lost, under its first txnTime, and never send it again', async () => {
    const p = newPayment('UL', 6543);
    await register(p);
    expect(isAck(await post(consumeForm(p)))).toBe(true);
    // UnionPay takes the refund, and the connection drops before its answer arrives.
    fake.refundAnswersToLose = 1;

    const refundNo = uniqueId('ULR');
    await refund({ orderNo: p.orderNo, transactionId: p.queryId, refundNo, reason: 'customer complaint' });
    let settled: Record<string, unknown> | undefined;
    await eventually(
      `refund ${refundNo} to settle`,
      async () => {
        settled = await refunds.row(refundNo);
        return !['PENDING', 'PROCESSING'].includes(String(settled?.status));
      },
      30_000,
    );

    expect(settled?.status).toBe('SUCCEEDED');
    const sent = fake.refunds.filter((r) => r.origQryId === p.queryId);
    expect(sent).toHaveLength(1);
    expect(settled?.channel_refund_id).toBe(sent[0].queryId);
    const calls = (endpoint: string) =>
      fake.calls.filter((c) => c.endpoint === endpoint && c.fields.orderId === refundNo);
    expect(calls('backTrans')).toHaveLength(1);
    expect(calls('queryTrans').length).toBeGreaterThanOrEqual(1);
    expect(new Set(calls('queryTrans').map((c) => c.fields.txnTime))).toEqual(new Set([sent[0].txnTime]));
    // UnionPay's own word on it, delivered later, changes nothing.
    expect(isAck(await post(fake.refundNotification(refundNo).body))).toBe(true);
    expect(await refunds.row(refundNo)).toMatchObject({ status: 'SUCCEEDED' });
    expect(await effects.events(p.orderNo, 'refund.succeeded')).toBe(1);
    expect(await effects.status(p.orderNo)).toBe('REFUNDED');

    const again = await failure(
      refund({ orderNo: p.orderNo, transactionId: p.queryId, refundNo: uniqueId('ULS'), reason: 'customer complaint' }),
    );
    expect(again.status).toBe(422);
    expect(fake.refunds.filter((r) => r.origQryId === p.queryId)).toHaveLength(1);
  });

  it('should find by queryTrans a payment whose notification never came, and apply it once', async () => {
    // Sent a minute before it was registered: the query must name that txnTime, not the time it asks.
    const p = newPayment('UQ', 7777, new Date(Date.now() - 60_000));
    await register(p);
    expect((await effects.order(p.orderNo))?.channel_order_time).toBe(p.txnTime);
    fake.putTrade({ merId: MER_ID, orderId: p.orderNo, queryId: p.queryId, amount: p.amount, txnTime: p.txnTime });

    await eventually('the query to pay the order', async () => (await effects.status(p.orderNo)) === 'PAID', 20_000);
    expect(await effects.events(p.orderNo)).toBe(1);
    const queries = fake.calls.filter((c) => c.endpoint === 'queryTrans' && c.fields.orderId === p.orderNo);
    expect(queries.length).toBeGreaterThanOrEqual(1);
    expect(queries[0].fields).toMatchObject({
      txnType: '00',
      txnSubType: '00',
      bizType: '000000',
      merId: MER_ID,
      txnTime: p.txnTime,
    });
    // The late notification is a duplicate of what the query applied.
    expect(isAck(await post(consumeForm(p)))).toBe(true);
    expect(await effects.deliveryOutcomes('UNIONPAY', p.queryId)).toContain('DUPLICATE');
    expect(await effects.events(p.orderNo)).toBe(1);
  });

  it('should not find a consumption under another txnTime than the one it was sent with', async () => {
    const p = newPayment('UW', 4321);
    await register(p);
    const sentAt = txnTime(new Date(Date.now() - 3_600_000));
    fake.putTrade({ merId: MER_ID, orderId: p.orderNo, queryId: p.queryId, amount: p.amount, txnTime: sentAt });

    await eventually(
      'the query to be answered',
      async () =>
        (await count("SELECT COUNT(*) FROM payment_channel_call WHERE order_no = ? AND request = 'QUERY'", [
          p.orderNo,
        ])) >= 1,
      20_000,
    );
    const calls = await effects.channelCalls(p.orderNo, 'QUERY');
    expect(calls.map((c) => [c.channel, c.outcome])).toEqual(calls.map(() => ['UNIONPAY', 'NOT_FOUND']));
    const queries = fake.calls.filter((c) => c.endpoint === 'queryTrans' && c.fields.orderId === p.orderNo);
    expect(queries.map((q) => q.fields.txnTime)).toEqual(queries.map(() => p.txnTime));
    expect(await effects.status(p.orderNo)).toBe('WAIT_PAY');
    expect(await count('SELECT COUNT(*) FROM payment_callback WHERE order_no = ?', [p.orderNo])).toBe(0);
  });

  it('should not query an order registered without channelOrderTime, and say why (nothing paid, no request sent)', async () => {
    // Registered with no channel named (UNIONPAY would require the time): UnionPay is asked too, and cannot be.
    const p = newPayment('UN', 1234);
    const { order } = await registerOrder({ orderNo: p.orderNo, userId: 'u-1', amount: p.amount, currency: 'CNY' });
    expect(order.channelOrderTime).toBeNull();
    fake.putTrade({ merId: MER_ID, orderId: p.orderNo, queryId: p.queryId, amount: p.amount, txnTime: p.txnTime });

    const unionpayQueries = async () =>
      (await effects.channelCalls(p.orderNo, 'QUERY')).filter((c) => c.channel === 'UNIONPAY');
    await eventually('the UnionPay query to be recorded', async () => (await unionpayQueries()).length >= 1, 20_000);
    const [call] = await unionpayQueries();
    expect(call).toMatchObject({ outcome: 'FAILED' });
    expect(call.detail).toMatch(/registered without channelOrderTime \(UnionPay's txnTime\), so it cannot be queried/);
    expect(fake.calls.filter((c) => c.endpoint === 'queryTrans' && c.fields.orderId === p.orderNo)).toEqual([]);
    expect(await effects.status(p.orderNo)).toBe('WAIT_PAY');
    expect(await count('SELECT COUNT(*) FROM payment_callback WHERE order_no = ?', [p.orderNo])).toBe(0);
    expect(await count('SELECT COUNT(*) FROM outbox_event WHERE order_no = ?', [p.orderNo])).toBe(0);
  });

  it("should reconcile a day from fileTransfer's ZIP with exact amounts, recovering the lost payment", async () => {
    const date = shiftBillDate(billDateOf(new Date()), -3);
    const { start } = billDayRange(date);
    const at = new Date(start.getTime() + 3_600_000);
    // Amounts beyond what a float64 of yuan keeps exact to the fen: 9,876,543,210.98 CNY.
    const matched = newPayment('UB', 987_654_321_098);
    const lost = newPayment('UL', 123_456_789_012, at);
    const differs = newPayment('UA', 5000);
    for (const p of [matched, lost, differs]) await register(p);
    expect(isAck(await post(consumeForm(matched, { txnTime: txnTime(at) })))).toBe(true);
    expect(isAck(await post(consumeForm(differs, { txnTime: txnTime(at) })))).toBe(true);
    fake.putTrade({
      merId: MER_ID,
      orderId: lost.orderNo,
      queryId: lost.queryId,
      amount: lost.amount,
      txnTime: txnTime(at),
    });
    const line = (p: UnionpayPayment, amount = p.amount) =>
      zmLine({ txnType: '01', amount, queryId: p.queryId, orderId: p.orderNo, at }, MER_ID);
    fake.serveBill(
      MER_ID,
      date,
      unionpayBillZip([line(matched), line(lost), line(differs, 5001), 'garbage'], date, MER_ID),
    );

    const report = await ctx.inContext(() => ctx.get(ReconciliationService).run('UNIONPAY', MER_ID, date, 'MANUAL'));

    expect(report?.counts).toMatchObject({ MATCHED: 1 });
    expect(
      await count(
        `SELECT COUNT(*) FROM reconciliation_run WHERE channel = 'UNIONPAY' AND merchant_id = ? AND bill_date = ? AND status = 'COMPLETED'`,
        [MER_ID, date],
      ),
    ).toBe(1);
    const [items] = await pool.query<Array<RowDataPacket & ItemColumns>>(
      `SELECT i.outcome, i.kind, i.transaction_id, i.channel_amount, i.local_amount FROM reconciliation_item i
       JOIN reconciliation_run r ON r.id = i.run_id
       WHERE r.channel = 'UNIONPAY' AND r.merchant_id = ? AND r.bill_date = ? ORDER BY i.outcome`,
      [MER_ID, date],
    );
    expect(items.map((i) => [i.outcome, i.kind, i.transaction_id, i.channel_amount, i.local_amount])).toEqual([
      ['AMOUNT_DIFFERS', 'PAYMENT', differs.queryId, 5001, 5000],
      ['MALFORMED', 'LINE', null, null, null],
      ['MISSING_LOCAL', 'PAYMENT', lost.queryId, lost.amount, lost.amount],
    ]);
    const [runRow] = await pool.query<RowDataPacket[]>(
      `SELECT counts FROM reconciliation_run WHERE channel = 'UNIONPAY' AND merchant_id = ? AND bill_date = ?`,
      [MER_ID, date],
    );
    const counts: unknown = typeof runRow[0].counts === 'string' ? JSON.parse(runRow[0].counts) : runRow[0].counts;
    expect(counts).toMatchObject({ MATCHED: 1 });
    expect(await effects.status(lost.orderNo)).toBe('PAID');
    const [paid] = await pool.query<RowDataPacket[]>('SELECT amount FROM payment_callback WHERE order_no = ?', [
      lost.orderNo,
    ]);
    expect(paid[0].amount).toBe(lost.amount);
  });
});
