import { Pool, RowDataPacket } from 'mysql2/promise';
import { register as metricsRegistry } from 'prom-client';
import { billDateOf, billDayRange, shiftBillDate } from '../../src/domain/bill';
import { Channel } from '../../src/domain/notification';
import { OrderModule } from '../../src/order/order.module';
import { ReconciliationModule } from '../../src/reconciliation/reconciliation.module';
import { ReconciliationService } from '../../src/reconciliation/reconciliation.service';
import { ReconciliationViews } from '../../src/reconciliation/reconciliation-views.queries';
import { SettlementModule } from '../../src/settlement/settlement.module';
import { FakePlatform } from '../../tools/simulator/fake-platform';
import { yuan } from '../../tools/simulator/platform-signers';
import { alipayBillDetail, alipayBillZip, beijingTime, BillRowSpec, wechatpayBill } from '../support/bill-files';
import { eventually } from '../support/eventually';
import { Factories } from '../support/factories';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { FORM } from '../support/medium-intake';
import { metricValue, OrderEffects } from '../support/order-effects';
import { count, TestPlatforms, uniqueId } from '../support/test-app';

/**
 * Daily reconciliation against the channels' trade bills as a service, on the real database, with
 * two instances (modules on one database) and the fake platform serving bills in the real formats
 * (WeChat CSV, plain and gzipped, with its SHA1; Alipay GBK ZIP), built from the records each test
 * creates plus injected differences. Payments come by signed notifications through the settlement use case, refunds by
 * the refund use case, and the reconciliation_discrepancies gauge is read from this process's
 * registry. Starting a run over HTTP (202, audited, refusals) and the views' status codes are in
 * test/reconciliation.e2e-spec.ts.
 */
const BOUNDARY_SECONDS = 300;

let setup: Medium;
let platforms: TestPlatforms;
let fake: FakePlatform;
let replicaA: MediumContext;
let replicaB: MediumContext;
let make: Factories;
let pool: Pool;
let effects: OrderEffects;
let env: Record<string, string>;
const MODULES = [OrderModule, SettlementModule, ReconciliationModule];

beforeAll(async () => {
  // The refund worker and a scheduled run take every due row of the database; and our side of a day
  // is every payment of the merchant: other suites' would be on it.
  const own = {
    // Only the suite's own queries: the active query worker would find the lost payments before reconciliation.
    PAYMENT_QUERY_SCHEDULE_SECONDS: '86400',
    RECONCILE_BOUNDARY_SECONDS: String(BOUNDARY_SECONDS),
    RECONCILE_RETRY_SECONDS: '1',
    REFUND_POLL_INTERVAL_MS: '100',
  };
  setup = await startMedium(own, { imports: MODULES, replicas: 2, ownDatabase: true });
  ({ platforms, fake, make, pool } = setup);
  [replicaA, replicaB] = setup.replicas;
  env = { ...platforms.env, ...fake.apiEnv, ...own };
  effects = new OrderEffects(pool);
});

afterAll(() => setup?.close());

const wechatMchid = () => platforms.wechatpay.mchid;
const alipayAppId = () => platforms.alipay.appId;
const service = (replica: MediumContext) => replica.get(ReconciliationService);

interface Payment {
  orderNo: string;
  transactionId: string;
  amount: number;
  paidAt: Date;
}

function payment(prefix: string, amount: number, paidAt: Date): Payment {
  return { orderNo: uniqueId(prefix), transactionId: uniqueId('T'), amount, paidAt };
}

async function register(p: Payment, channel: 'WECHATPAY' | 'ALIPAY'): Promise<void> {
  await make.order({ orderNo: p.orderNo, amount: p.amount, channel });
}

/** Registered and paid by the channel's signed notification, at `paidAt` by the channel's clock. */
async function paidHere(p: Payment, channel: 'WECHATPAY' | 'ALIPAY'): Promise<void> {
  await register(p, channel);
  const notification =
    channel === 'WECHATPAY'
      ? (() => {
          const d = make.deliveries.wechatpayPayment({
            outTradeNo: p.orderNo,
            transactionId: p.transactionId,
            total: p.amount,
            successTime: p.paidAt,
          });
          return make.verify(Channel.Wechatpay, d.headers, d.body);
        })()
      : make.verify(
          Channel.Alipay,
          { 'content-type': FORM },
          make.deliveries.alipayPayment({
            outTradeNo: p.orderNo,
            tradeNo: p.transactionId,
            totalAmount: yuan(p.amount),
            paidAt: p.paidAt,
            // Sent now: a notify_time days old is refused (ALIPAY_NOTIFY_MAX_AGE_SECONDS).
            notifiedAt: new Date(),
          }),
        );
  expect(await make.settle(notification)).toBe('PAID');
}

