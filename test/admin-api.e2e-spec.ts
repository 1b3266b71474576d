import { Channel } from '../src/domain/notification';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Pool } from 'mysql2/promise';
import { randomAlphanumeric } from '../tools/simulator/platform-signers';
import {
  ANY_MANAGEMENT_PORT,
  count,
  createTestPlatforms,
  HttpAnswer,
  RunningApp,
  notificationsOnly,
  startApp,
  TestClient,
  testDatabasePool,
  TestPlatforms,
  uniqueId,
} from './support/test-app';
import { eventually } from './support/eventually';
import { Delivery, notifyChannels, NotifyChannel, PaymentSpec } from './support/notify-channels';

/**
 * The operators' read API, driven end to end: every order state, delivery and anomaly it shows was made
 * by real signed notifications posted to the notify endpoints. The emergency refund action is only
 * touched where it concerns access control (refunds themselves are test/refunds.e2e-spec.ts).
 */

type AnomalyType = 'DUPLICATE_PAYMENT' | 'PAID_AFTER_CLOSE' | 'AMOUNT_MISMATCH';

type PaymentChannel = NotifyChannel;

// ------------------------------------------------------------------------------------------ the contract

interface AnomalyView {
  id: string;
  type: AnomalyType;
  orderNo: string;
  transactionId: string;
  channel: Channel;
  orderAmount: number;
  paidAmount: number;
  currency: string;
  status: string;
  createdAt: string;
  updatedAt: string;
  /** An admin's decision to close it without a refund; none here. */
  resolution: null;
}

interface AnomalyPage {
  items: AnomalyView[];
  nextCursor: string | null;
}

/** What this suite reads of the order view (the view itself is test/medium/admin-views.medium-spec.ts). */
interface OrderDetail {
  order: { orderNo: string };
  deliveries: { items: Array<{ rawPayloadUrl: string }> };
  refunds: unknown[];
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const anInstant = () => expect.stringMatching(ISO_INSTANT);

// ---------------------------------------------------------------------------------------------- the suite

let platforms: TestPlatforms;
let running: RunningApp;
let client: TestClient;
let pool: Pool;

const { WECHATPAY: wechatpay, ALIPAY: alipay } = notifyChannels(() => client);
const CHANNELS = [wechatpay, alipay];
const EACH_CHANNEL = CHANNELS.map((c) => [c.name, c] as const);

// --------------------------------------------------------------------------------------- arranging state

async function registerOrder(amount: number, userId = 'u-1'): Promise<string> {
  const orderNo = uniqueId('PO');
  const answer = await client.registerOrder({ orderNo, amount, userId });
  expect(answer.status).toBe(201);
  return orderNo;
}

async function closeOrder(orderNo: string): Promise<void> {
  const answer = await client.api('POST', `/payment-orders/${orderNo}/close`);
  expect(answer.status).toBe(200);
}

/** Delivers the payment `times` times, one after the other, each freshly signed; returns what was sent. */
async function pay(channel: PaymentChannel, p: PaymentSpec, times = 1): Promise<Delivery[]> {
  const sent: Delivery[] = [];
  for (let i = 0; i < times; i++) {
    const delivery = channel.payment(p);
    channel.expectAck(await channel.post(delivery));
    sent.push(delivery);
  }
  return sent;
}

interface AnomalyScenario {
  type: AnomalyType;
  orderAmount: number;
  paidAmount: number;
  /** Puts the fresh WAIT_PAY order where a payment of `paidAmount` becomes this anomaly. */
  arrange(channel: PaymentChannel, orderNo: string): Promise<void>;
}

const ANOMALY_SCENARIOS: AnomalyScenario[] = [
  {
    type: 'DUPLICATE_PAYMENT',
    orderAmount: 3000,
    paidAmount: 3000,
    arrange: async (channel, orderNo) => {
      await pay(channel, { orderNo, transactionId: uniqueId('T'), amount: 3000 });
    },
  },
  {
    type: 'PAID_AFTER_CLOSE',
    orderAmount: 3100,
    paidAmount: 3100,
    arrange: (_channel, orderNo) => closeOrder(orderNo),
  },
  { type: 'AMOUNT_MISMATCH', orderAmount: 3200, paidAmount: 3199, arrange: () => Promise.resolve() },
];

function scenario(type: AnomalyType): AnomalyScenario {
  return ANOMALY_SCENARIOS.find((s) => s.type === type)!;
}

/** A new order with one anomaly of `type`; returns the offending payment. */
async function makeAnomaly(type: AnomalyType, channel: PaymentChannel): Promise<PaymentSpec> {
  const s = scenario(type);
  const orderNo = await registerOrder(s.orderAmount);
  await s.arrange(channel, orderNo);
  const offending = { orderNo, transactionId: uniqueId('T'), amount: s.paidAmount };
  await pay(channel, offending);
  return offending;
}

// ------------------------------------------------------------------------------------------ reading it

function withQuery(path: string, params: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) query.set(key, String(value));
  const text = query.toString();
  return text === '' ? path : `${path}?${text}`;
}

