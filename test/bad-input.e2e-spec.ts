import { Pool } from 'mysql2/promise';
import {
  encryptWechatpayResource,
  signWechatpayBody,
  wechatpayDelivery,
  wechatpayTransaction,
} from '../tools/simulator/platform-signers';
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

const TABLES = ['payment_order', 'payment_callback', 'callback_delivery', 'payment_anomaly', 'outbox_event'] as const;
const BODY_LIMIT = 64 * 1024;
const FORM = 'application/x-www-form-urlencoded; charset=utf-8';

interface Answer {
  status: number;
  body: string;
  json(): Record<string, unknown>;
}

/** Who answers, and so in which failure format. */
type Endpoint = 'wechatpay' | 'alipay' | 'api';

interface BadInput {
  name: string;
  send(): Promise<Answer>;
  /** The exact status when the contract names one; otherwise any 4xx. */
  status?: number;
  /** What the message must name (order API and WeChat Pay; Alipay's failure body is always `fail`). */
  message?: RegExp;
  /**
   * Correctly signed, but its data cannot apply: a deterministic error the platform's retries would
   * never cure, so it is kept, recorded as a MALFORMED_NOTIFICATION anomaly and acked.
   */
  keptAsMalformed?: true;
}

let platforms: TestPlatforms;
let running: RunningApp;
let client: TestClient;
let pool: Pool;
/** A fresh WAIT_PAY order of 100 fen for each case: most bad deliveries below would pay it if they got through. */
let orderNo: string;
let transactionId: string;

async function send(
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<Answer> {
  const response = await fetch(running.url + path, {
    method: init.method ?? 'POST',
    headers: init.headers,
    body: init.body,
  });
  const body = await response.text();
  return { status: response.status, body, json: <T>() => JSON.parse(body) as T };
}

async function tableCounts(): Promise<Record<string, number>> {
  // Suites run one after another (--runInBand), so the whole table is this suite's to watch.
  const counts = await Promise.all(TABLES.map((table) => count(pool, `SELECT COUNT(*) FROM ${table}`)));
  return Object.fromEntries(TABLES.map((table, i) => [table, counts[i]]));
}

// ------------------------------------------------------------------------------------------------ WeChat Pay

function wechatpayPayment(total: number = 100) {
  return client.wechatpayPayment({ outTradeNo: orderNo, transactionId, total });
}

function signedWechatpay(body: string, headers: Record<string, string> = {}): Promise<Answer> {
  return send('/notify/wechatpay', {
    headers: { ...signWechatpayBody(platforms.wechatpay.publicKeySigner, body), ...headers },
    body,
  });
}

function withoutHeader(headers: Record<string, string>, name: string): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([key]) => key !== name));
}

/** A genuine, correctly signed payment envelope padded past the body limit with an extra field. */
/** A WeChat Pay APIv3 notification's JSON, as the tests take it apart. */
type Envelope = Record<string, unknown> & {
  resource: Record<string, unknown> & { ciphertext: string; nonce: string; associated_data: string; algorithm: string };
};

function oversizedWechatpayBody(): string {
  const envelope = JSON.parse(wechatpayPayment().body) as Envelope;
  return JSON.stringify({ ...envelope, padding: 'x'.repeat(BODY_LIMIT) });
}

function wechatpayResource(override: Record<string, unknown>) {
  const resource = {
    ...wechatpayTransaction({ mchid: platforms.wechatpay.mchid, outTradeNo: orderNo, transactionId, total: 100 }),
    ...override,
  };
  return wechatpayDelivery(platforms.wechatpay.publicKeySigner, { resource });
}