function line(p: Payment, overrides: Partial<BillRowSpec> = {}): BillRowSpec {
  return {
    kind: 'PAYMENT',
    transactionId: p.transactionId,
    orderNo: p.orderNo,
    amount: p.amount,
    at: beijingTime(p.paidAt),
    ...overrides,
  };
}

/** An emergency refund through the refund use case (what POST /admin/refunds/emergency calls). */
async function requestRefund(p: Payment, refundNo: string, amount?: number): Promise<void> {
  await make.refund({ orderNo: p.orderNo, transactionId: p.transactionId, amount, refundNo, reason: 'customer asked' });
}

async function refundHere(p: Payment, amount: number, refundNo: string): Promise<void> {
  await requestRefund(p, refundNo, amount);
  await eventually(`refund ${refundNo} to succeed`, async () => (await refundStatus(refundNo)) === 'SUCCEEDED');
}

async function refundStatus(refundNo: string): Promise<unknown> {
  const [rows] = await pool.query<RowDataPacket[]>('SELECT status FROM refund WHERE refund_no = ?', [refundNo]);
  return rows[0]?.status;
}

interface ItemRow {
  outcome: string;
  kind: string;
  transaction_id: string | null;
  order_no: string | null;
  refund_no: string | null;
  channel_amount: number | null;
  local_amount: number | null;
  resolution: string | null;
  detail: string | null;
}

async function runRow(channel: string, merchantId: string, date: string): Promise<RowDataPacket | undefined> {
  const [rows] = await pool.query<RowDataPacket[]>(
    'SELECT * FROM reconciliation_run WHERE channel = ? AND merchant_id = ? AND bill_date = ?',
    [channel, merchantId, date],
  );
  return rows[0];
}

async function items(channel: string, merchantId: string, date: string): Promise<ItemRow[]> {
  const [rows] = await pool.query<RowDataPacket[]>(
    `SELECT i.* FROM reconciliation_item i JOIN reconciliation_run r ON r.id = i.run_id
     WHERE r.channel = ? AND r.merchant_id = ? AND r.bill_date = ? ORDER BY i.outcome, i.transaction_id, i.refund_no`,
    [channel, merchantId, date],
  );
  return rows as ItemRow[];
}

/** The discrepancy counts (all but MATCHED) the account's run of `date` stored. */
async function storedDiscrepancies(channel: string, merchantId: string, date: string): Promise<Record<string, number>> {
  const { MATCHED: _matched, ...discrepancies } = JSON.parse(
    String((await runRow(channel, merchantId, date))!.counts),
  ) as Record<string, number>;
  return discrepancies;
}

/**
 * The account's reconciliation_discrepancies series as a scrape reads it, by outcome (absent ones left
 * out): the gauge is one per process, read from the database by the latest instance still running.
 */
