import { Pool, RowDataPacket } from 'mysql2/promise';
import { randomAlphanumeric } from '../tools/simulator/platform-signers';
import { UnionpayKeySet } from '../tools/simulator/unionpay/unionpay-keys';
import {
  newQueryId,
  signUnionpay,
  txnTime,
  unionpayConsumeFields,
  unionpayForm,
} from '../tools/simulator/unionpay/unionpay-signer';
import { v2PaymentNotification } from '../tools/simulator/wechatpay/v2/v2-notifications';
import { startAllDialectsApp } from './support/all-dialects-app';
import {
  count,
  HttpAnswer,
  RunningApp,
  TestClient,
  testDatabasePool,
  TestPlatforms,
  uniqueId,
} from './support/test-app';

/**
 * What UnionPay's and WeChat Pay APIv2's notify routes answer on the wire (the ack each platform
 * waits for, and a refusal it delivers again after), what an operator sees of an APIv2 delivery by
 * role, and the order API's refusal of a malformed subMerchantId. What the service does with these
 * dialects' notifications and API calls is in test/medium/ (unionpay, wechatpay-v2,
 * wechatpay-v2-calls, wechatpay-partner and alipay-cert).
 */
const MER_ID = '777290058167151';
const API_V2_KEY = randomAlphanumeric(32);
const V2_ACK = '<xml><return_code><![CDATA[SUCCESS]]></return_code><return_msg><![CDATA[OK]]></return_msg></xml>';

let platforms: TestPlatforms;
let unionpayKeys: UnionpayKeySet;
let running: RunningApp;
let client: TestClient;
let pool: Pool;

beforeAll(async () => {
  ({ platforms, unionpayKeys, running } = await startAllDialectsApp(MER_ID, API_V2_KEY, 'pcs-acks-'));
  client = new TestClient(running.url, platforms);
  pool = testDatabasePool();
});

afterAll(async () => {
  await running?.close();
  await pool?.end();
});

async function post(path: string, contentType: string, body: string) {
  const response = await fetch(`${running.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body,
  });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

async function registered(amount: number, extra: Record<string, unknown> = {}): Promise<string> {
  const orderNo = uniqueId('ACK');
  const answer: HttpAnswer = await client.api('POST', '/payment-orders', {
    orderNo,
    userId: 'u-1',
    amount,
    currency: 'CNY',
    ...extra,
  });
  expect(answer.status).toBe(201);
  return orderNo;
}

const deliveries = (orderNo: string) =>
  count(pool, 'SELECT COUNT(*) FROM callback_delivery WHERE order_no = ?', [orderNo]);

describe('POST /notify/unionpay', () => {
  it("should answer 200 'ok' in plain text to a signed consumption, and 401 'fail' with its reason to a forged one", async () => {
    const at = txnTime();
    const orderNo = await registered(1234, { channel: 'UNIONPAY', merchantId: MER_ID, channelOrderTime: at });
    const params = { merId: MER_ID, orderId: orderNo, queryId: newQueryId(), txnAmt: 1234, txnTime: at };
    const form = unionpayForm(signUnionpay(unionpayConsumeFields(params), unionpayKeys.unionpaySigner));

    const forged = await post(
      '/notify/unionpay',
      'application/x-www-form-urlencoded',
      form.replace('txnAmt=1234&', 'txnAmt=1&'),
    );
    expect(forged.status).toBe(401);
    expect(forged.body).toBe('fail');
    expect(forged.headers.get('x-fail-reason')).toBeTruthy();
    expect(await deliveries(orderNo)).toBe(0);

    const ack = await post('/notify/unionpay', 'application/x-www-form-urlencoded', form);
    expect([ack.status, ack.body]).toEqual([200, 'ok']);
    expect(ack.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await deliveries(orderNo)).toBe(1);
  });
});

describe('POST /notify/wechatpay-v2', () => {
  const v2Payment = (orderNo: string, extra: { openid?: string } = {}) => ({
    mchid: platforms.wechatpay.mchid,
    appid: platforms.wechatpay.appid,
    outTradeNo: orderNo,
    transactionId: uniqueId('T'),
    totalFee: 1999,
    paidAt: new Date(),
    ...extra,
  });

  it('should answer the v2 SUCCESS XML to a signed notification, and a v2 FAIL XML with 401 to one signed with another key', async () => {
    const orderNo = await registered(1999);

    const forged = await post(
      '/notify/wechatpay-v2',
      'text/xml',
      v2PaymentNotification(v2Payment(orderNo), randomAlphanumeric(32)),
    );
    expect(forged.status).toBe(401);
    expect(forged.body).toMatch(
      /^<xml><return_code><!\[CDATA\[FAIL\]\]><\/return_code><return_msg><!\[CDATA\[sign does not verify/,
    );
    expect(forged.headers.get('content-type')).toMatch(/xml/);
    expect(await deliveries(orderNo)).toBe(0);

    const ack = await post('/notify/wechatpay-v2', 'text/xml', v2PaymentNotification(v2Payment(orderNo), API_V2_KEY));
    expect([ack.status, ack.body]).toEqual([200, V2_ACK]);
    expect(ack.headers.get('content-type')).toMatch(/xml/);
    expect(await deliveries(orderNo)).toBe(1);
  });

  it("should show a viewer the delivery's XML with the payer's openid masked, and an admin its exact bytes", async () => {
    const orderNo = await registered(1999);
    const xml = v2PaymentNotification(v2Payment(orderNo, { openid: 'oPAYER_SECRET_1' }), API_V2_KEY);
    expect((await post('/notify/wechatpay-v2', 'text/xml', xml)).body).toBe(V2_ACK);
    const [[{ id }]] = await pool.query<Array<RowDataPacket & { id: number }>>(
      'SELECT id FROM callback_delivery WHERE order_no = ?',
      [orderNo],
    );
    const asViewer = await client.admin('GET', `/admin/deliveries/${id}`, platforms.admins.viewer);
    const asAdmin = await client.admin('GET', `/admin/deliveries/${id}`, platforms.admins.admin);
    expect(asViewer.json().rawBody).toBe(xml.replace('oPAYER_SECRET_1', '***'));
    expect(asAdmin.json().rawBody).toBe(xml);
  });
});

describe('POST /payment-orders with a subMerchantId', () => {
  it('should refuse one that is no sub-merchant id with 400, and write nothing', async () => {
    const orderNo = uniqueId('SP');

    const answer = await client.api('POST', '/payment-orders', {
      orderNo,
      userId: 'u-1',
      amount: 700,
      currency: 'CNY',
      channel: 'WECHATPAY',
      subMerchantId: '1900 0001',
    });

    expect(answer.status).toBe(400);
    expect(answer.body).toContain('subMerchantId must be a sub-merchant id');
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_order WHERE order_no = ?', [orderNo])).toBe(0);
    expect(await count(pool, 'SELECT COUNT(*) FROM order_status_change WHERE order_no = ?', [orderNo])).toBe(0);
  });
});
