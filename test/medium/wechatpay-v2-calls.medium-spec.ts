import { Pool, RowDataPacket } from 'mysql2/promise';
import { Agent, fetch as undiciFetch } from 'undici';
import { signV2 } from '../../src/channels/wechatpay/v2/wechatpay-v2.sign';
import { writeV2Xml } from '../../src/channels/wechatpay/v2/wechatpay-v2.xml';
import { WechatpayV2Calls } from '../../src/channels/wechatpay/v2/wechatpay-v2.calls';
import { WechatpayV2Client } from '../../src/channels/wechatpay/v2/wechatpay-v2.client';
import { WechatpayAccount } from '../../src/channels/wechatpay/wechatpay.config';
import { BillEntry } from '../../src/domain/bill';
import { randomAlphanumeric } from '../../tools/simulator/platform-signers';
import { FakeWechatpayV2Api } from '../../tools/simulator/wechatpay/v2/fake-wechatpay-v2-api';
import { v2PaymentNotification } from '../../tools/simulator/wechatpay/v2/v2-notifications';
import { createV2TlsMaterial, V2TlsMaterial } from '../../tools/simulator/wechatpay/v2/v2-tls';
import { AdminModule } from '../../src/admin/admin.module';
import { NotifyModule } from '../../src/intake/notify.module';
import { OrderModule } from '../../src/order/order.module';
import { PaymentOrderService } from '../../src/order/payment-order.service';
import { Refunds } from '../../src/refund/refunds';
import { TradeCloseService } from '../../src/trade/trade-close.service';
import { TradeModule } from '../../src/trade/trade.module';
import { eventually } from '../support/eventually';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { receive, XML } from '../support/medium-dialects';
import { uniqueId } from '../support/test-app';

/**
 * The API calls of an account with only an APIv2 key, against a local fake of WeChat Pay's APIv2
 * over HTTPS: signed XML both ways, and refunds only with the merchant's apiclient_cert.p12; first
 * the channel's calls themselves, then the services that make them, on the real database without
 * HTTP.
 */
const MCHID = '1900000109';
const APPID = 'wxd930ea5d5a258f4f';
const API_V2_KEY = randomAlphanumeric(32);
const ACK = '<xml><return_code><![CDATA[SUCCESS]]></return_code><return_msg><![CDATA[OK]]></return_msg></xml>';

let tls: V2TlsMaterial;
let fake: FakeWechatpayV2Api;

beforeAll(async () => {
  tls = createV2TlsMaterial(MCHID);
  fake = await FakeWechatpayV2Api.start({ mchid: MCHID, appid: APPID, apiV2Key: API_V2_KEY }, tls);
});
afterAll(async () => {
  await fake?.close();
});

function callsFor(account: Partial<WechatpayAccount> = {}): WechatpayV2Calls {
  const accounts: WechatpayAccount[] = [
    {
      mchid: MCHID,
      appids: [APPID],
      apiV2Key: API_V2_KEY,
      platformCertPaths: [],
      apiV2CertPath: tls.clientP12Path,
      ...account,
    },
  ];
  const client = new WechatpayV2Client(accounts, {
    baseUrl: fake.url,
    timeoutMs: 5000,
    downloadTimeoutMs: 5000,
    caPath: tls.serverCertPath,
  });
  return new WechatpayV2Calls(client);
}

const refundRequest = (refundNo: string) => ({
  refundNo,
  transactionId: uniqueId('T'),
  merchantId: MCHID,
  amount: 300,
  transactionAmount: 1000,
  currency: 'CNY',
  reason: 'test',
});