const WECHATPAY_CASES: BadInput[] = [
  {
    name: 'malformed JSON, correctly signed over the malformed bytes',
    status: 400,
    message: /JSON/i,
    send: () => signedWechatpay('{"id":"x","event_type":'),
  },
  {
    name: 'malformed JSON, unsigned',
    status: 400,
    send: () => send('/notify/wechatpay', { headers: { 'content-type': 'application/json' }, body: '{"id":"x",' }),
  },
  ...['Timestamp', 'Nonce', 'Signature', 'Serial'].map((header): BadInput => ({
    name: `a genuine payment without Wechatpay-${header}`,
    status: 400,
    message: new RegExp(`Wechatpay-${header}`, 'i'),
    send: () => {
      const d = wechatpayPayment();
      return send('/notify/wechatpay', {
        headers: withoutHeader(d.headers, `wechatpay-${header.toLowerCase()}`),
        body: d.body,
      });
    },
  })),
  {
    name: 'a genuine payment body without any Wechatpay-* header',
    status: 400,
    message: /Wechatpay-/i,
    send: () =>
      send('/notify/wechatpay', { headers: { 'content-type': 'application/json' }, body: wechatpayPayment().body }),
  },
  {
    name: 'a non-numeric Wechatpay-Timestamp',
    status: 400,
    message: /Timestamp/i,
    send: () => {
      const d = wechatpayPayment();
      return send('/notify/wechatpay', { headers: { ...d.headers, 'wechatpay-timestamp': 'yesterday' }, body: d.body });
    },
  },
  {
    name: 'a Wechatpay-Signature that is not base64 of anything',
    send: () => {
      const d = wechatpayPayment();
      return send('/notify/wechatpay', {
        headers: { ...d.headers, 'wechatpay-signature': '%%%not-base64%%%' },
        body: d.body,
      });
    },
  },
  {
    name: 'a genuine payment sent as text/plain',
    // The body is 1 KB of signed JSON: the message must say what is wrong with it (its type), not that it is empty.
    message: /content.type|media type|application\/json/i,
    send: () => {
      const d = wechatpayPayment();
      return send('/notify/wechatpay', { headers: { ...d.headers, 'content-type': 'text/plain' }, body: d.body });
    },
  },
  {
    name: 'a genuine payment sent as application/x-www-form-urlencoded',
    message: /content.type|media type|application\/json/i,
    send: () => {
      const d = wechatpayPayment();
      return send('/notify/wechatpay', { headers: { ...d.headers, 'content-type': FORM }, body: d.body });
    },
  },
  {
    name: 'a genuine payment sent as application/xml',
    message: /content.type|media type|application\/json/i,
    send: () => {
      const d = wechatpayPayment();
      return send('/notify/wechatpay', { headers: { ...d.headers, 'content-type': 'application/xml' }, body: d.body });
    },
  },
  {
    name: 'an XML body, signed, sent as application/xml',
    send: () => signedWechatpay('<xml><return_code>SUCCESS</return_code></xml>', { 'content-type': 'application/xml' }),
  },
  { name: 'a signed body over 64 KiB', status: 413, send: () => signedWechatpay(oversizedWechatpayBody()) },
  { name: 'an empty body, signed', status: 400, send: () => signedWechatpay('') },
  {
    name: 'an empty body, unsigned',
    status: 400,
    send: () => send('/notify/wechatpay', { headers: { 'content-type': 'application/json' }, body: '' }),
  },
  { name: 'a JSON array, signed', status: 400, send: () => signedWechatpay('[]') },
  {
    name: 'a JSON array of a genuine envelope, signed',
    status: 400,
    send: () => signedWechatpay(`[${wechatpayPayment().body}]`),
  },
  { name: 'JSON null, signed', status: 400, send: () => signedWechatpay('null') },
  { name: 'a JSON string, signed', status: 400, send: () => signedWechatpay('"TRANSACTION.SUCCESS"') },
  { name: 'a JSON number, signed', status: 400, send: () => signedWechatpay('42') },
  {
    name: 'an envelope without resource, signed',
    status: 400,
    message: /resource/,
    send: () =>
      signedWechatpay(
        JSON.stringify({ id: 'e-1', event_type: 'TRANSACTION.SUCCESS', resource_type: 'encrypt-resource' }),
      ),
  },
  {
    name: 'an envelope whose resource.ciphertext is a number, signed',
    status: 400,
    message: /ciphertext/,
    send: () => {
      const envelope = JSON.parse(wechatpayPayment().body) as Envelope;
      return signedWechatpay(JSON.stringify({ ...envelope, resource: { ...envelope.resource, ciphertext: 12345 } }));
    },
  },
  {
    name: 'an envelope without event_type, signed',
    status: 400,
    message: /event_type/,
    send: () => {
      const { event_type: _dropped, ...envelope } = JSON.parse(wechatpayPayment().body) as Envelope;
      return signedWechatpay(JSON.stringify(envelope));
    },
  },
  {
    name: 'a resource whose ciphertext is too short to hold the GCM tag, signed',
    status: 400,
    send: () => {
      const envelope = JSON.parse(wechatpayPayment().body) as Envelope;
      return signedWechatpay(JSON.stringify({ ...envelope, resource: { ...envelope.resource, ciphertext: 'AAAA' } }));
    },
  },
  {
    name: 'a transaction whose amount.total is the string "100"',
    keptAsMalformed: true,
    message: /amount/,
    send: () => wechatpay(wechatpayResource({ amount: { total: '100', currency: 'CNY' } })),
  },
  {
    name: 'a transaction whose amount.total is 1.5',
    keptAsMalformed: true,
    message: /amount/,
    send: () => wechatpay(wechatpayResource({ amount: { total: 1.5, currency: 'CNY' } })),
  },
  {
    name: 'a transaction whose amount.total is 0',
    keptAsMalformed: true,
    message: /amount/,
    send: () => wechatpay(wechatpayResource({ amount: { total: 0, currency: 'CNY' } })),
  },
  {
    name: 'a transaction whose amount.total is -100',
    keptAsMalformed: true,
    message: /amount/,
    send: () => wechatpay(wechatpayResource({ amount: { total: -100, currency: 'CNY' } })),
  },
  {
    name: 'a transaction whose amount.total is 1e20',
    keptAsMalformed: true,
    message: /amount/,
    send: () => wechatpay(wechatpayResource({ amount: { total: 1e20, currency: 'CNY' } })),
  },
  {
    name: 'a transaction without amount',
    keptAsMalformed: true,
    message: /amount/,
    send: () => wechatpay(wechatpayResource({ amount: undefined })),
  },
  {
    name: 'a transaction without out_trade_no',
    keptAsMalformed: true,
    message: /out_trade_no/,
    send: () => wechatpay(wechatpayResource({ out_trade_no: undefined })),
  },
  {
    name: 'a transaction whose success_time is not a date',
    keptAsMalformed: true,
    message: /success_time/,
    send: () => wechatpay(wechatpayResource({ success_time: 'soon' })),
  },
  {
    name: 'a resource that decrypts to something other than JSON',
    status: 400,
    send: () => {
      const d = wechatpayDelivery(platforms.wechatpay.publicKeySigner, { resource: {} });
      const envelope = JSON.parse(d.body) as Envelope;
      // Encrypt raw text (not JSON) with the right key: the AEAD holds, the plaintext does not parse.
      const resource = encryptWechatpayResource(platforms.wechatpay.apiV3Key, 'not json at all');
      return signedWechatpay(JSON.stringify({ ...envelope, resource }));
    },
  },
];

