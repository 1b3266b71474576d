import { randomInt } from 'node:crypto';
import { json, parseCommand, positiveInteger, print, UsageError } from './cli';
import { loadDevKeys } from './dev-keys';
import { registerOrder } from './order.command';
import { CHANNELS, deliver, newTransactionId, Notification, paymentNotification } from './notifications';

export const STORM_USAGE = 'storm --orders N [--concurrency 16]';

/** How many times a payment is delivered: 1 to 8, 3.27 on average, like the platforms' retries. */
const DELIVERY_WEIGHTS = [15, 20, 25, 20, 10, 5, 3, 2];

/**
 * Registers N orders, pays each once (by each channel in turn) and delivers every payment 1 to 8 times,
 * shuffled, N at a time; then asks the service whether every order is PAID.
 */
export async function storm(args: string[]): Promise<number> {
  const { values } = parseCommand(args, {
    orders: { type: 'string' },
    concurrency: { type: 'string', default: '16' },
  });
  const orders = positiveInteger(values.orders, 'orders');
  if (orders === undefined) throw new UsageError('--orders is required');
  if (orders > 100_000) throw new UsageError('--orders is at most 100000 (npm run bench measures larger storms)');
  const concurrency = positiveInteger(values.concurrency, 'concurrency')!;
  const keys = loadDevKeys(values.keys);
  const prefix = `STORM${Date.now().toString(36).toUpperCase()}`;
  const deliveries: Notification[] = [];
  const orderNos: string[] = [];
  for (let i = 0; i < orders; i++) {
    const orderNo = `${prefix}N${i + 1}`; // letters and digits only: every channel takes it (UnionPay refuses _)
    const channel = CHANNELS[i % CHANNELS.length];
    const amount = randomInt(1, 100_000);
    if (!(await registerOrder(keys, values.target, { orderNo, amount, channel }, true))) return 1;
    orderNos.push(orderNo);
    const payment = { orderNo, amount, transactionId: newTransactionId(channel) };
    // Each delivery signed afresh, as the platforms sign their retries (WeChat Pay: a new timestamp and nonce).
    for (let n = deliveryCount(); n > 0; n--) deliveries.push(paymentNotification(keys, channel, payment));
  }
  print(
    `${orders} orders registered (${prefix}N1 … ${prefix}N${orders}); ${deliveries.length} deliveries, ${concurrency} at a time`,
  );
  const started = performance.now();
  const acks = await inParallel(shuffled(deliveries), concurrency, (n) => deliver(values.target, n));
  const seconds = (performance.now() - started) / 1000;
  const refused = acks.filter((ack) => !ack.acked);
  print(
    `${acks.length - refused.length} acked, ${refused.length} refused in ${seconds.toFixed(1)} s (${Math.round(acks.length / seconds)}/s)`,
  );
  for (const ack of refused.slice(0, 5)) print(`  refused: ${ack.status} ${ack.said}`);
  const unpaid = await unpaidOrders(values.target, keys.internalApiToken, orderNos, concurrency);
  print(
    `${orders - unpaid.length} of ${orders} orders PAID${unpaid.length ? `; not paid: ${unpaid.slice(0, 5).join(', ')}` : ''}`,
  );
  return refused.length === 0 && unpaid.length === 0 ? 0 : 1;
}

function deliveryCount(): number {
  let pick = randomInt(DELIVERY_WEIGHTS.reduce((sum, w) => sum + w, 0));
  for (let i = 0; i < DELIVERY_WEIGHTS.length; i++) {
    pick -= DELIVERY_WEIGHTS[i];
    if (pick < 0) return i + 1;
  }
  return DELIVERY_WEIGHTS.length;
}

function shuffled<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

async function inParallel<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

async function unpaidOrders(target: string, token: string, orderNos: string[], limit: number): Promise<string[]> {
  const statuses = await inParallel(orderNos, limit, async (orderNo) => {
    const answer = await json(`${target}/payment-orders/${encodeURIComponent(orderNo)}`, 'GET', token);
    return answer.json.status === 'PAID' ? undefined : orderNo;
  });
  return statuses.filter((orderNo): orderNo is string => orderNo !== undefined);
}
