import { RowDataPacket } from 'mysql2/promise';
import { count, uniqueId } from './support/test-app';
import { suiteApp } from './support/suite-app';

/**
 * The notify routes take their body as bytes and leave parsing to the channel's verifier; every
 * other route keeps Fastify's JSON parsing, prototype-poisoning checks included.
 */
describe('request bodies', () => {
  const suite = suiteApp();

  async function loggedBodies(transactionId: string): Promise<Buffer[]> {
    const [rows] = await suite.pool.query<RowDataPacket[]>(
      'SELECT raw_body FROM callback_delivery WHERE transaction_id = ? ORDER BY id',
      [transactionId],
    );
    return rows.map((row) => row.raw_body as Buffer);
  }

  it('should pay an Alipay form encoded differently from ours (reordered, + for spaces), logging its exact bytes', async () => {
    const orderNo = uniqueId('RB');
    const tradeNo = uniqueId('T');
    expect((await suite.client.registerOrder({ orderNo, amount: 100 })).status).toBe(201);
    const form = suite.client.alipayPayment({ outTradeNo: orderNo, tradeNo, totalAmount: '1.00' });
    // URLSearchParams writes a space as `+` where the signer wrote `%20`: other bytes, the same parameters.
    const reencoded = new URLSearchParams([...new URLSearchParams(form)].reverse()).toString();
    expect(reencoded).not.toBe(form);
    expect(reencoded).toContain('+');

    const answer = await suite.client.postAlipay(reencoded);

    expect([answer.status, answer.body]).toEqual([200, 'success']);
    expect(
      await count(suite.pool, "SELECT COUNT(*) FROM payment_order WHERE order_no = ? AND status = 'PAID'", [orderNo]),
    ).toBe(1);
    expect(await loggedBodies(tradeNo)).toEqual([Buffer.from(reencoded, 'utf8')]);
  });

  it('should log the exact bytes of a WeChat Pay body, whitespace and key order included', async () => {
    const orderNo = uniqueId('RB');
    const transactionId = uniqueId('T');
    expect((await suite.client.registerOrder({ orderNo, amount: 100 })).status).toBe(201);
    const delivery = suite.client.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 100 });

    const answer = await suite.client.postWechatpay(delivery);

    expect(answer.status).toBe(204);
    expect(await loggedBodies(transactionId)).toEqual([Buffer.from(delivery.body, 'utf8')]);
  });

  it.each([
    ['__proto__', '"__proto__":{"admin":true}'],
    ['constructor.prototype', '"constructor":{"prototype":{"admin":true}}'],
  ])(
    "should still refuse an order with %s in its JSON on the order API with 400 (Fastify's parser checks it)",
    async (_name, poison) => {
      const body = `{"orderNo":"${uniqueId('RB')}","userId":"u-1","amount":100,"currency":"CNY",${poison}}`;
      const response = await fetch(`${suite.running.url}/payment-orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${suite.platforms.internalApiToken}`, 'content-type': 'application/json' },
        body,
      });

      expect(response.status).toBe(400);
      expect(((await response.json()) as { message: string }).message).toMatch(/not valid JSON/);
      expect(
        await count(suite.pool, 'SELECT COUNT(*) FROM payment_order WHERE order_no = ?', [
          (JSON.parse(body) as { orderNo: string }).orderNo,
        ]),
      ).toBe(0);
    },
  );

  it('should still parse a JSON body on the order API', async () => {
    const orderNo = uniqueId('RB');

    const answer = await suite.client.registerOrder({ orderNo, amount: 250 });

    expect(answer.status).toBe(201);
    expect(
      await count(suite.pool, 'SELECT COUNT(*) FROM payment_order WHERE order_no = ? AND amount = 250', [orderNo]),
    ).toBe(1);
  });
});
