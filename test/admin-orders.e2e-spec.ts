import { parse } from 'csv-parse/sync';
import { Pool, RowDataPacket } from 'mysql2/promise';
import {
  count,
  createTestPlatforms,
  RunningApp,
  startApp,
  TestClient,
  testDatabasePool,
  TestPlatforms,
  uniqueId,
} from './support/test-app';

/**
 * The order list's refusals and its CSV export, and the decrypted WeChat Pay
 * resource, over HTTP against the real database (the list's filters and pages are
 * test/medium/admin-queries.medium-spec.ts). Other suites share the run's database: a filter is shown by what
 * it keeps (every listed order matches it) and by this suite's own orders among them.
 */
interface OrderItem {
  orderNo: string;
  status: string;
  amount: number;
  currency: string;
  channel: string | null;
  merchantId: string | null;
  transactionId: string | null;
  createdAt: string;
  paidAt: string | null;
}
interface OrderPage {
  items: OrderItem[];
  nextCursor: string | null;
}

const OPENID = 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o';

let platforms: TestPlatforms;
let app: RunningApp;
let client: TestClient;
let pool: Pool;
let since: string;
/** This suite's orders, oldest first: two paid by WeChat Pay, one waiting for WeChat Pay, one for Alipay, a formula-like one. */
const mine: Record<'paid1' | 'paid2' | 'waiting' | 'alipay' | 'formula', string> = {
  paid1: '',
  paid2: '',
  waiting: '',
  alipay: '',
  formula: '',
};
const paidBy: Record<string, string> = {};