function wechatpay(d: { headers: Record<string, string>; body: string }): Promise<Answer> {
  return send('/notify/wechatpay', d);
}

// ---------------------------------------------------------------------------------------------------- Alipay

function alipayForm(totalAmount = '1.00'): string {
  return client.alipayPayment({ outTradeNo: orderNo, tradeNo: transactionId, totalAmount });
}

function alipay(body: string | Buffer, contentType = FORM): Promise<Answer> {
  return send('/notify/alipay', { headers: { 'content-type': contentType }, body });
}

const MALFORMED_AMOUNTS = [
  '1e2',
  '-1',
  '0.001',
  '',
  '0',
  '0.00',
  '1.',
  '.5',
  '1,00',
  ' 1.00',
  '01.00',
  '1.000',
  'NaN',
  'Infinity',
  '0x10',
  '１.00',
  '99999999999999.99',
];

const ALIPAY_CASES: BadInput[] = [
  { name: 'a genuine form sent as text/plain', send: () => alipay(alipayForm(), 'text/plain') },
  { name: 'a genuine form sent as application/xml', send: () => alipay(alipayForm(), 'application/xml') },
  { name: 'a genuine form sent as application/json', send: () => alipay(alipayForm(), 'application/json') },
  {
    name: 'a genuine form padded over 64 KiB',
    status: 413,
    send: () => alipay(`${alipayForm()}&padding=${'x'.repeat(BODY_LIMIT)}`),
  },
  { name: 'an empty body', status: 400, send: () => alipay('') },
  ...MALFORMED_AMOUNTS.map((amount): BadInput => ({
    name: `total_amount "${amount}", correctly signed`,
    keptAsMalformed: true,
    send: () => alipay(alipayForm(amount)),
  })),
  { name: 'plain text garbage', status: 400, send: () => alipay('hello, this is not a form') },
  {
    name: 'binary garbage',
    status: 400,
    send: () => alipay(Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x3d, 0x26, 0x0a, 0x01])),
  },
  {
    name: 'an XML document',
    status: 400,
    send: () => alipay('<?xml version="1.0"?><alipay><trade_status>TRADE_SUCCESS</trade_status></alipay>'),
  },
  { name: 'a JSON object', status: 400, send: () => alipay(JSON.stringify({ trade_status: 'TRADE_SUCCESS' })) },
  { name: 'a JSON array as application/json', send: () => alipay('[]', 'application/json') },
  { name: 'JSON null as application/json', send: () => alipay('null', 'application/json') },
  { name: 'only separators', status: 400, send: () => alipay('&&&==&') },
  { name: 'broken percent-encoding', status: 400, send: () => alipay(`${alipayForm()}&subject=%E4%B8`) },
  {
    name: 'a genuine form with out_trade_no repeated',
    status: 400,
    send: () => alipay(`${alipayForm()}&out_trade_no=${uniqueId('PO')}`),
  },
  {
    name: 'a genuine form with trade_status repeated',
    status: 400,
    send: () => alipay(`${alipayForm()}&trade_status=TRADE_SUCCESS`),
  },
  {
    name: 'a genuine form with total_amount repeated identically',
    status: 400,
    send: () => alipay(`${alipayForm()}&total_amount=1.00`),
  },
  {
    name: 'a genuine form with sign repeated',
    status: 400,
    send: () => {
      const form = alipayForm();
      const sign = new URLSearchParams(form).get('sign')!;
      return alipay(`${form}&sign=${encodeURIComponent(sign)}`);
    },
  },
  {
    name: 'a genuine form without sign',
    status: 400,
    send: () => {
      const params = new URLSearchParams(alipayForm());
      params.delete('sign');
      return alipay(params.toString());
    },
  },
  {
    name: 'a genuine form with an unknown trade_status, correctly signed',
    keptAsMalformed: true,
    send: () =>
      alipay(
        client.alipayPayment({
          outTradeNo: orderNo,
          tradeNo: transactionId,
          totalAmount: '1.00',
          tradeStatus: 'TRADE_PAID_MAYBE',
        }),
      ),
  },
  {
    name: 'a genuine form without out_trade_no, correctly signed',
    keptAsMalformed: true,
    send: () => alipay(client.alipayPayment({ outTradeNo: '', tradeNo: transactionId, totalAmount: '1.00' })),
  },
  {
    name: 'a genuine form without trade_no, correctly signed',
    keptAsMalformed: true,
    send: () => alipay(client.alipayPayment({ outTradeNo: orderNo, tradeNo: '', totalAmount: '1.00' })),
  },
];