describe(WechatpayV2Calls.name, () => {
  const sut = () => callsFor();

  it('should query a trade: paid, not paid, unknown', async () => {
    const paidAt = new Date('2026-11-30T02:03:04Z');
    fake.trades.set('V2Q_PAID', {
      transactionId: '4200000000000000000000000001',
      totalFee: 1234,
      state: 'SUCCESS',
      paidAt,
    });
    fake.trades.set('V2Q_WAIT', { transactionId: '', totalFee: 1234, state: 'NOTPAY' });

    const paid = await sut().queryTrade({ orderNo: 'V2Q_PAID', merchantId: MCHID });
    expect(paid).toMatchObject({
      outcome: 'PAID',
      payment: {
        channel: 'WECHATPAY',
        merchantId: MCHID,
        outTradeNo: 'V2Q_PAID',
        transactionId: '4200000000000000000000000001',
        amount: 1234,
        currency: 'CNY',
        paidAt,
      },
    });
    expect(await sut().queryTrade({ orderNo: 'V2Q_WAIT', merchantId: MCHID })).toEqual({
      outcome: 'NOT_PAID',
      detail: 'trade_state NOTPAY',
    });
    expect(await sut().queryTrade({ orderNo: 'V2Q_NONE', merchantId: MCHID })).toMatchObject({ outcome: 'NOT_FOUND' });
    expect(fake.callsTo('/pay/orderquery').map((c) => c.fields.out_trade_no)).toEqual([
      'V2Q_PAID',
      'V2Q_WAIT',
      'V2Q_NONE',
    ]);
  });

  it('should close a trade, and say PAID for a paid one', async () => {
    fake.trades.set('V2C_WAIT', { transactionId: '', totalFee: 100, state: 'NOTPAY' });
    fake.trades.set('V2C_PAID', { transactionId: '4200000000000000000000000002', totalFee: 100, state: 'SUCCESS' });
    expect(await sut().closeTrade({ orderNo: 'V2C_WAIT', merchantId: MCHID })).toEqual({ outcome: 'CLOSED' });
    expect(fake.trades.get('V2C_WAIT')?.state).toBe('CLOSED');
    expect(await sut().closeTrade({ orderNo: 'V2C_WAIT', merchantId: MCHID })).toEqual({ outcome: 'CLOSED' });
    expect(await sut().closeTrade({ orderNo: 'V2C_PAID', merchantId: MCHID })).toMatchObject({ outcome: 'PAID' });
    expect(await sut().closeTrade({ orderNo: 'V2C_NONE', merchantId: MCHID })).toMatchObject({ outcome: 'NOT_FOUND' });
  });

  it('should refund over mutual TLS with the merchant certificate, then read the refund by refundquery', async () => {
    const refundNo = uniqueId('RF');
    const request = refundRequest(refundNo);

    const accepted = await sut().refund(request);

    expect(accepted).toMatchObject({ outcome: 'PROCESSING', channelRefundId: fake.refunds.get(refundNo)?.refundId });
    const [call] = fake.callsTo('/secapi/pay/refund').filter((c) => c.fields.out_refund_no === refundNo);
    expect(call).toMatchObject({
      merchantCertificate: true,
      fields: { transaction_id: request.transactionId, refund_fee: '300', total_fee: '1000', refund_fee_type: 'CNY' },
    });
    expect(await sut().queryRefund(request)).toMatchObject({ outcome: 'PROCESSING' });
    fake.refunds.get(refundNo)!.status = 'SUCCESS';
    expect(await sut().queryRefund(request)).toMatchObject({ outcome: 'SUCCEEDED' });
    fake.refunds.get(refundNo)!.status = 'CHANGE';
    expect(await sut().queryRefund(request)).toMatchObject({ outcome: 'ABNORMAL' });
    expect(await sut().queryRefund(refundRequest(uniqueId('RF')))).toMatchObject({ outcome: 'NOT_REFUNDED' });
  });

  it('should not refund without the merchant certificate: a RETRY, and the platform refuses a request without it', async () => {
    const refundNo = uniqueId('RF');
    const noCert = callsFor({ apiV2CertPath: undefined });
    expect(await noCert.refund(refundRequest(refundNo))).toMatchObject({
      outcome: 'RETRY',
      detail: expect.stringContaining('apiclient_cert.p12'),
    });
    expect(fake.refunds.has(refundNo)).toBe(false);
    // Sent anyway, signed but over TLS without the client certificate: the platform refuses it.
    const fields = { appid: APPID, mch_id: MCHID, nonce_str: 'n1', out_refund_no: refundNo, transaction_id: 'T1' };
    const bare = await undiciFetch(`${fake.url}/secapi/pay/refund`, {
      method: 'POST',
      body: writeV2Xml({ ...fields, sign: signV2(fields, API_V2_KEY, 'MD5') }),
      dispatcher: new Agent({ connect: { ca: tls.serverCertPem } }),
    });
    expect(await bare.text()).toContain('CERT_REQUIRED');
    expect(fake.refunds.has(refundNo)).toBe(false);
  });

  it('should refuse an answer signed with another key', async () => {
    fake.forgeAnswers = true;
    try {
      expect(await sut().queryTrade({ orderNo: 'V2Q_PAID', merchantId: MCHID })).toEqual({
        outcome: 'FAILED',
        detail: 'WeChat Pay /pay/orderquery answer has no valid sign',
      });
      expect(await sut().refund(refundRequest(uniqueId('RF')))).toMatchObject({ outcome: 'RETRY' });
    } finally {
      fake.forgeAnswers = false;
    }
  });

  it('should download the bill of a day, and say NOT_READY before it exists', async () => {
    fake.bills.set(
      '20261130',
      [
        '交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,付款银行,货币种类,应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券退款金额,退款类型,退款状态,商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,费率备注',
        `\`2026-11-30 10:00:00,\`${APPID},\`${MCHID},\`0,\`,\`4200000000000000000000000009,\`V2B_1,\`oUpF8,\`JSAPI,\`SUCCESS,\`OTHERS,\`CNY,\`12.34,\`0.00,\`0,\`0,\`0.00,\`0.00,\`,\`,\`goods,\`,\`0.07,\`0.60%,\`12.34,\`0.00,\``,
        '总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额',
        '`1,`12.34,`0.00,`0.00,`0.07,`12.34,`0.00',
      ].join('\r\n') + '\r\n',
    );
    expect(await sut().downloadBill(MCHID, '2026-11-29')).toMatchObject({ outcome: 'NOT_READY' });
    const ready = await sut().downloadBill(MCHID, '2026-11-30');
    expect(ready.outcome).toBe('READY');
    const entries: BillEntry[] = [];
    if (ready.outcome === 'READY') for await (const entry of ready.entries) entries.push(entry);
    expect(entries).toEqual([
      expect.objectContaining({
        kind: 'PAYMENT',
        orderNo: 'V2B_1',
        transactionId: '4200000000000000000000000009',
        amount: 1234,
      }),
    ]);
  });
});