/** A GET that must answer 200 (as the viewer unless told otherwise). */
async function read<T>(path: string, token = platforms.admins.viewer): Promise<T> {
  const answer = await client.admin('GET', path, token);
  if (answer.status !== 200) throw new Error(`GET ${path} answered ${answer.status}: ${answer.body}`);
  return answer.json<T>();
}

/** Every page of an anomaly listing, following nextCursor. */
async function anomalyPages(params: Record<string, string | number | undefined>): Promise<AnomalyPage[]> {
  const pages: AnomalyPage[] = [];
  let cursor: string | undefined;
  do {
    const page = await read<AnomalyPage>(withQuery('/admin/anomalies', { ...params, cursor }));
    pages.push(page);
    cursor = page.nextCursor ?? undefined;
    if (pages.length > 100) throw new Error('the anomaly listing never ends');
  } while (cursor !== undefined);
  return pages;
}

/** The order's anomalies as the listing shows them, looking only at anomalies created since `since`. */
async function listedAnomaliesOf(orderNo: string, since: Date): Promise<AnomalyView[]> {
  const pages = await anomalyPages({ from: since.toISOString(), limit: 200 });
  return pages.flatMap((p) => p.items).filter((a) => a.orderNo === orderNo);
}

function expectAnomalyView(
  view: AnomalyView | undefined,
  expected: { type: AnomalyType; channel: Channel; offending: PaymentSpec; orderAmount: number },
): void {
  expect(view).toEqual({
    id: expect.stringMatching(/^[1-9]\d*$/),
    type: expected.type,
    orderNo: expected.offending.orderNo,
    transactionId: expected.offending.transactionId,
    channel: expected.channel,
    orderAmount: expected.orderAmount,
    paidAmount: expected.offending.amount,
    currency: 'CNY',
    status: 'OPEN',
    createdAt: anInstant(),
    updatedAt: anInstant(),
    resolution: null,
  });
}

function expectBadRequest(answer: HttpAnswer, message: RegExp): void {
  expect(answer.status).toBe(400);
  expect(answer.json()).toEqual({
    statusCode: 400,
    error: expect.any(String),
    message: expect.stringMatching(message),
  });
}

function expectError(answer: HttpAnswer, status: number, error: string): void {
  expect({ status: answer.status, body: answer.json() }).toEqual({
    status,
    body: { statusCode: status, error, message: expect.stringMatching(/\S/) },
  });
}

/** Tables only requests write: an admin read or a refused admin action must leave every one unchanged. */
const REQUEST_WRITTEN_TABLES = [
  'payment_order',
  'order_status_change',
  'payment_callback',
  'callback_delivery',
  'payment_anomaly',
  'refund',
  'admin_audit',
] as const;