// ------------------------------------------------------------------------------------------------- order API

function api(
  body: string,
  contentType = 'application/json',
  path = '/payment-orders',
  method = 'POST',
): Promise<Answer> {
  return send(path, {
    method,
    headers: { authorization: `Bearer ${platforms.internalApiToken}`, 'content-type': contentType },
    body,
  });
}

/** Bad orders are numbered too, so that the test can show none of them was created. */
let badOrderNo: string;

function order(override: Record<string, unknown> = {}): Record<string, unknown> {
  return { orderNo: badOrderNo, userId: 'u-1', amount: 100, currency: 'CNY', ...override };
}

/** `[[[…1…]]]`, `depth` arrays deep. */
function deeplyNested(depth: number): string {
  return `${'['.repeat(depth)}1${']'.repeat(depth)}`;
}

function without(field: string): Record<string, unknown> {
  return Object.fromEntries(Object.entries(order()).filter(([key]) => key !== field));
}

/** The contract's list: each of these is a 400 whose message names the problem. */
const INVALID_ORDERS: BadInput[] = [
  { name: 'an unknown field', message: /isAdmin/, send: () => api(JSON.stringify(order({ isAdmin: true }))) },
  { name: 'amount as the string "100"', message: /amount/, send: () => api(JSON.stringify(order({ amount: '100' }))) },
  { name: 'amount 1.5', message: /amount/, send: () => api(JSON.stringify(order({ amount: 1.5 }))) },
  { name: 'amount 0', message: /amount/, send: () => api(JSON.stringify(order({ amount: 0 }))) },
  { name: 'amount -1', message: /amount/, send: () => api(JSON.stringify(order({ amount: -1 }))) },
  { name: 'amount 1e20', message: /amount/, send: () => api(JSON.stringify(order({ amount: 1e20 }))) },
  {
    name: 'amount 9007199254740993 (beyond exact doubles)',
    message: /amount/,
    send: () => api(JSON.stringify(order()).replace('"amount":100', '"amount":9007199254740993')),
  },
  { name: 'amount null', message: /amount/, send: () => api(JSON.stringify(order({ amount: null }))) },
  { name: 'amount true', message: /amount/, send: () => api(JSON.stringify(order({ amount: true }))) },
  {
    name: 'amount as an object',
    message: /amount/,
    send: () => api(JSON.stringify(order({ amount: { value: 100 } }))),
  },
  ...['orderNo', 'userId', 'amount', 'currency'].map((field): BadInput => ({
    name: `missing ${field}`,
    message: new RegExp(field),
    send: () => api(JSON.stringify(without(field))),
  })),
  { name: 'an empty object', message: /orderNo/, send: () => api('{}') },
  {
    name: 'orderNo of 65 characters',
    message: /orderNo/,
    send: () => api(JSON.stringify(order({ orderNo: `${badOrderNo}${'x'.repeat(65)}`.slice(0, 65) }))),
  },
  {
    name: 'orderNo with spaces',
    message: /orderNo/,
    send: () => api(JSON.stringify(order({ orderNo: `${badOrderNo} 2` }))),
  },
  { name: 'an empty orderNo', message: /orderNo/, send: () => api(JSON.stringify(order({ orderNo: '' }))) },
  { name: 'orderNo as a number', message: /orderNo/, send: () => api(JSON.stringify(order({ orderNo: 12345 }))) },
  { name: 'an empty userId', message: /userId/, send: () => api(JSON.stringify(order({ userId: '' }))) },
  { name: 'currency "cny"', message: /currency/, send: () => api(JSON.stringify(order({ currency: 'cny' }))) },
  { name: 'currency "YUAN"', message: /currency/, send: () => api(JSON.stringify(order({ currency: 'YUAN' }))) },
  {
    name: 'currency "USD", not in CURRENCIES',
    message: /currency USD is not accepted/,
    send: () => api(JSON.stringify(order({ currency: 'USD' }))),
  },
  ...[
    ['of 13 digits', '2026112910300'],
    ['of 15 digits', '202611291030000'],
    ['with a separator', '2026-11-29 10:30'],
    ['on February 30th', '20260230103000'],
    ["at 24 o'clock", '20261129240000'],
    ['at second 60', '20261129103060'],
    ['as a number', 20261129103000],
  ].map(([what, value]): BadInput => ({
    name: `channelOrderTime ${String(what)}`,
    message: /channelOrderTime must be a valid date and time of 14 digits, yyyyMMddHHmmss/,
    send: () => api(JSON.stringify(order({ channelOrderTime: value }))),
  })),
  { name: 'JSON null', send: () => api('null') },
  { name: 'a JSON array', send: () => api(JSON.stringify([order()])) },
  { name: 'a JSON string', send: () => api('"order"') },
];