async function scrapedDiscrepancies(channel: string, merchantId: string): Promise<Record<string, number>> {
  const exposition = await metricsRegistry.metrics();
  const found: Record<string, number> = {};
  for (const line of exposition.split('\n')) {
    if (!line.startsWith('reconciliation_discrepancies{')) continue;
    if (!line.includes(`channel="${channel}"`) || !line.includes(`merchant_id="${merchantId}"`)) continue;
    found[/outcome="(\w+)"/.exec(line)![1]] = Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return found;
}

function brief(rows: ItemRow[]): string[] {
  return rows.map((r) => `${r.outcome} ${r.kind} ${r.transaction_id ?? ''} ${r.refund_no ?? ''}`.trim());
}

/**
 * The suite's day is today in Beijing, and the service stamps its refunds with the real time: a run
 * that straddled Beijing midnight would find its refunds on the next day's bill. Within
 * `marginMs` of midnight it waits until just after it (a bounded wait of at most the margin).
 */
async function clearOfBeijingMidnight(marginMs: number): Promise<void> {
  const untilMidnight = billDayRange(billDateOf(new Date())).end.getTime() - Date.now();
  if (untilMidnight < marginMs) await new Promise((resolve) => setTimeout(resolve, untilMidnight + 1_000));
}

/** More than the describe below takes on a loaded machine. */
const BEIJING_MIDNIGHT_MARGIN_MS = 5 * 60_000;

/** The day of the WeChat Pay describe below, which the views at the end read again. */
let wechatDay: string;

describe('a day of WeChat Pay reconciled against its bill', () => {
  let today: string;
  let start: Date;
  const at = (seconds: number) => new Date(start.getTime() + seconds * 1000);
  let yesterday: string;
  let matched: Payment;
  let amountDiffers: Payment;
  let unknownToChannel: Payment;
  let lost: Payment;
  let atStartOnPreviousBill: Payment;
  let atEndOfPreviousDay: Payment;
  let refunded: Payment;
  let channelOnlyRefund: BillRowSpec;
  let rows: BillRowSpec[];
  let firstItems: string[];
  let firstCounts: Record<string, number>;

  beforeAll(async () => {
    await clearOfBeijingMidnight(BEIJING_MIDNIGHT_MARGIN_MS);
    today = billDateOf(new Date());
    wechatDay = today;
    start = billDayRange(today).start;
    yesterday = shiftBillDate(today, -1);
    matched = payment('RM', 8888, at(3600));
    amountDiffers = payment('RD', 1000, at(7200));
    unknownToChannel = payment('RX', 4321, at(7300));
    lost = payment('RL', 1999, at(7400));
    atStartOnPreviousBill = payment('RS', 500, at(1));
    atEndOfPreviousDay = payment('RE', 600, at(-2));
    refunded = payment('RR', 5000, at(7500));
    for (const p of [matched, amountDiffers, unknownToChannel, atStartOnPreviousBill, atEndOfPreviousDay, refunded]) {
      await paidHere(p, 'WECHATPAY');
    }
    // Paid at the channel, every notification lost: registered here, still WAIT_PAY.
    await register(lost, 'WECHATPAY');
    fake.payTrade({
      channel: 'WECHATPAY',
      outTradeNo: lost.orderNo,
      transactionId: lost.transactionId,
      amount: lost.amount,
      paidAt: lost.paidAt,
    });
    await refundHere(refunded, 1000, uniqueId('RFA'));
    await refundHere(refunded, 700, uniqueId('RFB'));
    const [refundRows] = await pool.query<RowDataPacket[]>(
      'SELECT refund_no, amount FROM refund WHERE transaction_id = ? ORDER BY amount DESC',
      [refunded.transactionId],
    );
    channelOnlyRefund = {
      ...line(matched),
      kind: 'REFUND',
      amount: 88,
      refundNo: uniqueId('RFC'),
      at: beijingTime(at(9000)),
    };
    rows = [
      line(matched),
      line(amountDiffers, { amount: 1001 }),
      line(lost),
      line(atEndOfPreviousDay, { at: beijingTime(at(2)) }), // the channel put it on this day's bill
      line(refunded),
      {
        ...line(refunded),
        kind: 'REFUND',
        amount: 1000,
        refundNo: String(refundRows[0].refund_no),
        at: beijingTime(at(9100)),
      },
      channelOnlyRefund,
    ];
    // The boundary payment of this morning is on yesterday's bill, at 23:59:59.
    fake.serveBill(wechatMchid(), yesterday, {
      channel: 'WECHATPAY',
      csv: wechatpayBill([line(atStartOnPreviousBill, { at: `${yesterday} 23:59:59` })], wechatMchid()),
    });
  }, BEIJING_MIDNIGHT_MARGIN_MS + 180_000);

  it('should refuse a bill whose SHA1 is not the hash_value, and leave the run FAILED with nothing applied', async () => {
    fake.serveBill(wechatMchid(), today, {
      channel: 'WECHATPAY',
      csv: wechatpayBill(rows, wechatMchid()),
      wrongHash: true,
    });

    const report = await service(replicaA).run('WECHATPAY', wechatMchid(), today, 'MANUAL');

    expect(report).toMatchObject({ status: 'FAILED', detail: expect.stringContaining('is not the hash_value') });
    expect(await runRow('WECHATPAY', wechatMchid(), today)).toMatchObject({ status: 'FAILED' });
    expect(await items('WECHATPAY', wechatMchid(), today)).toEqual([]);
    expect(await effects.status(lost.orderNo)).toBe('WAIT_PAY');
  });

  it('should find every kind of difference in the gzipped bill, recover the lost payment once, and alarm', async () => {
    fake.serveBill(wechatMchid(), today, {
      channel: 'WECHATPAY',
      csv: wechatpayBill(rows, wechatMchid(), [
        '`2026-11-30 10:00:00,`wxd678efh567hg6787,`' + wechatMchid() + ',`broken',
      ]),
      tarType: 'GZIP',
    });

    const report = await service(replicaA).run('WECHATPAY', wechatMchid(), today, 'MANUAL');

    // Every bill line is this suite's; the filter below also leaves out anything else of today.
    expect(report).toMatchObject({
      status: 'COMPLETED',
      counts: {
        MATCHED: 4, // matched, atEndOfPreviousDay, refunded's payment and its first refund
        MISSING_LOCAL: 1,
        AMOUNT_DIFFERS: 1,
        REFUND_MISSING_LOCAL: 1,
        MALFORMED: 1,
      },
    });
    const all = await items('WECHATPAY', wechatMchid(), today);
    const ours = new Set(
      [matched, amountDiffers, unknownToChannel, lost, atStartOnPreviousBill, atEndOfPreviousDay, refunded].map(
        (p) => p.transactionId,
      ),
    );
    const found = all.filter((i) => i.kind === 'LINE' || ours.has(i.transaction_id ?? ''));
    expect(found).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          outcome: 'AMOUNT_DIFFERS',
          transaction_id: amountDiffers.transactionId,
          channel_amount: 1001,
          local_amount: 1000,
        }),
        expect.objectContaining({ outcome: 'MISSING_LOCAL', transaction_id: lost.transactionId, resolution: 'PAID' }),
        expect.objectContaining({
          outcome: 'MISSING_CHANNEL',
          transaction_id: unknownToChannel.transactionId,
          local_amount: 4321,
        }),
        expect.objectContaining({
          outcome: 'REFUND_MISSING_LOCAL',
          refund_no: channelOnlyRefund.refundNo,
          channel_amount: 88,
        }),
        expect.objectContaining({
          outcome: 'REFUND_MISSING_CHANNEL',
          transaction_id: refunded.transactionId,
          local_amount: 700,
        }),
        expect.objectContaining({
          outcome: 'MALFORMED',
          kind: 'LINE',
          detail: expect.stringContaining('fewer than the header'),
        }),
      ]),
    );
    expect(found).toHaveLength(6);
    // The morning's boundary payment was looked for in yesterday's bill, and found there.
    expect(fake.billCallsFor('WECHATPAY', yesterday, 'DOWNLOADED')).toBe(1);
    expect(all.map((i) => i.transaction_id)).not.toContain(atStartOnPreviousBill.transactionId);
    expect(report?.counts?.MISSING_CHANNEL).toBe(all.filter((i) => i.outcome === 'MISSING_CHANNEL').length);
    // The lost payment: PAID once, through the pipeline, with its one event.
    expect(await effects.status(lost.orderNo)).toBe('PAID');
    expect(await effects.events(lost.orderNo)).toBe(1);
    expect(await effects.history(lost.orderNo)).toEqual(['->WAIT_PAY', 'WAIT_PAY>PAID']);
    const metrics = await metricsRegistry.metrics();
    const labels = { channel: 'WECHATPAY', merchant_id: wechatMchid() };
    expect(metricValue(metrics, 'reconciliation_discrepancies', { ...labels, outcome: 'MISSING_CHANNEL' })).toBe(
      report?.counts?.MISSING_CHANNEL,
    );
    expect(metricValue(metrics, 'reconciliation_discrepancies', { ...labels, outcome: 'AMOUNT_DIFFERS' })).toBe(1);
    firstItems = brief(all);
    firstCounts = report!.counts!;
  });

  it('should give the same items when the day is run again from the plain bill, applying nothing twice', async () => {
    fake.serveBill(wechatMchid(), today, {
      channel: 'WECHATPAY',
      csv: wechatpayBill(rows, wechatMchid(), [
        '`2026-11-30 10:00:00,`wxd678efh567hg6787,`' + wechatMchid() + ',`broken',
      ]),
      tarType: 'PLAIN',
    });

    const report = await service(replicaB).run('WECHATPAY', wechatMchid(), today, 'MANUAL');

    // The payment recovered by the first run is ours now: MATCHED; everything else is as it was.
    expect(report?.counts).toEqual({ ...firstCounts, MATCHED: 5, MISSING_LOCAL: 0 });
    const again = brief(await items('WECHATPAY', wechatMchid(), today));
    expect(again).toEqual(firstItems.filter((i) => !i.startsWith('MISSING_LOCAL')));
    expect(await effects.events(lost.orderNo)).toBe(1);
    expect(
      await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE transaction_id = ?', [lost.transactionId]),
    ).toBe(1);
    expect(
      await count(pool, 'SELECT COUNT(*) FROM reconciliation_run WHERE channel = ? AND bill_date = ?', [
        'WECHATPAY',
        today,
      ]),
    ).toBe(1);
    expect(await runRow('WECHATPAY', wechatMchid(), today)).toMatchObject({ status: 'COMPLETED', attempts: 3 });
    expect(await count(pool, 'SELECT COUNT(*) FROM reconciliation_bill_line')).toBe(0);
  });
});

