import { Channel } from '../src/domain/notification';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Pool } from 'mysql2/promise';
import { randomAlphanumeric, signWechatpayBody } from '../tools/simulator/platform-signers';
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
import { Delivery, notifyChannels, NotifyChannel, PaymentSpec, recentSecond } from './support/notify-channels';

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
  /** An admin's decision to close it without a refund (issue 39, item 1); none here. */
  resolution: null;
}

interface AnomalyPage {
  items: AnomalyView[];
  nextCursor: string | null;
}

interface DeliverySummary {
  id: string;
  channel: Channel;
  eventType: string;
  transactionId: string | null;
  outcome: string;
  receivedAt: string;
  processingMs: number | null;
  rawPayloadUrl: string;
}

interface DeliveryDetail extends DeliverySummary {
  orderNo: string | null;
  headers: Record<string, string>;
  rawBody: string;
  rawBodyBase64: string;
  rawPrunedAt: string | null;
  encryptedContent: boolean;
}

interface OrderDetail {
  order: {
    orderNo: string;
    userId: string;
    status: string;
    amount: number;
    currency: string;
    channel: Channel | null;
    transactionId: string | null;
    paidAt: string | null;
    createdAt: string;
    updatedAt: string;
  };
  history: Array<{
    fromStatus: string | null;
    toStatus: string;
    event: string;
    cause: string | null;
    changedAt: string;
  }>;
  payments: Array<{
    channel: Channel;
    transactionId: string;
    amount: number;
    currency: string;
    refundReservedAmount: number;
    firstReceivedAt: string;
  }>;
  deliveries: {
    count: number;
    firstReceivedAt: string | null;
    lastReceivedAt: string | null;
    items: DeliverySummary[];
  };
  anomalies: AnomalyView[];
  refunds: unknown[];
}

interface StatsRow {
  bucket: string;
  channel: Channel;
  deliveries: number;
  paymentDeliveries: number;
  distinctPayments: number;
  duplicateDeliveries: number;
  duplicateRate: number;
  avgProcessingMs: number | null;
  maxProcessingMs: number | null;
}

