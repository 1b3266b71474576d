import { Pool } from 'mysql2/promise';
import { Channel } from '../src/domain/notification';
import {
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
import { PaymentEffects } from './support/payment-effects';
import { notifyChannels, recentSecond } from './support/notify-channels';

/**
 * What the platforms and the order API's callers see over HTTP: the acks and refusals as they go
 * over the wire, the order API's status codes and bodies, and its bearer token. What each delivery
 * and order writes is in test/medium/payment-deliveries.medium-spec.ts, settlement.medium-spec.ts
 * and payment-orders.medium-spec.ts.
 */
let platforms: TestPlatforms;
let running: RunningApp;
let client: TestClient;
let pool: Pool;
let db: PaymentEffects;

const notify = notifyChannels(() => client);
const FAILURE_ON_THE_WIRE: Record<string, (a: HttpAnswer) => void> = {
  [Channel.Wechatpay]: (a) => expect(a.json()).toEqual({ code: 'FAIL', message: expect.stringMatching(/\S/) }),
  [Channel.Alipay]: (a) => expect(a.body).toBe('fail'),
};

async function registerOrder(amount: number): Promise<string> {
  const orderNo = uniqueId('PO');
  expect((await client.registerOrder({ orderNo, amount })).status).toBe(201);
  return orderNo;
}

beforeAll(async () => {
  platforms = await createTestPlatforms();
  // USD too, so that the order API's conflict on a different currency is reachable.
  running = await startApp({ ...notificationsOnly(platforms.env), CURRENCIES: 'CNY,USD' });
  client = new TestClient(running.url, platforms);
  pool = testDatabasePool();
  db = new PaymentEffects(pool);
});
afterAll(async () => {
  await running?.close();
  await pool?.end();
});

describe.each(Object.values(notify).map((c) => [c.name, c] as const))('%s', (name, channel) => {
  it('should ack a payment on the wire, show it in the order API, and refuse an unknown order in the platform’s format', async () => {
    const orderNo = await registerOrder(8888);
    const transactionId = uniqueId('T');
    const paidAt = recentSecond();

    channel.expectAck(await channel.post(channel.payment({ orderNo, transactionId, amount: 8888, paidAt })));

    const view = await client.api('GET', `/payment-orders/${orderNo}`);
    expect(view.status).toBe(200);
    expect(view.json()).toMatchObject({
      orderNo,
      status: 'PAID',
      amount: 8888,
      currency: 'CNY',
      channel: name,
      transactionId,
      paidAt: paidAt.toISOString(),
    });
    const refused = await channel.post(
      channel.payment({ orderNo: uniqueId('PO'), transactionId: uniqueId('T'), amount: 4200 }),
    );
    expect(refused.status).toBeGreaterThanOrEqual(400);
    FAILURE_ON_THE_WIRE[name](refused);
  });
});

describe('order API', () => {
  it('should answer 201, 200 for the same body, 409 for another, 400 for a currency not taken, and 404 for an unknown order', async () => {
    const orderNo = uniqueId('PO');
    const body = { orderNo, userId: 'u-42', amount: 1999, currency: 'CNY' };

    const created = await client.api('POST', '/payment-orders', body);
    expect(created.status).toBe(201);
    expect(created.json()).toEqual({
      orderNo,
      userId: 'u-42',
      status: 'WAIT_PAY',
      amount: 1999,
      currency: 'CNY',
      channel: null,
      merchantId: null,
      subMerchantId: null,
      channelOrderTime: null,
      transactionId: null,
      paidAt: null,
    });
    const again = await client.api('POST', '/payment-orders', body);
    expect(again.status).toBe(200);
    expect(again.json()).toEqual(created.json());
    for (const different of [{ amount: 2000 }, { userId: 'u-43' }, { currency: 'USD' }]) {
      const conflict = await client.api('POST', '/payment-orders', { ...body, ...different });
      expect(conflict.status).toBe(409);
      expect(conflict.json().message).toEqual(expect.stringContaining(orderNo));
    }
    expect(
      (await client.api('POST', '/payment-orders', { ...body, orderNo: uniqueId('PO'), currency: 'USD' })).status,
    ).toBe(201);
    const refused = await client.api('POST', '/payment-orders', { ...body, orderNo: uniqueId('PO'), currency: 'HKD' });
    expect(refused.status).toBe(400);
    expect(refused.json()).toEqual({
      statusCode: 400,
      error: expect.any(String),
      message: 'currency HKD is not accepted (accepted: CNY, USD)',
    });
    const unknown = uniqueId('PO');
    const notFound = await client.api('GET', `/payment-orders/${unknown}`);
    expect(notFound.status).toBe(404);
    expect(notFound.json().message).toEqual(expect.stringContaining(unknown));
  });

  it('should close with 200 CLOSED (again on a second close), 409 for a PAID order and 404 for an unknown one', async () => {
    const orderNo = await registerOrder(700);
    const first = await client.api('POST', `/payment-orders/${orderNo}/close`);
    const second = await client.api('POST', `/payment-orders/${orderNo}/close`);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(first.json()).toMatchObject({ orderNo, status: 'CLOSED' });
    expect(second.json()).toEqual(first.json());
    expect((await client.api('GET', `/payment-orders/${orderNo}`)).json()).toMatchObject({ status: 'CLOSED' });

    const paid = await registerOrder(600);
    notify.WECHATPAY.expectAck(
      await notify.WECHATPAY.post(
        notify.WECHATPAY.payment({ orderNo: paid, transactionId: uniqueId('T'), amount: 600 }),
      ),
    );
    const conflict = await client.api('POST', `/payment-orders/${paid}/close`);
    expect(conflict.status).toBe(409);
    expect(conflict.json().message).toEqual(expect.stringMatching(/PAID/));
    expect((await client.api('POST', `/payment-orders/${uniqueId('PO')}/close`)).status).toBe(404);
  });

  it.each([
    ['no Authorization header', undefined],
    ['an empty bearer token', 'Bearer '],
    ['a wrong bearer token', 'Bearer not-the-token'],
    ['the right token without the Bearer scheme', 'TOKEN'],
    ['the right token with another scheme', 'Basic TOKEN'],
  ])('should answer 401 to %s, and change nothing', async (_name, authorization) => {
    const orderNo = await registerOrder(800);
    const newOrderNo = uniqueId('PO');
    const send = (method: string, path: string, body?: unknown) => {
      const headers: Record<string, string> = {};
      if (authorization !== undefined)
        headers.authorization = authorization.replace('TOKEN', platforms.internalApiToken);
      if (body !== undefined) headers['content-type'] = 'application/json';
      return fetch(running.url + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    };

    const answers = [
      await send('POST', '/payment-orders', { orderNo: newOrderNo, userId: 'u-1', amount: 100, currency: 'CNY' }),
      await send('GET', `/payment-orders/${orderNo}`),
      await send('POST', `/payment-orders/${orderNo}/close`),
    ];

    for (const answer of answers) {
      expect(answer.status).toBe(401);
      expect(((await answer.json()) as { message?: string }).message).toEqual(expect.stringMatching(/\S/));
    }
    expect(await db.orderRow(newOrderNo)).toBeUndefined();
    expect((await db.orderRow(orderNo))?.status).toBe('WAIT_PAY');
  });
});