describe('the reconciliation_discrepancies gauge, read from the database', () => {
  let startedAfter: MediumContext;

  afterAll(async () => {
    await startedAfter?.close();
  });

  it('should report on an instance started after the run the figures of the instance that ran it', async () => {
    const stored = await storedDiscrepancies('WECHATPAY', wechatMchid(), wechatDay);

    const ranIt = await scrapedDiscrepancies('WECHATPAY', wechatMchid());
    // An instance started after the runs above: nothing of them is in its memory, and it now reads the gauge.
    startedAfter = await setup.another(() => env, MODULES);
    const fresh = await scrapedDiscrepancies('WECHATPAY', wechatMchid());

    expect(stored).toMatchObject({ AMOUNT_DIFFERS: 1, REFUND_MISSING_LOCAL: 1, MALFORMED: 1 });
    expect(Object.keys(stored)).toHaveLength(6);
    expect(ranIt).toEqual(stored);
    expect(fresh).toEqual(stored);
  });

  it("should replace an account's figures with those of a newer bill date, not with those of an older one run later", async () => {
    const today = billDateOf(new Date());
    /** Completes the Alipay run of `date` from a bill of `malformed` unreadable lines and nothing else. */
    const completeWithMalformed = async (date: string, malformed: number) => {
      const lines = Array.from(
        { length: malformed },
        (_, i) => `202611302200140000000000009${i}\t,X\t,交易\t,x\t,bad-time\t,bad-time`,
      );
      fake.serveBill(alipayAppId(), date, {
        channel: 'ALIPAY',
        zip: alipayBillZip(alipayBillDetail([], date, lines), date),
      });
      expect((await service(replicaA).run('ALIPAY', alipayAppId(), date, 'MANUAL'))?.status).toBe('COMPLETED');
    };
    const scraped = () => scrapedDiscrepancies('ALIPAY', alipayAppId());
    const only = (malformed: number) => ({
      MISSING_LOCAL: 0,
      MISSING_CHANNEL: 0,
      AMOUNT_DIFFERS: 0,
      REFUND_MISSING_LOCAL: 0,
      REFUND_MISSING_CHANNEL: 0,
      MALFORMED: malformed,
    });

    await completeWithMalformed(shiftBillDate(today, -9), 1);
    const first = await scraped();
    await completeWithMalformed(shiftBillDate(today, -8), 2);
    const newer = await scraped();
    await completeWithMalformed(shiftBillDate(today, -10), 3);
    const older = await scraped();

    expect(first).toEqual(only(1));
    expect(newer).toEqual(only(2));
    expect(older).toEqual(only(2));
  });
});