const ORDER_CASES: BadInput[] = [
  ...INVALID_ORDERS.map((c) => ({ status: 400, ...c })),
  { name: 'malformed JSON', status: 400, message: /JSON/i, send: () => api('{"orderNo": "x", "amount": 1') },
  { name: 'an empty body declared as JSON', status: 400, send: () => api('') },
  {
    name: 'a value nested 10,000 deep',
    status: 400,
    message: /nest/i,
    send: () => api(JSON.stringify(order({ userId: 'DEEP' })).replace('"DEEP"', deeplyNested(10_000))),
  },
  {
    name: 'an emergency refund nested 10,000 deep',
    status: 400,
    message: /nest/i,
    send: () =>
      send('/admin/refunds/emergency', {
        headers: { authorization: `Bearer ${platforms.admins.admin}`, 'content-type': 'application/json' },
        body: `{"orderNo":"${orderNo}","reason":${deeplyNested(10_000)}}`,
      }),
  },
  {
    name: 'a form body',
    send: () =>
      api(new URLSearchParams(order() as Record<string, string>).toString(), 'application/x-www-form-urlencoded'),
  },
  { name: 'a text/plain body', send: () => api(JSON.stringify(order()), 'text/plain') },
  { name: 'an XML body', send: () => api('<order/>', 'application/xml') },
  {
    name: 'a body over 64 KiB',
    status: 413,
    send: () => api(JSON.stringify(order({ userId: 'x'.repeat(BODY_LIMIT) }))),
  },
];