async function rowCounts(): Promise<Record<string, number>> {
  // Suites run one after another (--runInBand) and this one makes no writes in the background.
  const counts = await Promise.all(REQUEST_WRITTEN_TABLES.map((t) => count(pool, `SELECT COUNT(*) FROM ${t}`)));
  return Object.fromEntries(REQUEST_WRITTEN_TABLES.map((t, i) => [t, counts[i]]));
}

/** Any Authorization header at all (client.admin only sends well-formed Bearer ones). */
async function sendAuthorized(
  baseUrl: string,
  method: string,
  path: string,
  authorization: string | undefined,
  body?: unknown,
): Promise<HttpAnswer> {
  const headers: Record<string, string> = {};
  if (authorization !== undefined) headers.authorization = authorization;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(baseUrl + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text, json: <T>() => JSON.parse(text) as T };
}

/** A paid order with one delivery: something real behind every admin route. */
async function paidOrderWithDelivery(): Promise<{ payment: PaymentSpec; deliveryUrl: string }> {
  const payment = { orderNo: await registerOrder(2500), transactionId: uniqueId('T'), amount: 2500 };
  await pay(wechatpay, payment);
  const detail = await read<OrderDetail>(`/admin/orders/${payment.orderNo}`);
  return { payment, deliveryUrl: detail.deliveries.items[0].rawPayloadUrl };
}

/**
 * Every admin route, with a request that would succeed (or, for the refund, create a refund) if allowed;
 * the actions on one refund name a refund that does not exist, so that even an allowed one changes nothing.
 */
function everyAdminRoute(target: { payment: PaymentSpec; deliveryUrl: string }) {
  return [
    { method: 'GET', path: '/admin/anomalies' },
    { method: 'GET', path: '/admin/refunds' },
    { method: 'POST', path: '/admin/refunds/NOSUCHREFUND/approve' },
    { method: 'POST', path: '/admin/refunds/NOSUCHREFUND/reject', body: { reason: 'admin API access test' } },
    { method: 'POST', path: '/admin/refunds/NOSUCHREFUND/resolve-offline', body: { reason: 'admin API access test' } },
    { method: 'GET', path: `/admin/orders/${target.payment.orderNo}` },
    { method: 'GET', path: target.deliveryUrl },
    { method: 'GET', path: '/admin/stats/callbacks' },
    {
      method: 'POST',
      path: '/admin/refunds/emergency',
      body: {
        orderNo: target.payment.orderNo,
        transactionId: target.payment.transactionId,
        reason: 'admin API access test',
      },
    },
  ];
}

/** `Ab3` → `aB3`: the same token in another case. */
function swapCase(text: string): string {
  const swapped = [...text].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('');
  expect(swapped).not.toBe(text);
  return swapped;
}

/** Refund APIs nobody listens on: nothing in this suite may ever reach a real payment platform. */
const NO_REFUND_API = {
  WECHATPAY_API_BASE_URL: 'http://127.0.0.1:9',
  ALIPAY_GATEWAY_URL: 'http://127.0.0.1:9/gateway.do',
};