describe('creating a payment through APIv2 unifiedorder', () => {
  const request = (method: string, payer: Record<string, string> = {}) => ({
    orderNo: uniqueId('V2C'),
    merchantId: MCHID,
    amount: 1888,
    currency: 'CNY',
    description: 'A tea',
    method,
    notifyBaseUrl: 'https://pay.example.com/notify',
    expiresAt: new Date('2031-01-02T03:04:05Z'),
    payer,
  });

  it("should send the order's terms, signed, and answer wx.requestPayment's parameters signed MD5 with the APIv2 key", async () => {
    const sent = request('JSAPI', { openid: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o' });

    const result = await callsFor().createPayment(sent);

    const [call] = fake.callsTo('/pay/unifiedorder').filter((c) => c.fields.out_trade_no === sent.orderNo);
    expect(call.fields).toMatchObject({
      appid: APPID,
      mch_id: MCHID,
      body: 'A tea',
      total_fee: '1888',
      fee_type: 'CNY',
      time_expire: '20310102110405',
      notify_url: 'https://pay.example.com/notify/wechatpay-v2',
      trade_type: 'JSAPI',
      openid: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o',
    });
    expect(result.outcome).toBe('CREATED');
    const { params } = (result as { buyer: { params: Record<string, string> } }).buyer;
    expect(params).toMatchObject({ appId: APPID, signType: 'MD5', package: expect.stringMatching(/^prepay_id=wx/) });
    const { paySign, ...signed } = params;
    expect(paySign).toBe(signV2(signed, API_V2_KEY, 'MD5'));
  });

  it('should answer NATIVE with code_url and H5 with h5_url (its mweb_url)', async () => {
    const native = await callsFor().createPayment(request('NATIVE'));
    const h5 = await callsFor().createPayment(request('H5', { clientIp: '203.0.113.9', h5Type: 'Wap' }));

    expect(native).toMatchObject({
      outcome: 'CREATED',
      buyer: { params: { code_url: expect.stringMatching(/^weixin:/) } },
    });
    expect(h5).toMatchObject({ outcome: 'CREATED', buyer: { params: { h5_url: expect.stringMatching(/^https:/) } } });
  });

  it('should send the same terms again on a retry (the same trade), and take a refusal as REFUSED with its code', async () => {
    const sent = request('NATIVE');
    await callsFor().createPayment(sent);
    const again = await callsFor().createPayment(sent);
    const other = await callsFor().createPayment({ ...sent, amount: 1999 });

    expect(again.outcome).toBe('CREATED');
    expect(other).toEqual({ outcome: 'REFUSED', code: 'OUT_TRADE_NO_USED', message: '商户订单号重复' });
  });
});

describe('an account with only an APIv2 key, in the service', () => {
  let medium: Medium;
  let ctx: MediumContext;
  let pool: Pool;

  beforeAll(async () => {
    // The refund worker takes every due refund of its database: other suites' would come first.
    const notWechatpay = (env: Record<string, string>) =>
      Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('WECHATPAY_')));
    medium = await startMedium(
      (p) => ({
        ...notWechatpay(p.env),
        WECHATPAY_MCHID: MCHID,
        WECHATPAY_APPIDS: APPID,
        WECHATPAY_APIV2_KEY: API_V2_KEY,
        WECHATPAY_APIV2_CERT_PATH: tls.clientP12Path,
        WECHATPAY_APIV2_CA_PATH: tls.serverCertPath,
        WECHATPAY_API_BASE_URL: fake.url,
        REFUND_POLL_INTERVAL_MS: '200',
      }),
      { imports: [OrderModule, NotifyModule, AdminModule, TradeModule], fake: false, ownDatabase: true },
    );
    ({ ctx, pool } = medium);
  });
  afterAll(async () => {
    await medium?.close();
  });

  const status = async (table: string, column: string, value: string) =>
    (
      await pool.query<Array<RowDataPacket & { status: string }>>(`SELECT status FROM ${table} WHERE ${column} = ?`, [
        value,
      ])
    )[0][0]?.status;
  const registerOrder = (order: { orderNo: string; amount: number; channel?: 'WECHATPAY'; merchantId?: string }) =>
    ctx.inContext(() => ctx.get(PaymentOrderService).register({ userId: 'u-1', currency: 'CNY', ...order }));

  it('should refund through secapi/pay/refund and settle it by refundquery', async () => {
    const orderNo = uniqueId('V2A');
    const transactionId = uniqueId('T');
    expect((await registerOrder({ orderNo, amount: 900 })).created).toBe(true);
    const xml = v2PaymentNotification(
      { mchid: MCHID, appid: APPID, outTradeNo: orderNo, transactionId, totalFee: 900, paidAt: new Date() },
      API_V2_KEY,
    );
    expect((await receive(ctx, 'wechatpay-v2', xml, XML)).body).toBe(ACK);
    const refundNo = uniqueId('RV2');

    await ctx.get(Refunds).request({ orderNo, transactionId, refundNo, reason: 'APIv2 refund' }, 'alice');

    await eventually(
      'the refund to be PROCESSING',
      async () => (await status('refund', 'refund_no', refundNo)) === 'PROCESSING',
    );
    expect(fake.callsTo('/secapi/pay/refund').find((c) => c.fields.out_refund_no === refundNo)).toMatchObject({
      merchantCertificate: true,
      fields: { transaction_id: transactionId, refund_fee: '900', total_fee: '900' },
    });
    fake.refunds.get(refundNo)!.status = 'SUCCESS';
    await eventually(
      'refundquery to settle it',
      async () => (await status('refund', 'refund_no', refundNo)) === 'SUCCEEDED',
    );
    expect(await status('payment_order', 'order_no', orderNo)).toBe('REFUNDED');
  });

  it('should close an order at the platform through closeorder', async () => {
    const orderNo = uniqueId('V2A');
    // Of this channel and account: an order of unknown channel would be closed at Alipay too, which no platform serves here.
    expect((await registerOrder({ orderNo, amount: 500, channel: 'WECHATPAY', merchantId: MCHID })).created).toBe(true);
    fake.trades.set(orderNo, { transactionId: '', totalFee: 500, state: 'NOTPAY' });

    const closed = await ctx.inContext(() => ctx.get(TradeCloseService).close(orderNo));

    expect(closed.order.status).toBe('CLOSED');
    expect(closed.channelClose).toEqual([{ channel: 'WECHATPAY', merchantId: MCHID, outcome: 'CLOSED' }]);
    expect(await status('payment_order', 'order_no', orderNo)).toBe('CLOSED');
    expect(fake.trades.get(orderNo)?.state).toBe('CLOSED');
  });
});
