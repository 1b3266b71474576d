/** Orders paid through the notify routes, as the refund suites need them: one shared copy. */
import { Channel } from '../../src/domain/notification';
import { yuan } from '../../tools/simulator/platform-signers';
import { TestClient, uniqueId } from './test-app';

/** Posts a freshly signed paying notification of `channel` and expects the channel's ack (204 or 200). */
export async function pay(
  client: TestClient,
  channel: Channel,
  orderNo: string,
  transactionId: string,
  amount: number,
): Promise<void> {
  const answer =
    channel === Channel.Wechatpay
      ? await client.postWechatpay(client.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: amount }))
      : await client.postAlipay(
          client.alipayPayment({ outTradeNo: orderNo, tradeNo: transactionId, totalAmount: yuan(amount) }),
        );
  expect(answer.status).toBe(channel === Channel.Wechatpay ? 204 : 200);
}

/** An order paid by one transaction, and (optionally) paid again by a second one: a DUPLICATE_PAYMENT. */
export async function paidOrder(
  client: TestClient,
  channel: Channel,
  amount: number,
  options: { duplicate?: boolean; prefix?: string } = {},
): Promise<{ orderNo: string; paidBy: string; duplicateBy: string; amount: number }> {
  const orderNo = uniqueId(options.prefix ?? 'RO');
  const paidBy = uniqueId('T');
  const duplicateBy = uniqueId('D');
  expect((await client.registerOrder({ orderNo, amount })).status).toBe(201);
  await pay(client, channel, orderNo, paidBy, amount);
  if (options.duplicate) await pay(client, channel, orderNo, duplicateBy, amount);
  return { orderNo, paidBy, duplicateBy, amount };
}
