import { RowDataPacket } from 'mysql2/promise';
import { billDateOf, billDayRange, shiftBillDate } from '../src/domain/bill';
import { beijingTime, wechatpayBill } from './support/bill-files';
import { eventually } from './support/eventually';
import { FakePlatformSuite, startFakePlatformSuite } from './support/fake-platform-suite';
import { count, TestClient, uniqueId } from './support/test-app';

/**
 * Reconciliation over HTTP: an admin starts a run (202, audited), a viewer may not, bad input is
 * refused; the runs and a day with its items are shown to a viewer. What a run finds and applies
 * (the bills, the differences, the recovered payments, the gauge) is in
 * test/medium/reconciliation.medium-spec.ts.
 */
let suite: FakePlatformSuite;
let client: TestClient;
const date = shiftBillDate(billDateOf(new Date()), -2);
const mchid = () => suite.platforms.wechatpay.mchid;
const admins = () => suite.platforms.admins;

beforeAll(async () => {
  suite = await startFakePlatformSuite();
  client = suite.clientOf(await suite.startApp({ ...suite.env, PAYMENT_QUERY_SCHEDULE_SECONDS: '86400' }));
});

afterAll(() => suite?.close());

const runCounts = async () => {
  const sql = 'SELECT status, counts FROM reconciliation_run WHERE channel = ? AND merchant_id = ? AND bill_date = ?';
  const [[run]] = await suite.pool.query<RowDataPacket[]>(sql, ['WECHATPAY', mchid(), date]);
  return run?.status === 'COMPLETED' ? (JSON.parse(String(run.counts)) as Record<string, number>) : undefined;
};

it('should start a run for an admin (202, audited) and refuse it to a viewer and for bad input', async () => {
  const p = { orderNo: uniqueId('AA'), transactionId: uniqueId('T'), amount: 700 };
  const paidAt = new Date(billDayRange(date).start.getTime() + 3_600_000);
  expect((await client.registerOrder({ orderNo: p.orderNo, amount: p.amount, channel: 'WECHATPAY' })).status).toBe(201);
  const payment = client.wechatpayPayment({
    outTradeNo: p.orderNo,
    transactionId: p.transactionId,
    total: p.amount,
    successTime: paidAt,
  });
  expect((await client.postWechatpay(payment)).status).toBe(204);
  const csv = wechatpayBill([{ kind: 'PAYMENT', ...p, at: beijingTime(paidAt) }], mchid(), ['`broken']);
  suite.fake.serveBill(mchid(), date, { channel: 'WECHATPAY', csv });
  const start = (channel: string, day: string, token: string, body: object = {}) =>
    client.admin('POST', `/admin/reconciliations/${channel}/${day}/run`, token, body);

  const viewer = await start('wechatpay', date, admins().viewer);
  const started = await start('wechatpay', date, admins().admin);
  const badDate = await start('wechatpay', '2026-02-30', admins().admin);
  const today = await start('wechatpay', billDateOf(new Date()), admins().admin);
  const unknown = await start('paypal', date, admins().admin);
  const extra = await start('wechatpay', date, admins().admin, { x: 1 });

  expect(viewer.status).toBe(403);
  expect([started.status, started.json()]).toEqual([
    202,
    { runs: [{ channel: 'WECHATPAY', merchantId: mchid(), date, started: true }] },
  ]);
  expect([badDate.status, today.status, unknown.status, extra.status]).toEqual([400, 400, 404, 400]);
  await eventually('the run to complete', async () => (await runCounts()) !== undefined);
  const audited = "SELECT COUNT(*) FROM admin_audit WHERE action = 'RECONCILE' AND target = ?";
  expect(await count(suite.pool, audited, [`reconciliation:WECHATPAY:${date}`])).toBe(1);
});

it('should list runs with their counts, and show a day with its items', async () => {
  const get = (path: string, token = admins().viewer) => client.admin('GET', `/admin/reconciliations${path}`, token);
  const list = await get(`?from=${shiftBillDate(date, -10)}&to=${date}`);
  const day = await get(`/WECHATPAY/${date}`);
  const [none, bad, anonymous] = await Promise.all([
    get('/ALIPAY/2020-01-01'),
    get('?from=x'),
    client.admin('GET', '/admin/reconciliations', undefined),
  ]);

  expect(list.status).toBe(200);
  const counts = expect.objectContaining({ MATCHED: 1, MALFORMED: 1 });
  expect(list.json<{ runs: object[] }>().runs).toContainEqual(
    expect.objectContaining({ channel: 'WECHATPAY', date, status: 'COMPLETED', counts }),
  );
  expect(day.status).toBe(200);
  const [run] = day.json<{ runs: Array<{ counts: Record<string, number>; items: Array<{ outcome: string }> }> }>().runs;
  expect(run.counts).toEqual(await runCounts());
  // Other suites' WeChat Pay payments of the day (the test merchant is shared) are on it too, missing at the channel.
  const discrepancies = Object.entries(run.counts).reduce((sum, [o, n]) => (o === 'MATCHED' ? sum : sum + n), 0);
  expect(run.items).toHaveLength(discrepancies);
  expect(run.items.map((i) => i.outcome)).toContain('MALFORMED');
  expect([none.status, bad.status, anonymous.status]).toEqual([404, 400, 401]);
});
