import { createServer } from 'node:net';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { Channel } from '../../src/domain/notification';
import { yuan } from '../../tools/simulator/platform-signers';
import { TcpProxy } from './tcp-proxy';
import { count, HttpAnswer, TestClient, uniqueId } from './test-app';
import { ADMIN_URL } from './test-database';

/**
 * A free port below Linux's ephemeral range (32768 and up): while the proxy is cut, the app keeps
 * connecting to its port, and a port in the ephemeral range can be taken by such a connection
 * itself (a TCP self-connect), so that the proxy could not listen on it again.
 */
export async function freeFixedPort(): Promise<number> {
  for (;;) {
    const port = 15000 + Math.floor(Math.random() * 17000);
    const server = createServer();
    const listening = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!listening) continue;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }
}

/** A TCP proxy in front of the test MariaDB, listening on a fixed free port so that it can be cut and restored. */
export async function databaseProxy(): Promise<TcpProxy> {
  const server = new URL(ADMIN_URL);
  const proxy = new TcpProxy(server.hostname, Number(server.port || 3306));
  proxy.port = await freeFixedPort();
  await proxy.start();
  return proxy;
}

/** The run's DATABASE_URL, reached through `proxy`. */
export function databaseUrlVia(proxy: TcpProxy): string {
  return process.env.DATABASE_URL!.replace(/@[^/]+\//, `@127.0.0.1:${proxy.port}/`);
}

export interface StormPayment {
  orderNo: string;
  channel: Channel;
  transactionId: string;
  amount: number;
}

/** `n` payments of new orders, alternating the channels, of `firstAmount`, `firstAmount` + 1, … minor units. */
export function stormPayments(n: number, prefix: string, firstAmount = 100): StormPayment[] {
  return Array.from({ length: n }, (_, i) => ({
    orderNo: uniqueId(prefix),
    channel: i % 2 === 0 ? Channel.Wechatpay : Channel.Alipay,
    transactionId: uniqueId('T'),
    amount: firstAmount + i,
  }));
}

/** One delivery of the payment, freshly signed, as the platform sends each retry. */
export async function deliver(client: TestClient, p: StormPayment): Promise<HttpAnswer> {
  if (p.channel === 'WECHATPAY') {
    return client.postWechatpay(
      client.wechatpayPayment({ outTradeNo: p.orderNo, transactionId: p.transactionId, total: p.amount }),
    );
  }
  return client.postAlipay(
    client.alipayPayment({ outTradeNo: p.orderNo, tradeNo: p.transactionId, totalAmount: yuan(p.amount) }),
  );
}

/** The channel's success ack: WeChat 204, Alipay 200 `success`. */
export function isAck(p: StormPayment, answer: HttpAnswer): boolean {
  return p.channel === 'WECHATPAY' ? answer.status === 204 : answer.status === 200 && answer.body === 'success';
}

export async function registerAll(client: TestClient, payments: StormPayment[], concurrency = 10): Promise<void> {
  await inParallel(payments, concurrency, async (p) => {
    const answer = await client.registerOrder({ orderNo: p.orderNo, amount: p.amount });
    if (answer.status !== 201) throw new Error(`registering ${p.orderNo}: ${answer.status} ${answer.body}`);
  });
}

export async function inParallel<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
}

/** What the payments did, counted in the database. */
export async function paymentEffects(pool: Pool, payments: StormPayment[]) {
  const orderNos = payments.map((p) => p.orderNo);
  const transactionIds = payments.map((p) => p.transactionId);
  const [perOrder] = await pool.query<RowDataPacket[]>(
    `SELECT o.order_no,
       (SELECT COUNT(*) FROM order_status_change c WHERE c.order_no = o.order_no AND c.to_status = 'PAID') AS transitions,
       (SELECT COUNT(*) FROM outbox_event e WHERE e.order_no = o.order_no AND e.type = 'payment.succeeded') AS events,
       (SELECT COUNT(*) FROM payment_callback p WHERE p.order_no = o.order_no) AS callbacks
     FROM payment_order o WHERE o.order_no IN (?) AND o.status = 'PAID'`,
    [orderNos],
  );
  return {
    paidOrders: perOrder.length,
    ordersNotExactlyOnce: perOrder
      .filter((r) => Number(r.transitions) !== 1 || Number(r.events) !== 1 || Number(r.callbacks) !== 1)
      .map((r) => r.order_no as string),
    paidTransitions: await count(
      pool,
      `SELECT COUNT(*) FROM order_status_change WHERE order_no IN (?) AND to_status = 'PAID'`,
      [orderNos],
    ),
    outboxEvents: await count(
      pool,
      `SELECT COUNT(*) FROM outbox_event WHERE order_no IN (?) AND type = 'payment.succeeded'`,
      [orderNos],
    ),
    callbacks: await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE transaction_id IN (?)', [transactionIds]),
    deliveries: await count(pool, 'SELECT COUNT(*) FROM callback_delivery WHERE order_no IN (?)', [orderNos]),
    paidDeliveries: await count(
      pool,
      `SELECT COUNT(*) FROM callback_delivery WHERE order_no IN (?) AND outcome = 'PAID'`,
      [orderNos],
    ),
    anomalies: await count(pool, 'SELECT COUNT(*) FROM payment_anomaly WHERE order_no IN (?)', [orderNos]),
  };
}