beforeAll(async () => {
  platforms = await createTestPlatforms();
  app = await startApp(platforms.env);
  client = new TestClient(app.url, platforms);
  pool = testDatabasePool();
  since = new Date(Date.now() - 1000).toISOString();
  for (const key of ['paid1', 'paid2', 'waiting', 'alipay'] as const) {
    mine[key] = uniqueId('OL');
    const channel = key === 'alipay' ? 'ALIPAY' : 'WECHATPAY';
    expect((await client.registerOrder({ orderNo: mine[key], amount: 200000, channel })).status).toBe(201);
    // Apart by more than the column's millisecond: the list's order is the order of creation.
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  mine.formula = `-${uniqueId('F').slice(0, 20)}`;
  expect((await client.registerOrder({ orderNo: mine.formula, amount: 1999, channel: 'WECHATPAY' })).status).toBe(201);
  for (const key of ['paid1', 'paid2'] as const) {
    paidBy[key] = uniqueId('T');
    const delivery = client.wechatpayPayment({ outTradeNo: mine[key], transactionId: paidBy[key], total: 200000 });
    expect((await client.postWechatpay(delivery)).status).toBe(204);
  }
});

afterAll(async () => {
  await app?.close();
  await pool?.end();
});

const read = (path: string, token = platforms.admins.viewer) => client.admin('GET', path, token);

describe('GET /admin/orders', () => {
  // What the list shows, its filters and its keyset pages are in test/medium/admin-queries.medium-spec.ts;
  // here, its refusals over HTTP.
  it('should refuse a malformed filter with a 400 naming it, and write nothing', async () => {
    const audited = await count(pool, 'SELECT COUNT(*) FROM admin_audit');
    const orders = await count(pool, 'SELECT COUNT(*) FROM payment_order');
    const refusals: Array<[string, RegExp]> = [
      ['status=NOPE', /status must be one of WAIT_PAY/],
      ['channel=PAYPAL', /channel must be one of/],
      ['limit=0', /limit must be at least 1/],
      ['limit=ten', /limit must be an integer/],
      ['cursor=1', /cursor must be the nextCursor/],
      ["cursor=1.x'--", /cursor must be the nextCursor/],
      ['from=yesterday', /from must be an ISO 8601/],
      ['from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z', /from must be before to/],
    ];
    for (const [search, message] of refusals) {
      for (const path of ['/admin/orders', '/admin/orders.csv']) {
        const answer = await read(`${path}?${search}`);
        expect([path, search, answer.status, answer.body]).toEqual([path, search, 400, expect.any(String)]);
        expect(answer.json<{ message: string }>().message).toMatch(message);
      }
    }
    expect((await read('/admin/orders?limit=201')).json<{ message: string }>().message).toBe(
      'limit must be at most 200',
    );
    expect((await read('/admin/orders.csv?limit=10001')).json<{ message: string }>().message).toBe(
      'limit must be at most 10000',
    );
    expect((await client.admin('GET', '/admin/orders', undefined)).status).toBe(401);
    expect((await client.admin('GET', '/admin/orders.csv', undefined)).status).toBe(401);
    expect(await count(pool, 'SELECT COUNT(*) FROM admin_audit')).toBe(audited);
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_order')).toBe(orders);
  });
});

describe('GET /admin/orders.csv', () => {
  it('should give the filtered orders as CSV: minor units and formatted amounts, escaped, formula-safe, audited', async () => {
    const before = await count(pool, 'SELECT COALESCE(MAX(id), 0) FROM admin_audit');
    const response = await fetch(`${app.url}/admin/orders.csv?from=${since}`, {
      headers: { authorization: `Bearer ${platforms.admins.viewer}` },
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    const text = bytes.toString('utf8');

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="orders-\d{8}T\d{6}Z\.csv"$/);
    expect(response.headers.get('x-next-cursor')).toBeNull();
    // A byte order mark, so that Excel reads the file as UTF-8 (fetch's text() would hide it).
    expect(bytes.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    expect(text.split('\r\n')[0]).toBe(
      '\uFEFForder_no,status,channel,merchant_id,transaction_id,amount_minor,currency,amount,created_at,paid_at',
    );
    const rows = parse<Record<string, string>>(text, { bom: true, columns: true });
    const json = (await read(`/admin/orders?from=${since}&limit=200`)).json<OrderPage>().items;
    expect(rows.map((r) => r.order_no.replace(/^'/, ''))).toEqual(json.map((o) => o.orderNo));
    expect(rows.find((r) => r.order_no === mine.paid1)).toMatchObject({
      status: 'PAID',
      channel: 'WECHATPAY',
      transaction_id: paidBy.paid1,
      amount_minor: '200000',
      currency: 'CNY',
      amount: '2000.00',
      created_at: json.find((o) => o.orderNo === mine.paid1)!.createdAt,
    });
    // A spreadsheet would run "-…" as a formula: the cell starts with an apostrophe.
    expect(rows.find((r) => r.order_no === `'${mine.formula}`)).toMatchObject({
      amount_minor: '1999',
      amount: '19.99',
    });
    expect(rows.find((r) => r.order_no === mine.formula)).toBeUndefined();

    const [audits] = await pool.query<RowDataPacket[]>(
      'SELECT operator_id, action, target, result FROM admin_audit WHERE id > ? AND action = ?',
      [before, 'ORDERS_EXPORTED'],
    );
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({ operator_id: 'victor', target: 'orders' });
    expect(audits[0].result).toEqual({ rows: rows.length, nextCursor: null });
  });

  it('should stop at the limit and name where the next file starts', async () => {
    const first = await fetch(`${app.url}/admin/orders.csv?from=${since}&limit=2`, {
      headers: { authorization: `Bearer ${platforms.admins.viewer}` },
    });
    const cursor = first.headers.get('x-next-cursor');
    const rest = await read(`/admin/orders.csv?from=${since}&cursor=${cursor}`);
    const firstRows = parse<Record<string, string>>(await first.text(), { bom: true, columns: true });
    const restRows = parse<Record<string, string>>(rest.body, { bom: true, columns: true });

    expect(firstRows).toHaveLength(2);
    expect(cursor).toMatch(/^\d+\.[A-Za-z0-9_-]+$/);
    const all = (await read(`/admin/orders?from=${since}&limit=200`)).json<OrderPage>().items;
    expect([...firstRows, ...restRows].map((r) => r.order_no.replace(/^'/, ''))).toEqual(all.map((o) => o.orderNo));
  });
});

describe('GET /admin/deliveries/:id/decrypted', () => {
  const deliveryOf = async (transactionId: string) =>
    String(
      (
        await pool.query<RowDataPacket[]>('SELECT id FROM callback_delivery WHERE transaction_id = ? ORDER BY id', [
          transactionId,
        ])
      )[0][0].id,
    );

  it("should give an admin the WeChat Pay resource decrypted, audited, and a viewer the payer's identifiers masked", async () => {
    const id = await deliveryOf(paidBy.paid1);
    const before = await count(pool, 'SELECT COALESCE(MAX(id), 0) FROM admin_audit');

    const asAdmin = await read(`/admin/deliveries/${id}/decrypted`, platforms.admins.admin);
    expect(asAdmin.status).toBe(200);
    // What the decrypted resource holds, exact or masked, is test/medium/admin-views.medium-spec.ts.
    expect(asAdmin.json()).toMatchObject({ deliveryId: id, masked: false, content: { payer: { openid: OPENID } } });
    const [audits] = await pool.query<Array<RowDataPacket & { operator_id: string; action: string; target: string }>>(
      'SELECT operator_id, action, target, request_body, result FROM admin_audit WHERE id > ? ORDER BY id',
      [before],
    );
    expect(audits.map((a) => [a.operator_id, a.action, a.target])).toEqual([
      ['alice', 'RESOURCE_READ_DECRYPTED', `delivery:${id}`],
    ]);
    // The audit row says who read it, never what it said.
    expect(JSON.stringify(audits[0])).not.toContain(OPENID);

    const asViewer = await read(`/admin/deliveries/${id}/decrypted`);
    expect(asViewer.status).toBe(200);
    expect(asViewer.json<{ masked: boolean }>().masked).toBe(true);
    expect(asViewer.body).not.toContain(OPENID);
    expect(await count(pool, 'SELECT COUNT(*) FROM admin_audit WHERE id > ?', [before])).toBe(1);
  });

  it('should answer one 404 DeliveryNotFound for a delivery with nothing encrypted, its bytes pruned, or none, and 401 without a token', async () => {
    const tradeNo = uniqueId('A');
    const form = client.alipayPayment({ outTradeNo: mine.alipay, tradeNo, totalAmount: '2000.00' });
    expect((await client.postAlipay(form)).status).toBe(200);
    const alipay = await deliveryOf(tradeNo);
    const pruned = await deliveryOf(paidBy.paid2);
    await pool.query('UPDATE callback_delivery SET raw_pruned_at = NOW(3) WHERE id = ?', [pruned]);
    const notFound = async (id: string) => {
      const answer = await read(`/admin/deliveries/${id}/decrypted`, platforms.admins.admin);
      return { status: answer.status, error: answer.json<{ error: string }>().error };
    };

    const none = { status: 404, error: 'DeliveryNotFound' };
    expect(await notFound(alipay)).toEqual(none);
    expect(await notFound(pruned)).toEqual(none);
    expect(await notFound('999999999999')).toEqual(none);
    expect(await notFound('x')).toEqual(none);
    expect((await client.admin('GET', `/admin/deliveries/${alipay}/decrypted`, undefined)).status).toBe(401);
  });
});