describe('admin API', () => {
  beforeAll(async () => {
    platforms = await createTestPlatforms();
    running = await startApp({ ...notificationsOnly(platforms.env), ...NO_REFUND_API });
    client = new TestClient(running.url, platforms);
    pool = testDatabasePool();
  });
  afterAll(async () => {
    await running?.close();
    await pool?.end();
  });

  // ---------------------------------------------------------------------------------------- access control

  describe('access', () => {
    const UNAUTHENTICATED: Array<[string, (p: TestPlatforms) => string | undefined]> = [
      ['no Authorization header', () => undefined],
      ['an empty bearer token', () => 'Bearer '],
      ['a wrong bearer token', () => `Bearer ${randomAlphanumeric(40)}`],
      ['the admin token with the Basic scheme', (p) => `Basic ${p.admins.admin}`],
      ['the admin token without a scheme', (p) => p.admins.admin],
      ['the admin token in another case', (p) => `Bearer ${swapCase(p.admins.admin)}`],
      ['the admin token plus a trailing character', (p) => `Bearer ${p.admins.admin}x`],
      ['the viewer token minus its last character', (p) => `Bearer ${p.admins.viewer.slice(0, -1)}`],
      ['the internal API token', (p) => `Bearer ${p.internalApiToken}`],
    ];

    it.each(UNAUTHENTICATED)(
      'should answer 401 Unauthenticated to %s on every admin route, and write nothing',
      async (_name, authorization) => {
        const routes = everyAdminRoute(await paidOrderWithDelivery());
        const header = authorization(platforms);
        const before = await rowCounts();

        for (const route of routes) {
          const answer = await sendAuthorized(running.url, route.method, route.path, header, route.body);
          expectError(answer, 401, 'Unauthenticated');
          for (const token of Object.values(platforms.admins)) expect(answer.body).not.toContain(token);
        }

        expect(await rowCounts()).toEqual(before);
      },
    );

    it('should let every configured operator read, viewers and admins alike', async () => {
      const { payment, deliveryUrl } = await paidOrderWithDelivery();
      for (const token of Object.values(platforms.admins)) {
        // read() fails the test on anything but 200.
        for (const route of everyAdminRoute({ payment, deliveryUrl }).filter((r) => r.method === 'GET')) {
          await read(route.path, token);
        }
        expect((await read<OrderDetail>(`/admin/orders/${payment.orderNo}`, token)).order.orderNo).toBe(
          payment.orderNo,
        );
      }
    });

    it('should answer 403 Forbidden to a viewer asking for an emergency refund, and write nothing', async () => {
      const payment = await makeAnomaly('DUPLICATE_PAYMENT', wechatpay);
      const before = await rowCounts();

      const answer = await client.admin('POST', '/admin/refunds/emergency', platforms.admins.viewer, {
        orderNo: payment.orderNo,
        transactionId: payment.transactionId,
        reason: 'refund the duplicate payment',
      });

      expectError(answer, 403, 'Forbidden');
      // Nothing is written but the audit of the refused attempt.
      expect(await rowCounts()).toEqual({ ...before, admin_audit: before.admin_audit + 1 });
      expect(
        await count(pool, "SELECT COUNT(*) FROM admin_audit WHERE operator_id = 'victor' AND target = ?", [
          `order:${payment.orderNo}`,
        ]),
      ).toBe(1);
      expect(await count(pool, 'SELECT COUNT(*) FROM refund WHERE order_no = ?', [payment.orderNo])).toBe(0);
      expect((await read<OrderDetail>(`/admin/orders/${payment.orderNo}`)).refunds).toEqual([]);
    });

    it('should answer 503 FeatureDisabled on every admin route when ADMIN_TOKENS is not set, and write nothing', async () => {
      const target = await paidOrderWithDelivery();
      const env = Object.fromEntries(
        Object.entries({ ...platforms.env, ...NO_REFUND_API }).filter(([name]) => name !== 'ADMIN_TOKENS'),
      );
      const withoutAdmins = await startApp(env);
      try {
        const before = await rowCounts();
        for (const route of everyAdminRoute(target)) {
          for (const authorization of [undefined, `Bearer ${platforms.admins.admin}`, 'Bearer whatever']) {
            const answer = await sendAuthorized(withoutAdmins.url, route.method, route.path, authorization, route.body);
            expectError(answer, 503, 'FeatureDisabled');
          }
        }
        expect(await rowCounts()).toEqual(before);
      } finally {
        await withoutAdmins.close();
      }
    });

    it('should never write a token to the log, valid or not', async () => {
      const target = await paidOrderWithDelivery();
      const wrongToken = randomAlphanumeric(40);
      const otherCase = swapCase(platforms.admins.admin2);
      const attempts = [
        ...Object.values(platforms.admins).map((token) => `Bearer ${token}`),
        `Bearer ${wrongToken}`,
        `Bearer ${otherCase}`,
        `Bearer ${platforms.admins.admin}x`,
        `Basic ${platforms.admins.viewer}`,
      ];
      // The refund is asked for without a reason: refused after authentication (400, or 403 for the viewer),
      // so that no refund is ever made.
      const routes = [
        ...everyAdminRoute(target).filter((r) => r.method === 'GET'),
        { method: 'POST', path: '/admin/refunds/emergency', body: { orderNo: target.payment.orderNo } },
      ];
      const sent: string[] = [];
      const app = await startLoggingAppProcess({ ...platforms.env, ...NO_REFUND_API, LOG_LEVEL: 'trace' });
      try {
        for (const authorization of attempts) {
          for (const route of routes) {
            const answer = await sendAuthorized(app.url, route.method, route.path, authorization, route.body);
            sent.push(`${route.method} ${route.path} → ${answer.status}`);
          }
        }
        await eventually('every request to be logged', () => loggedRequests(app.output()).length >= sent.length);
      } finally {
        await app.stop();
      }

      // Proof that the log was captured: one line per request, each with its answer.
      expect(loggedRequests(app.output())).toEqual(sent);
      expect(new Set(sent.map((line) => line.replace(/.* → /, '')))).toEqual(new Set(['200', '400', '401', '403']));
      const log = app.output();
      for (const secret of [...Object.values(platforms.admins), wrongToken, otherCase]) {
        expect(log.includes(secret)).toBe(false);
      }
    });

    it("should log each request under the caller's X-Request-Id, and under a fresh id when it is unusable", async () => {
      const app = await startLoggingAppProcess({ ...platforms.env, ...NO_REFUND_API, LOG_LEVEL: 'info' });
      const ids = { given: `corr-${randomAlphanumeric(12)}`, unusable: `bad id ${randomAlphanumeric(8)}` };
      try {
        for (const id of Object.values(ids)) {
          await fetch(`${app.url}/admin/anomalies`, {
            headers: { authorization: `Bearer ${platforms.admins.viewer}`, 'x-request-id': id },
          });
        }
        await eventually('both requests to be logged', () => loggedRequests(app.output()).length >= 2);
      } finally {
        await app.stop();
      }
      const requestIds = app
        .output()
        .split('\n')
        .filter((line) => line.includes('"request completed"'))
        .map((line) => (JSON.parse(line) as { req: { id: string } }).req.id);
      expect(requestIds).toHaveLength(2);
      expect(requestIds[0]).toBe(ids.given);
      expect(requestIds[1]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    });

    it("should log a notification once, as its outcome under the caller's X-Request-Id, and no request line for /notify, /health or /metrics", async () => {
      const app = await startLoggingAppProcess({ ...platforms.env, ...NO_REFUND_API, LOG_LEVEL: 'info' });
      const requestId = `corr-${randomAlphanumeric(12)}`;
      const refusedId = `corr-${randomAlphanumeric(12)}`;
      const orderNo = uniqueId('LG');
      const transactionId = uniqueId('T');
      try {
        const there = new TestClient(app.url, platforms);
        expect((await there.registerOrder({ orderNo, amount: 100 })).status).toBe(201);
        const payment = there.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 100 });
        const paid = await there.postWechatpay({
          ...payment,
          headers: { ...payment.headers, 'x-request-id': requestId },
        });
        expect(paid.status).toBe(204);
        const forged = await there.postWechatpay({
          ...payment,
          body: payment.body.replace('{', '{ '), // a byte the signature covers
          headers: { ...payment.headers, 'x-request-id': refusedId },
        });
        expect(forged.status).toBe(401);
        expect((await fetch(`${app.url}/health/live`)).status).toBe(200);
        await fetch(`${app.managementUrl}/metrics`);
        await eventually(
          'the registration, the outcome and the refusal to be logged',
          () =>
            app.output().includes('"outcome":"PAID"') &&
            app.output().includes(refusedId) &&
            loggedRequests(app.output()).length >= 1,
        );
      } finally {
        await app.stop();
      }
      const lines = logLines<{ msg?: string; orderNo?: string; req?: { id: string } }>(app.output());
      expect(lines.filter((l) => l.orderNo === orderNo).map((l) => [l.msg, l.req?.id])).toEqual([
        ['WECHATPAY TRANSACTION.SUCCESS: PAID', requestId],
      ]);
      // A refusal is logged once too, by the error filter, under the caller's id.
      expect(lines.filter((l) => l.req?.id === refusedId).map((l) => l.msg)).toEqual([
        expect.stringMatching(/^POST \/notify\/wechatpay → 401 /),
      ]);
      expect(loggedRequests(app.output())).toEqual(['POST /payment-orders → 201']);
    });

    it("should bind the request's logger on the other routes: a line logged while serving carries the caller's id", async () => {
      const app = await startLoggingAppProcess({ ...platforms.env, ...NO_REFUND_API, LOG_LEVEL: 'info' });
      const requestId = `corr-${randomAlphanumeric(12)}`;
      try {
        const refused = await fetch(`${app.url}/admin/anomalies`, {
          headers: { authorization: `Bearer ${randomAlphanumeric(40)}`, 'x-request-id': requestId },
        });
        expect(refused.status).toBe(401);
        await eventually('the refusal to be logged', () => loggedRequests(app.output()).length >= 1);
      } finally {
        await app.stop();
      }
      const lines = logLines<{ msg?: string; context?: string; req?: { id: string; url: string } }>(app.output());
      // HttpErrorFilter's line is logged through nestjs-pino with no request in hand: only the
      // request-bound logger (pino-http's child, in nestjs-pino's AsyncLocalStorage) gives it the id.
      expect(lines.filter((l) => l.context === 'HttpErrorFilter').map((l) => [l.msg, l.req?.id, l.req?.url])).toEqual([
        [expect.stringMatching(/^GET \/admin\/anomalies → 401 /), requestId, '/admin/anomalies'],
      ]);
      expect(loggedRequests(app.output())).toEqual(['GET /admin/anomalies → 401']);
    });

    it('should answer 404 for an order number longer than any order can have', async () => {
      const orderNo = uniqueId('PO').padEnd(64, '0');
      expect((await client.registerOrder({ orderNo, amount: 100 })).status).toBe(201);
      expect((await client.admin('GET', `/admin/orders/${orderNo}`, platforms.admins.viewer)).status).toBe(200);

      const answer = await client.admin('GET', `/admin/orders/${orderNo}X`, platforms.admins.viewer);
      expect(answer.status).toBe(404);
      expect(answer.json()).toMatchObject({ error: 'OrderNotFound' });
    });
  });

  // ---------------------------------------------------------------------------------------------- anomalies

  describe('GET /admin/anomalies', () => {
    // What settlement records however often a payment is delivered, and the listing's filters, time
    // window, pages and default page, are in test/medium/admin-queries.medium-spec.ts and
    // admin-views.medium-spec.ts; here, the listing over HTTP.
    it.each(EACH_CHANNEL)(
      'should show a %s anomaly in the listing with every field of its view',
      async (name, channel) => {
        const since = new Date();
        const offending = await makeAnomaly('DUPLICATE_PAYMENT', channel);

        const listed = await listedAnomaliesOf(offending.orderNo, since);

        expect(listed).toHaveLength(1);
        expectAnomalyView(listed[0], { type: 'DUPLICATE_PAYMENT', channel: name, offending, orderAmount: 3000 });
      },
    );

    it.each([
      ['an unknown type', { type: 'REFUNDED_TWICE' }, /^type must/],
      ['a type in lower case', { type: 'duplicate_payment' }, /^type must/],
      ['an unknown status', { status: 'CLOSED' }, /^status must/],
      ['a from that is no date', { from: 'yesterday' }, /^from must/],
      ['a from with an impossible month', { from: '2026-13-01T00:00:00Z' }, /^from must/],
      ['a to that is no date', { to: '1732924800' }, /^to must/],
      ['from equal to to', { from: '2026-11-29T00:00:00Z', to: '2026-11-29T00:00:00Z' }, /from.*to/],
      ['from after to', { from: '2026-11-30T00:00:00Z', to: '2026-11-29T00:00:00Z' }, /from.*to/],
      ['limit 0', { limit: '0' }, /^limit must/],
      ['limit 201', { limit: '201' }, /^limit must/],
      ['a fractional limit', { limit: '1.5' }, /^limit must/],
      ['a limit that is no number', { limit: 'ten' }, /^limit must/],
      ['a cursor that is no id', { cursor: 'abc' }, /^cursor must/],
      ['a cursor of 0', { cursor: '0' }, /^cursor must/],
      ['a negative cursor', { cursor: '-5' }, /^cursor must/],
      ['an unknown query parameter', { orderNo: 'PO1' }, /orderNo/],
    ])('should answer 400 naming the problem to %s', async (_name, params, message) => {
      const before = await rowCounts();
      expectBadRequest(
        await client.admin('GET', withQuery('/admin/anomalies', params), platforms.admins.viewer),
        message,
      );
      expect(await rowCounts()).toEqual(before);
    });
  });

  // ------------------------------------------------------------------------------------------- order detail

  describe('GET /admin/orders/:orderNo', () => {
    // What the order view shows of an order, its payments, deliveries and anomalies is in
    // test/medium/admin-views.medium-spec.ts; here, the answer to an unknown order.
    it('should answer 404 OrderNotFound for an unknown order, and create nothing', async () => {
      const orderNo = uniqueId('PO');
      const answer = await client.admin('GET', `/admin/orders/${orderNo}`, platforms.admins.viewer);
      expectError(answer, 404, 'OrderNotFound');
      expect(answer.json().message).toEqual(expect.stringContaining(orderNo));
      expect(await count(pool, 'SELECT COUNT(*) FROM payment_order WHERE order_no = ?', [orderNo])).toBe(0);
    });
  });

  // ----------------------------------------------------------------------------------------------- deliveries

  describe('GET /admin/deliveries/:id', () => {
    // The exact bytes and kept headers of a delivery, and a viewer's masked copy, are in
    // test/medium/admin-views.medium-spec.ts; the audit of an admin's read in admin-audit.e2e-spec.ts.
    it.each([
      ['an id no delivery has', '9000000000000000000'],
      ['an id beyond the BIGINT range', '9999999999999999999'],
      ['id 0', '0'],
      ['a negative id', '-1'],
      ['a word', 'abc'],
      ['a number in exponent notation', '1e3'],
      ['digits followed by text', '12abc'],
    ])('should answer 404 DeliveryNotFound to %s', async (_name, id) => {
      const answer = await client.admin('GET', `/admin/deliveries/${id}`, platforms.admins.viewer);
      expectError(answer, 404, 'DeliveryNotFound');
    });
  });

  // -------------------------------------------------------------------------------------------------- stats

  describe('GET /admin/stats/callbacks', () => {
    // What the statistics count, their default range and their 2000 buckets are in
    // test/medium/admin-queries.medium-spec.ts and admin-views.medium-spec.ts; here, the refusals.
    it.each([
      ['a from that is no date', { from: 'last week' }, /^from must/],
      ['a to that is no date', { to: '2026-11-31T25:00:00Z' }, /^to must/],
      ['an unknown bucket', { bucket: 'week' }, /^bucket must/],
      ['a bucket in upper case', { bucket: 'HOUR' }, /^bucket must/],
      ['from equal to to', { from: '2026-11-29T00:00:00Z', to: '2026-11-29T00:00:00Z' }, /from.*to/],
      ['from after to', { from: '2026-11-29T01:00:00Z', to: '2026-11-29T00:00:00Z' }, /from.*to/],
      ['2001 hour buckets', { from: '2026-01-01T00:00:00Z', to: '2026-03-25T09:00:00Z' }, /2000/],
      ['2001 day buckets', { from: '2020-01-01T00:00:00Z', to: '2025-06-24T00:00:00Z', bucket: 'day' }, /2000/],
      ['an unknown query parameter', { channel: 'ALIPAY' }, /channel/],
    ])('should answer 400 naming the problem to %s', async (_name, params, message) => {
      expectBadRequest(
        await client.admin('GET', withQuery('/admin/stats/callbacks', params), platforms.admins.viewer),
        message,
      );
    });
  });

  // ------------------------------------------------------------------------------------------------ no writes

  it('should write nothing on any read, answered or refused', async () => {
    const { payment, deliveryUrl } = await paidOrderWithDelivery();
    await makeAnomaly('AMOUNT_MISMATCH', alipay);
    const before = await rowCounts();

    const reads = [
      '/admin/anomalies',
      '/admin/anomalies?type=AMOUNT_MISMATCH&status=OPEN&limit=1',
      '/admin/anomalies?limit=0',
      `/admin/orders/${payment.orderNo}`,
      `/admin/orders/${uniqueId('PO')}`,
      deliveryUrl,
      '/admin/deliveries/abc',
      '/admin/stats/callbacks',
      '/admin/stats/callbacks?bucket=day',
      '/admin/stats/callbacks?bucket=week',
    ];
    const statuses: number[] = [];
    for (const token of [...Object.values(platforms.admins), 'not-a-token']) {
      for (const path of reads) statuses.push((await client.admin('GET', path, token)).status);
    }

    expect(new Set(statuses)).toEqual(new Set([200, 400, 401, 404]));
    // The two admins' unmasked reads of the delivery are audited, nothing else is written.
    expect(await rowCounts()).toEqual({ ...before, admin_audit: before.admin_audit + 2 });
  });
});