describe('a day of Alipay reconciled against its GBK ZIP', () => {
  it('should match, recover the lost payment, and report the malformed line', async () => {
    const date = shiftBillDate(billDateOf(new Date()), -5);
    const { start } = billDayRange(date);
    const matched = payment('AM', 8888, new Date(start.getTime() + 3_600_000));
    const lost = payment('AL', 2000, new Date(start.getTime() + 7_200_000));
    await paidHere(matched, 'ALIPAY');
    await register(lost, 'ALIPAY');
    fake.payTrade({
      channel: 'ALIPAY',
      outTradeNo: lost.orderNo,
      transactionId: lost.transactionId,
      amount: lost.amount,
      paidAt: lost.paidAt,
    });
    const detail = alipayBillDetail([line(matched), line(lost)], date, [
      '2026113022001400000000000077\t,X\t,交易\t,x\t,bad-time\t,bad-time',
    ]);
    fake.serveBill(alipayAppId(), date, { channel: 'ALIPAY', zip: alipayBillZip(detail, date) });

    const report = await service(replicaA).run('ALIPAY', alipayAppId(), date, 'MANUAL');

    expect(report?.counts).toMatchObject({ MATCHED: 1, MISSING_LOCAL: 1, MISSING_CHANNEL: 0, MALFORMED: 1 });
    expect(brief(await items('ALIPAY', alipayAppId(), date))).toEqual([
      'MALFORMED LINE',
      `MISSING_LOCAL PAYMENT ${lost.transactionId}`,
    ]);
    expect(await effects.status(lost.orderNo)).toBe('PAID');
    expect(await effects.events(lost.orderNo)).toBe(1);
  });
});

