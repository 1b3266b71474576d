import { formatMinor, json, onePositional, parseCommand, positiveInteger, print, UsageError } from './cli';
import { DevKeys, loadDevKeys } from './dev-keys';
import type { SimulatedChannel } from './channel-simulator';
import { channelOption, channelSimulator, CHANNELS } from './channels';

export const ORDER_USAGE = `order <orderNo> --amount FEN [--channel ${CHANNELS.join('|')}] [--channel-order-time yyyyMMddHHmmss] [--target URL]`;

/**
 * Registers an order through the internal API, as the order service would. An order for a channel that finds its
 * trades by the time they were sent (UnionPay's txnTime) gets that time, now, unless --channel-order-time names one;
 * `pay` then sends its notification with it.
 */
export async function order(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    amount: { type: 'string' },
    channel: { type: 'string' },
    'channel-order-time': { type: 'string' },
  });
  const orderNo = onePositional(positionals, 'order number');
  const amount = positiveInteger(values.amount, 'amount');
  if (amount === undefined) throw new UsageError('--amount is required (minor units: 1999 is 19.99)');
  const channel = values.channel === undefined ? undefined : channelOption(values.channel);
  const registered = await registerOrder(loadDevKeys(values.keys), values.target, {
    orderNo,
    amount,
    channel,
    channelOrderTime: values['channel-order-time'],
  });
  return registered ? 0 : 1;
}

/**
 * POST /payment-orders; prints the answer; true when the order is registered (now or before, identically).
 * The channel's default channelOrderTime (UnionPay's txnTime, now in Beijing) unless one is given.
 */
export async function registerOrder(
  keys: DevKeys,
  target: string,
  o: { orderNo: string; amount: number; channel?: SimulatedChannel; channelOrderTime?: string },
  quiet = false,
): Promise<boolean> {
  const channelOrderTime =
    o.channelOrderTime ??
    (o.channel === undefined ? undefined : channelSimulator(o.channel).defaultChannelOrderTime?.());
  const answer = await json(`${target}/payment-orders`, 'POST', keys.internalApiToken, {
    orderNo: o.orderNo,
    userId: 'simulator',
    amount: o.amount,
    currency: 'CNY',
    ...(o.channel ? { channel: o.channel.toUpperCase() } : {}),
    ...(channelOrderTime ? { channelOrderTime } : {}),
  });
  const ok = answer.status === 201 || answer.status === 200;
  if (ok && quiet) return true;
  const what = answer.status === 201 ? 'registered' : answer.status === 200 ? 'already registered' : 'REFUSED';
  print(
    `order ${o.orderNo}  ${formatMinor(o.amount)} CNY  ${answer.status} ${what}${ok ? '' : `: ${message(answer)}`}`,
  );
  return ok;
}

/** The order's amount, asked of the service; undefined (and said why) when it does not know it. */
export async function orderAmount(keys: DevKeys, target: string, orderNo: string): Promise<number | undefined> {
  const answer = await json(`${target}/payment-orders/${encodeURIComponent(orderNo)}`, 'GET', keys.internalApiToken);
  if (answer.status === 200) return Number(answer.json.amount);
  print(`order ${orderNo}: ${answer.status} ${message(answer)} (pass --amount to pay it anyway)`);
  return undefined;
}

/** The time the order was registered as sent to its channel (channelOrderTime), when the service knows one. */
export async function orderChannelTime(keys: DevKeys, target: string, orderNo: string): Promise<string | undefined> {
  const answer = await json(`${target}/payment-orders/${encodeURIComponent(orderNo)}`, 'GET', keys.internalApiToken);
  const said = answer.status === 200 ? answer.json.channelOrderTime : undefined;
  return typeof said === 'string' ? said : undefined;
}

/** What the service now says about the order, in one line. */
export async function printOrderStatus(keys: DevKeys, target: string, orderNo: string): Promise<void> {
  const answer = await json(`${target}/payment-orders/${encodeURIComponent(orderNo)}`, 'GET', keys.internalApiToken);
  if (answer.status !== 200) return print(`order ${orderNo}: ${answer.status} ${message(answer)}`);
  const { status, transactionId } = answer.json;
  print(
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the service's JSON fields, printed as they came
    `order ${orderNo} is ${String(status)}${transactionId ? `, paid by transaction ${String(transactionId)}` : ''}`,
  );
}

export function message(answer: { json: Record<string, unknown>; body: string }): string {
  const said = answer.json.message;
  return Array.isArray(said) ? said.join('; ') : typeof said === 'string' ? said : answer.body;
}