// -------------------------------------------------------------------------------------------- log capture

interface LoggingAppProcess {
  url: string;
  managementUrl: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** SIGTERM (graceful shutdown, so its last log lines are written), SIGKILL if it hangs. */
  stop(): Promise<void>;
}

/**
 * The real app in a child process (as test/support/app-process.ts starts it), with every byte of its
 * output captured from the first one on: pino writes the logs to stdout.
 */
async function startLoggingAppProcess(env: Record<string, string>): Promise<LoggingAppProcess> {
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', join(__dirname, 'support/app-main.ts')],
    {
      cwd: join(__dirname, '..'),
      env: { ...process.env, ...ANY_MANAGEMENT_PORT, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  let hasExited = false;
  void exited.then(() => (hasExited = true));

  const stop = async () => {
    if (hasExited) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(killer);
  };
  try {
    await eventually('the app process to listen', () => {
      if (hasExited) throw new Error(`app process exited before listening:\n${output}`);
      return /listening \d+ management \d+/.test(output);
    });
  } catch (error) {
    await stop();
    throw error;
  }
  const [, port, managementPort] = /listening (\d+) management (\d+)/.exec(output)!;
  return {
    url: `http://127.0.0.1:${port}`,
    managementUrl: `http://127.0.0.1:${managementPort}`,
    output: () => output,
    stop,
  };
}

/** The JSON lines of a stopped process's output (pino's), parsed. */
function logLines<T>(output: string): T[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as T);
}

/** pino-http's line per answered request, as `METHOD /path → status`. */
function loggedRequests(output: string): string[] {
  // The text after the last newline may be a line still being written.
  return output
    .split('\n')
    .slice(0, -1)
    .flatMap((line) => {
      if (!line.startsWith('{')) return [];
      const entry = JSON.parse(line) as {
        msg?: string;
        req?: { method: string; url: string };
        res?: { statusCode: number };
      };
      return (entry.msg === 'request completed' || entry.msg === 'request errored') && entry.req && entry.res
        ? [`${entry.req.method} ${entry.req.url} → ${entry.res.statusCode}`]
        : [];
    });
}