describe('a refund the bill shows made, recorded CLOSED here', () => {
  it("should take the bill's word: the refund SUCCEEDED, its amount reserved again, a refund anomaly opened", async () => {
    const date = shiftBillDate(billDateOf(new Date()), -9);
    const p = payment('BC', 3300, new Date(billDayRange(date).start.getTime() + 3_600_000));
    await paidHere(p, 'ALIPAY');
    const refundNo = uniqueId('BCR');
    fake.script(refundNo, { reject: 'ACQ.TRADE_NOT_ALLOW_REFUND' });
    await requestRefund(p, refundNo);
    await eventually(`refund ${refundNo} to close`, async () => (await refundStatus(refundNo)) === 'CLOSED');
    const refundLine: BillRowSpec = { ...line(p), kind: 'REFUND', refundNo, at: beijingTime(p.paidAt) };
    fake.serveBill(alipayAppId(), date, {
      channel: 'ALIPAY',
      zip: alipayBillZip(alipayBillDetail([line(p), refundLine], date), date),
    });

    const report = await service(replicaA).run('ALIPAY', alipayAppId(), date, 'MANUAL');

    expect(report?.status).toBe('COMPLETED');
    expect(await refundStatus(refundNo)).toBe('SUCCEEDED');
    expect(await effects.status(p.orderNo)).toBe('REFUNDED');
    const [anomalies] = await pool.query<Array<RowDataPacket & { was_status: string }>>(
      'SELECT was_status, amount, paid_amount, refunded_amount FROM refund_anomaly WHERE refund_no = ?',
      [refundNo],
    );
    const figures = (a: RowDataPacket & { was_status: string }) => ({
      was_status: a.was_status,
      amount: Number(a.amount),
      paid_amount: Number(a.paid_amount),
      refunded_amount: Number(a.refunded_amount),
    });
    expect(anomalies.map(figures)).toEqual([
      { was_status: 'CLOSED', amount: 3300, paid_amount: 3300, refunded_amount: 3300 },
    ]);
    // Nothing is left to refund (the admin route answers this 422).
    await expect(requestRefund(p, uniqueId('BCS'))).rejects.toMatchObject({ status: 422 });
  });
});