const ORDER_PATH_CASES: BadInput[] = [
  {
    name: 'GET an order number of 500 characters',
    send: () => send(`/payment-orders/${'A'.repeat(500)}`, authorized('GET')),
  },
  {
    name: 'GET an order number with spaces and quotes',
    status: 404,
    send: () => send(`/payment-orders/${encodeURIComponent(`a b'"; DROP TABLE payment_order`)}`, authorized('GET')),
  },
  {
    name: 'GET an order number with a NUL byte',
    status: 404,
    send: () => send('/payment-orders/a%00b', authorized('GET')),
  },
  {
    name: 'close an order number of 500 characters',
    send: () => send(`/payment-orders/${'A'.repeat(500)}/close`, authorized('POST')),
  },
  {
    name: 'close with malformed percent-encoding',
    send: () => send('/payment-orders/%E4%B8/close', authorized('POST')),
  },
];

function authorized(method: string) {
  return { method, headers: { authorization: `Bearer ${platforms.internalApiToken}` } };
}

// ----------------------------------------------------------------------------------------------- the suite

describe('bad input', () => {
  beforeAll(async () => {
    platforms = await createTestPlatforms();
    running = await startApp(platforms.env);
    client = new TestClient(running.url, platforms);
    pool = testDatabasePool();
  });
  beforeEach(async () => {
    badOrderNo = uniqueId('BO');
    orderNo = uniqueId('BI');
    transactionId = uniqueId('T');
    expect((await client.registerOrder({ orderNo, amount: 100 })).status).toBe(201);
  });
  afterAll(async () => {
    await running?.close();
    await pool?.end();
  });

  async function expectRefusedWithoutEffect(endpoint: Endpoint, c: BadInput): Promise<Answer> {
    const before = await tableCounts();

    const answer = await c.send();

    expect(await tableCounts()).toEqual(before);
    expect(
      await count(
        pool,
        "SELECT COUNT(*) FROM payment_order WHERE order_no = ? AND status = 'WAIT_PAY' AND transaction_id IS NULL",
        [orderNo],
      ),
    ).toBe(1);
    if (c.status) expect(answer.status).toBe(c.status);
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
    if (endpoint === 'alipay') {
      expect(answer.body).toBe('fail');
    } else {
      const body = answer.json();
      if (endpoint === 'wechatpay') expect(body).toEqual({ code: 'FAIL', message: expect.stringMatching(/\S/) });
      expect(body.message).toEqual(expect.stringMatching(c.message ?? /\S/));
    }
    return answer;
  }

  /** Acked; one delivery kept and one MALFORMED_NOTIFICATION anomaly; no payment, no event, the order unpaid. */
  async function expectKeptAsMalformed(endpoint: 'wechatpay' | 'alipay', c: BadInput): Promise<void> {
    const before = await tableCounts();

    const answer = await c.send();

    expect(answer.status).toBeGreaterThanOrEqual(200);
    expect(answer.status).toBeLessThan(300);
    if (endpoint === 'alipay') expect(answer.body).toBe('success');
    expect(await tableCounts()).toEqual({
      ...before,
      callback_delivery: before.callback_delivery + 1,
      payment_anomaly: before.payment_anomaly + 1,
    });
    expect(
      await count(
        pool,
        `SELECT COUNT(*) FROM payment_anomaly WHERE type = 'MALFORMED_NOTIFICATION' AND channel = ?
           AND (transaction_id = ? OR order_no = ?)`,
        [endpoint.toUpperCase(), transactionId, orderNo],
      ),
    ).toBe(1);
    expect(
      await count(
        pool,
        "SELECT COUNT(*) FROM payment_order WHERE order_no = ? AND status = 'WAIT_PAY' AND transaction_id IS NULL",
        [orderNo],
      ),
    ).toBe(1);
  }

  const refused = (cases: BadInput[]) => cases.filter((c) => !c.keptAsMalformed).map((c) => [c.name, c] as const);
  const kept = (cases: BadInput[]) => cases.filter((c) => c.keptAsMalformed).map((c) => [c.name, c] as const);

  describe('POST /notify/wechatpay', () => {
    it.each(refused(WECHATPAY_CASES))('should refuse %s with a 4xx and write nothing', async (_name, c) => {
      await expectRefusedWithoutEffect('wechatpay', c);
    });
    it.each(kept(WECHATPAY_CASES))(
      'should ack %s, keep it and record it as MALFORMED_NOTIFICATION, paying nothing',
      async (_name, c) => {
        await expectKeptAsMalformed('wechatpay', c);
      },
    );
  });

  describe('POST /notify/alipay', () => {
    it.each(refused(ALIPAY_CASES))('should refuse %s with a 4xx and write nothing', async (_name, c) => {
      await expectRefusedWithoutEffect('alipay', c);
    });
    it.each(kept(ALIPAY_CASES))(
      'should ack %s, keep it and record it as MALFORMED_NOTIFICATION, paying nothing',
      async (_name, c) => {
        await expectKeptAsMalformed('alipay', c);
      },
    );
  });

  describe('POST /payment-orders', () => {
    it.each(ORDER_CASES.map((c) => [c.name, c] as const))(
      'should refuse %s with a 4xx naming the problem, creating nothing',
      async (_name, c) => {
        await expectRefusedWithoutEffect('api', c);
        expect(await count(pool, 'SELECT COUNT(*) FROM payment_order WHERE order_no LIKE ?', [`${badOrderNo}%`])).toBe(
          0,
        );
      },
    );
  });

  describe('/payment-orders/:orderNo', () => {
    it.each(ORDER_PATH_CASES.map((c) => [c.name, c] as const))(
      'should answer %s with a 4xx, changing nothing',
      async (_name, c) => {
        await expectRefusedWithoutEffect('api', c);
      },
    );
  });

  describe('afterwards', () => {
    it('should still pay a genuine delivery', async () => {
      const answer = await client.postWechatpay(wechatpayPayment());

      expect(answer.status).toBe(204);
      expect(await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE order_no = ?', [orderNo])).toBe(1);
      expect(
        await count(pool, "SELECT COUNT(*) FROM callback_delivery WHERE order_no = ? AND outcome = 'PAID'", [orderNo]),
      ).toBe(1);
    });

    it('should still answer /health/live', async () => {
      const answer = await send('/health/live', { method: 'GET' });
      expect(answer.status).toBe(200);
      expect(answer.json()).toMatchObject({ status: 'ok' });
    });
  });
});