interface CallbackStats {
  from: string;
  to: string;
  bucket: 'hour' | 'day';
  rows: StatsRow[];
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const anInstant = () => expect.stringMatching(ISO_INSTANT);
const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;

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

/** The account each channel's notifications in this suite are paid through. */
function merchantIdOf(channel: string): string {
  return channel === 'WECHATPAY' ? platforms.wechatpay.mchid : platforms.alipay.appId;
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
      // Issue 35, item 7: nothing is written but the audit of the refused attempt.
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
    // window and pages, are in test/medium/admin-queries.medium-spec.ts; here, the listing over HTTP.
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

    it('should list 50 by default, newest first', async () => {
      await makeAnomaly('DUPLICATE_PAYMENT', wechatpay);
      const page = await read<AnomalyPage>('/admin/anomalies');
      const total = await count(pool, 'SELECT COUNT(*) FROM payment_anomaly');
      expect(page.items).toHaveLength(Math.min(total, 50));
      expect(page.nextCursor === null).toBe(total <= 50);
      const ids = page.items.map((a) => Number(a.id));
      expect(ids).toEqual([...ids].sort((a, b) => b - a));
    });

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
    it.each(EACH_CHANNEL)(
      'should show a %s-paid order with its history, its payment and each of its three deliveries',
      async (name, channel) => {
        const orderNo = await registerOrder(4200, 'u-admin-view');
        const payment = { orderNo, transactionId: uniqueId('T'), amount: 4200, paidAt: recentSecond() };
        const sent = await pay(channel, payment, 3);

        const detail = await read<OrderDetail>(`/admin/orders/${orderNo}`);

        expect(detail.order).toEqual({
          orderNo,
          userId: 'u-admin-view',
          status: 'PAID',
          amount: 4200,
          currency: 'CNY',
          channel: name,
          merchantId: merchantIdOf(name),
          subMerchantId: null,
          channelOrderTime: null,
          transactionId: payment.transactionId,
          paidAt: payment.paidAt.toISOString(),
          createdAt: anInstant(),
          updatedAt: anInstant(),
        });
        expect(detail.history).toEqual([
          { fromStatus: null, toStatus: 'WAIT_PAY', event: 'REGISTER', cause: null, changedAt: anInstant() },
          {
            fromStatus: 'WAIT_PAY',
            toStatus: 'PAID',
            event: 'PAY',
            cause: payment.transactionId,
            changedAt: anInstant(),
          },
        ]);
        expect(detail.history[0].changedAt).toBe(detail.order.createdAt);
        expect(detail.history[1].changedAt).toBe(detail.order.updatedAt);
        expect(detail.payments).toEqual([
          {
            channel: name,
            transactionId: payment.transactionId,
            merchantId: merchantIdOf(name),
            amount: 4200,
            currency: 'CNY',
            refundReservedAmount: 0,
            firstReceivedAt: anInstant(),
          },
        ]);
        expect(detail.anomalies).toEqual([]);
        expect(detail.refunds).toEqual([]);

        const { deliveries } = detail;
        expect(deliveries.count).toBe(3);
        expect(deliveries.items.map((d) => d.outcome)).toEqual(['PAID', 'DUPLICATE', 'DUPLICATE']);
        for (const item of deliveries.items) {
          expect(item).toEqual({
            id: expect.stringMatching(/^[1-9]\d*$/),
            channel: name,
            eventType: channel.paymentEventType,
            transactionId: payment.transactionId,
            outcome: expect.any(String),
            receivedAt: anInstant(),
            processingMs: expect.any(Number),
            rawPayloadUrl: `/admin/deliveries/${item.id}`,
          });
          expect(item.processingMs).toBeGreaterThanOrEqual(0);
        }
        const receivedAt = deliveries.items.map((d) => Date.parse(d.receivedAt));
        expect(deliveries.firstReceivedAt).toBe(new Date(Math.min(...receivedAt)).toISOString());
        expect(deliveries.lastReceivedAt).toBe(new Date(Math.max(...receivedAt)).toISOString());

        // Each delivery's raw payload is the one posted, in the order posted (an admin sees the exact bytes).
        const raw = await Promise.all(
          deliveries.items.map((d) => read<DeliveryDetail>(d.rawPayloadUrl, platforms.admins.admin)),
        );
        expect(raw.map((d) => d.rawBody)).toEqual(sent.map((d) => d.body));
      },
    );

    it('should show a closed order: registered, then closed, with no payment and no delivery', async () => {
      const orderNo = await registerOrder(1500);
      await closeOrder(orderNo);

      const detail = await read<OrderDetail>(`/admin/orders/${orderNo}`);

      expect(detail.order).toMatchObject({
        orderNo,
        status: 'CLOSED',
        channel: null,
        transactionId: null,
        paidAt: null,
      });
      expect(detail.history).toEqual([
        { fromStatus: null, toStatus: 'WAIT_PAY', event: 'REGISTER', cause: null, changedAt: anInstant() },
        { fromStatus: 'WAIT_PAY', toStatus: 'CLOSED', event: 'CLOSE', cause: null, changedAt: anInstant() },
      ]);
      expect(detail.payments).toEqual([]);
      expect(detail.deliveries).toEqual({ count: 0, firstReceivedAt: null, lastReceivedAt: null, items: [] });
      expect(detail.anomalies).toEqual([]);
      expect(detail.refunds).toEqual([]);
    });

    it('should show a payment after the close as the anomaly it is, leaving the order and its history closed', async () => {
      const since = new Date();
      const offending = await makeAnomaly('PAID_AFTER_CLOSE', alipay);

      const detail = await read<OrderDetail>(`/admin/orders/${offending.orderNo}`);

      expect(detail.order).toMatchObject({ status: 'CLOSED', channel: null, transactionId: null, paidAt: null });
      expect(detail.history.map((h) => [h.fromStatus, h.toStatus, h.event])).toEqual([
        [null, 'WAIT_PAY', 'REGISTER'],
        ['WAIT_PAY', 'CLOSED', 'CLOSE'],
      ]);
      expect(detail.payments).toEqual([
        expect.objectContaining({ channel: 'ALIPAY', transactionId: offending.transactionId }),
      ]);
      expect(detail.deliveries.count).toBe(1);
      expect(detail.deliveries.items.map((d) => d.outcome)).toEqual(['PAID_AFTER_CLOSE']);
      expect(detail.anomalies).toHaveLength(1);
      expectAnomalyView(detail.anomalies[0], {
        type: 'PAID_AFTER_CLOSE',
        channel: 'ALIPAY',
        offending,
        orderAmount: offending.amount,
      });
      expect(detail.anomalies).toEqual(await listedAnomaliesOf(offending.orderNo, since));
    });

    it('should show both payments of an order paid twice, across channels, and the second as DUPLICATE_PAYMENT', async () => {
      const orderNo = await registerOrder(5000);
      const first = { orderNo, transactionId: uniqueId('T'), amount: 5000 };
      const second = { orderNo, transactionId: uniqueId('A'), amount: 5000 };
      await pay(wechatpay, first);
      await pay(alipay, second, 2);

      const detail = await read<OrderDetail>(`/admin/orders/${orderNo}`);

      expect(detail.order).toMatchObject({ status: 'PAID', channel: 'WECHATPAY', transactionId: first.transactionId });
      expect(detail.history.map((h) => [h.event, h.cause])).toEqual([
        ['REGISTER', null],
        ['PAY', first.transactionId],
      ]);
      expect(detail.payments.map((p) => [p.channel, p.transactionId, p.amount])).toEqual([
        ['WECHATPAY', first.transactionId, 5000],
        ['ALIPAY', second.transactionId, 5000],
      ]);
      expect(detail.deliveries.count).toBe(3);
      expect(detail.deliveries.items.map((d) => [d.channel, d.outcome])).toEqual([
        ['WECHATPAY', 'PAID'],
        ['ALIPAY', 'DUPLICATE_PAYMENT'],
        ['ALIPAY', 'DUPLICATE'],
      ]);
      expect(detail.anomalies).toHaveLength(1);
      expectAnomalyView(detail.anomalies[0], {
        type: 'DUPLICATE_PAYMENT',
        channel: 'ALIPAY',
        offending: second,
        orderAmount: 5000,
      });
    });

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
    it.each(EACH_CHANNEL)(
      'should give back the exact bytes and the kept headers of a %s delivery',
      async (name, channel) => {
        const payment = { orderNo: await registerOrder(6600), transactionId: uniqueId('T'), amount: 6600 };
        const [sent] = await pay(channel, payment);
        const [summary] = (await read<OrderDetail>(`/admin/orders/${payment.orderNo}`)).deliveries.items;

        const delivery = await read<DeliveryDetail>(summary.rawPayloadUrl, platforms.admins.admin);

        expect(delivery).toEqual({
          ...summary,
          orderNo: payment.orderNo,
          headers: expect.any(Object),
          rawBody: sent.body,
          rawBodyBase64: Buffer.from(sent.body, 'utf8').toString('base64'),
          rawPrunedAt: null,
          // WeChat Pay APIv3 encrypts the resource (GET /admin/deliveries/:id/decrypted opens it); Alipay nothing.
          encryptedContent: name === 'WECHATPAY',
        });
        expect(delivery).toMatchObject({ channel: name, outcome: 'PAID', transactionId: payment.transactionId });
        expect(Buffer.compare(Buffer.from(delivery.rawBodyBase64, 'base64'), Buffer.from(sent.body, 'utf8'))).toBe(0);
        for (const header of channel.keptHeaders) expect(delivery.headers[header]).toBe(sent.headers[header]);
      },
    );

    it("should mask the payer's identifiers of an Alipay delivery for a viewer, and only those", async () => {
      const payment = { orderNo: await registerOrder(6800), transactionId: uniqueId('T'), amount: 6800 };
      const [sent] = await pay(alipay, payment);
      const [summary] = (await read<OrderDetail>(`/admin/orders/${payment.orderNo}`)).deliveries.items;
      const buyerId = new URLSearchParams(sent.body).get('buyer_id')!;
      expect(buyerId).toMatch(/^2088\d{12}$/);

      const asViewer = await read<DeliveryDetail>(summary.rawPayloadUrl, platforms.admins.viewer);
      const asAdmin = await read<DeliveryDetail>(summary.rawPayloadUrl, platforms.admins.admin);

      expect(asAdmin.rawBody).toBe(sent.body);
      expect(asViewer.rawBody).not.toContain(buyerId);
      expect(Buffer.from(asViewer.rawBodyBase64, 'base64').toString('latin1')).not.toContain(buyerId);
      const masked = new URLSearchParams(asViewer.rawBody);
      expect(masked.get('buyer_id')).toBe(`20${'*'.repeat(12)}${buyerId.slice(-2)}`);
      masked.delete('buyer_id');
      const original = new URLSearchParams(sent.body);
      original.delete('buyer_id');
      expect(masked.toString()).toBe(original.toString());
    });

    it('should keep a WeChat Pay body’s non-ASCII text and unusual whitespace byte for byte', async () => {
      const payment = { orderNo: await registerOrder(6700), transactionId: uniqueId('T'), amount: 6700 };
      const genuine = wechatpay.payment(payment);
      const body = JSON.stringify({ ...JSON.parse(genuine.body), summary: '支付成功 ✓' }, null, '\t');
      const sent = { headers: signWechatpayBody(platforms.wechatpay.publicKeySigner, body), body };
      wechatpay.expectAck(await wechatpay.post(sent));
      const [summary] = (await read<OrderDetail>(`/admin/orders/${payment.orderNo}`)).deliveries.items;

      const delivery = await read<DeliveryDetail>(summary.rawPayloadUrl);

      expect(delivery.rawBody).toBe(body);
      expect(Buffer.from(delivery.rawBodyBase64, 'base64').equals(Buffer.from(body, 'utf8'))).toBe(true);
      expect(delivery.headers).toMatchObject({
        'wechatpay-signature': sent.headers['wechatpay-signature'],
        'wechatpay-serial': sent.headers['wechatpay-serial'],
        'wechatpay-timestamp': sent.headers['wechatpay-timestamp'],
        'wechatpay-nonce': sent.headers['wechatpay-nonce'],
      });
    });

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
    type Bucket = 'hour' | 'day';
    function bucketStart(bucket: Bucket, at: Date): Date {
      const span = bucket === 'hour' ? HOUR_MS : DAY_MS;
      return new Date(Math.floor(at.getTime() / span) * span);
    }

    // Counting deliveries, payments and duplicates per bucket, and the range's bounds, are in
    // test/medium/admin-queries.medium-spec.ts; here, the defaults and the limits of the query.
    it('should default to the last 24 hours up to now, by hour', async () => {
      const paying = Date.now();
      await pay(alipay, { orderNo: await registerOrder(100), transactionId: uniqueId('T'), amount: 100 });
      const asked = Date.now();
      const stats = await read<CallbackStats>('/admin/stats/callbacks');
      const answered = Date.now();

      expect(stats.bucket).toBe('hour');
      expect(Date.parse(stats.to)).toBeGreaterThanOrEqual(asked);
      expect(Date.parse(stats.to)).toBeLessThanOrEqual(answered);
      expect(Date.parse(stats.to) - Date.parse(stats.from)).toBe(DAY_MS);
      for (const row of stats.rows) {
        expect(row.bucket).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:00:00\.000Z$/);
        expect(Date.parse(row.bucket)).toBeGreaterThanOrEqual(bucketStart('hour', new Date(stats.from)).getTime());
        expect(Date.parse(row.bucket)).toBeLessThan(Date.parse(stats.to));
      }
      // The payment just made is in the hour it was made in (this one, or the last if an hour began since).
      const paymentHour = bucketStart('hour', new Date(paying)).getTime();
      expect(stats.rows.some((r) => r.channel === 'ALIPAY' && Date.parse(r.bucket) >= paymentHour)).toBe(true);
    });

    it('should accept up to 2000 buckets', async () => {
      const to = bucketStart('hour', new Date());
      const hours2000 = { from: new Date(to.getTime() - 2000 * HOUR_MS).toISOString(), to: to.toISOString() };
      const hours2001 = { from: new Date(to.getTime() - 2001 * HOUR_MS).toISOString(), to: to.toISOString() };
      expect((await read<CallbackStats>(withQuery('/admin/stats/callbacks', hours2000))).bucket).toBe('hour');
      expect(
        (await read<CallbackStats>(withQuery('/admin/stats/callbacks', { ...hours2001, bucket: 'day' }))).bucket,
      ).toBe('day');
    });

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
    // Issue 35, item 7: the two admins' unmasked reads of the delivery are audited, nothing else is written.
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