describe('two instances starting the same run', () => {
  it('should let one run it: one download, the lost payment applied once', async () => {
    const date = shiftBillDate(billDateOf(new Date()), -6);
    const lost = payment('CL', 3000, new Date(billDayRange(date).start.getTime() + 3_600_000));
    await register(lost, 'ALIPAY');
    fake.payTrade({
      channel: 'ALIPAY',
      outTradeNo: lost.orderNo,
      transactionId: lost.transactionId,
      amount: lost.amount,
      paidAt: lost.paidAt,
    });
    fake.serveBill(alipayAppId(), date, {
      channel: 'ALIPAY',
      zip: alipayBillZip(alipayBillDetail([line(lost)], date), date),
    });

    const reports = await Promise.all([
      // As both instances' schedules do: a completed run is never taken again, so exactly one may run it.
      service(replicaA).run('ALIPAY', alipayAppId(), date, 'SCHEDULED'),
      service(replicaB).run('ALIPAY', alipayAppId(), date, 'SCHEDULED'),
    ]);

    expect(reports.filter((r) => r !== undefined)).toHaveLength(1);
    expect(fake.billCallsFor('ALIPAY', date, 'READY')).toBe(1);
    expect(brief(await items('ALIPAY', alipayAppId(), date))).toEqual([`MISSING_LOCAL PAYMENT ${lost.transactionId}`]);
    expect(await effects.events(lost.orderNo)).toBe(1);
    expect(await runRow('ALIPAY', alipayAppId(), date)).toMatchObject({ status: 'COMPLETED', attempts: 1 });
  });
});

describe('a bill that is not ready yet', () => {
  it('should leave the run NOT_READY, and the schedule should run it again once it is due', async () => {
    const date = shiftBillDate(billDateOf(new Date()), -3);
    const matched = payment('NM', 1200, new Date(billDayRange(date).start.getTime() + 3_600_000));
    await paidHere(matched, 'WECHATPAY');

    const first = await service(replicaA).run('WECHATPAY', wechatMchid(), date, 'MANUAL');

    expect(first).toMatchObject({ status: 'NOT_READY', detail: expect.stringContaining('NO_STATEMENT_EXIST') });
    expect(await runRow('WECHATPAY', wechatMchid(), date)).toMatchObject({ status: 'NOT_READY', attempts: 1 });
    fake.serveBill(wechatMchid(), date, { channel: 'WECHATPAY', csv: wechatpayBill([line(matched)], wechatMchid()) });
    // A third instance with the daily schedule on (00:00: always past) and retries after a second.
    const scheduled = await setup.another(
      () => ({
        ...env,
        RECONCILE_AT: '00:00',
        RECONCILE_RETRY_SECONDS: '1',
        RECONCILE_POLL_INTERVAL_MS: '200',
      }),
      MODULES,
    );
    try {
      await eventually(
        `the run of ${date} to complete`,
        async () => (await runRow('WECHATPAY', wechatMchid(), date))?.status === 'COMPLETED',
        20_000,
      );
    } finally {
      await scheduled.close();
    }
    const run = await runRow('WECHATPAY', wechatMchid(), date);
    expect(run).toMatchObject({ status: 'COMPLETED', attempts: 2 });
    expect(JSON.parse(String(run!.counts))).toMatchObject({ MATCHED: 1, MISSING_CHANNEL: 0 });
    expect(fake.billCallsFor('WECHATPAY', date, 'NOT_READY')).toBe(1);
  });
});

describe('the views the admin API serves', () => {
  it('should list runs with their counts, and show a day with its items', async () => {
    const today = billDateOf(new Date());
    const views = replicaA.get(ReconciliationViews);

    const listed = await views.list(shiftBillDate(today, -15), shiftBillDate(today, -2));
    const [run] = await views.day('WECHATPAY', wechatDay);

    expect(listed).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          channel: 'WECHATPAY',
          date: shiftBillDate(today, -3),
          status: 'COMPLETED',
          counts: expect.objectContaining({ MATCHED: 1 }),
        }),
        expect.objectContaining({ channel: 'ALIPAY', date: shiftBillDate(today, -5), status: 'COMPLETED' }),
      ]),
    );
    const stored = await runRow('WECHATPAY', wechatMchid(), wechatDay);
    expect(run.counts).toEqual(JSON.parse(String(stored!.counts)));
    expect(run.counts).toMatchObject({ AMOUNT_DIFFERS: 1, REFUND_MISSING_LOCAL: 1, MALFORMED: 1 });
    const discrepancies = Object.entries(run.counts ?? {}).reduce(
      (sum, [o, n]) => (o === 'MATCHED' ? sum : sum + n),
      0,
    );
    expect(run.items).toHaveLength(Math.min(discrepancies, 1000));
    expect(run.items.map((i) => i.outcome)).toEqual(
      expect.arrayContaining(['AMOUNT_DIFFERS', 'MALFORMED', 'MISSING_CHANNEL', 'REFUND_MISSING_LOCAL']),
    );
  });
});
