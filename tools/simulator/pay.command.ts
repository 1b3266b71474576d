import { http, json, onePositional, parseCommand, positiveInteger, print, UnreachableError, UsageError } from './cli';
import { DevKeys, loadDevKeys } from './dev-keys';
import { message, orderAmount, orderChannelTime, printOrderStatus } from './order.command';
import { Ack, deliver, printAck } from './notifications';
import { ChannelSimulator, PaymentParams } from './channel-simulator';
import {
  channelOptions,
  channelSimulator,
  channelUsage,
  CHANNELS,
  checkChannelOptions,
  commandParts,
} from './channels';

/** Each channel's options of `pay` (WeChat Pay's --dialect, --sub-mchid, --sign-type …). */
const CHANNEL_PARTS = commandParts((channel) => channel.pay);

export const PAY_USAGE = `pay <orderNo> --channel ${CHANNELS.join('|')} [--amount FEN] [--times N] [--concurrent] [--status S] [--transaction ID]${channelUsage(CHANNEL_PARTS)}`;

/**
 * Pays an order at the channel: one new transaction (or --transaction), its notification delivered --times times,
 * one after the other or all at once. The amount is the order's unless --amount says otherwise (a mismatch).
 */
export async function pay(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    channel: { type: 'string' },
    amount: { type: 'string' },
    times: { type: 'string', default: '1' },
    concurrent: { type: 'boolean', default: false },
    status: { type: 'string' },
    transaction: { type: 'string' },
    ...channelOptions(CHANNEL_PARTS),
  });
  const orderNo = onePositional(positionals, 'order number');
  const channel = channelSimulator(values.channel);
  checkChannelOptions(CHANNEL_PARTS, values, channel.name);
  const times = positiveInteger(values.times, 'times')!;
  if (times > 100) throw new UsageError('--times is at most 100 (the platforms deliver up to 8 times)');
  const keys = loadDevKeys(values.keys);
  const target = values.target;
  const prepared = await channel.pay?.prepare?.({
    keys,
    values,
    orderChannelTime: () => orderChannelTime(keys, target, orderNo),
  });
  // A payment the service created at the platform is paid as its buyer would, and notified where it was told.
  // A form or orderStr the service signed reaches the platform only when the buyer brings it: brought first.
  const created =
    (await createdTrade(keys, channel, orderNo)) ??
    ((await bringBuyerRequest(keys, channel, target, orderNo))
      ? await createdTrade(keys, channel, orderNo)
      : undefined);
  if (created) {
    print(
      `the buyer ${channel.buyerActions[created.tradeType] ?? 'pays'} (${created.tradeType}, ${created.merchantId})`,
    );
    print(`  the service gave the platform notify_url ${created.notifyUrl}`);
  }
  const amount =
    positiveInteger(values.amount, 'amount') ?? created?.amount ?? (await orderAmount(keys, target, orderNo));
  if (amount === undefined) return 1;
  const status = values.status ?? channel.payingStatus;
  const payment: PaymentParams = {
    orderNo,
    amount,
    status,
    // Alipay gives a trade its trade_no when it is created; the payment keeps it.
    transactionId: values.transaction ?? created?.transactionId ?? channel.newTransactionId(),
    ...prepared?.params,
  };
  const sign = () => prepared?.sign?.(payment) ?? channel.paymentNotification(keys, payment);
  const notification = sign();
  print(
    `${notification.summary}  → ${target}, ${times} ${times === 1 ? 'delivery' : 'deliveries'}${values.concurrent ? ' at once' : ''}`,
  );
  if (channel.payingStatuses.includes(status)) await tellPlatform(keys, channel, payment);
  // Each delivery signed afresh, as the platforms sign their retries (WeChat Pay: a new timestamp and nonce).
  const acks = await deliverTimes(times, values.concurrent === true, () => deliver(target, sign()));
  acks.forEach((ack, i) => printAck(i + 1, ack));
  if (acks.some((ack) => ack.acked)) await printOutcome(keys, target, orderNo, payment.transactionId);
  await printOrderStatus(keys, target, orderNo);
  return acks.every((ack) => ack.acked) ? 0 : 1;
}

/**
 * The buyer's side of a payment the service signed without calling the platform (Alipay page, wap and app pay,
 * UnionPay's front consumption): the form posted, or the orderStr taken, to the platform, as the browser or the
 * SDK does, so that the platform opens the trade. Read from the admin order view; false when there is none.
 */
async function bringBuyerRequest(
  keys: DevKeys,
  channel: ChannelSimulator,
  target: string,
  orderNo: string,
): Promise<boolean> {
  let view;
  try {
    view = await json(`${target}/admin/orders/${encodeURIComponent(orderNo)}`, 'GET', keys.admins[0]?.token);
  } catch (error) {
    if (!(error instanceof UnreachableError)) throw error;
    return false;
  }
  const buyer = (view.json as { createdPayment?: { buyer?: BuyerParameters | null } } | undefined)?.createdPayment
    ?.buyer;
  const request = buyer?.form
    ? { url: buyer.form.action, body: new URLSearchParams(buyer.params).toString() }
    : buyer && channel.buyerRequest?.(keys, buyer.params);
  if (!request) return false;
  try {
    const answer = await http(request.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: request.body,
    });
    if (answer.status !== 200) print(`  the platform refused the buyer's request: ${answer.status} ${answer.body}`);
    return answer.status === 200;
  } catch (error) {
    if (!(error instanceof UnreachableError)) throw error;
    print('  (the platform server is not running: the buyer cannot bring it the signed request)');
    return false;
  }
}

interface BuyerParameters {
  params: Record<string, string>;
  form?: { action: string; method: string };
}

/** The trade the service created at the running platform server for the order, if any. */
async function createdTrade(
  keys: DevKeys,
  channel: ChannelSimulator,
  orderNo: string,
): Promise<
  { amount: number; tradeType: string; notifyUrl: string; merchantId: string; transactionId?: string } | undefined
> {
  try {
    const answer = await json(
      `http://127.0.0.1:${keys.platformPort}/simulator/created/${encodeURIComponent(orderNo)}?channel=${channel.name}`,
      'GET',
      undefined,
    );
    return answer.status === 200
      ? (answer.json as unknown as {
          amount: number;
          tradeType: string;
          notifyUrl: string;
          merchantId: string;
          transactionId?: string;
        })
      : undefined;
  } catch (error) {
    if (!(error instanceof UnreachableError)) throw error;
    return undefined;
  }
}

async function deliverTimes(times: number, concurrent: boolean, send: () => Promise<Ack>): Promise<Ack[]> {
  if (concurrent) return Promise.all(Array.from({ length: times }, send));
  const acks: Ack[] = [];
  for (let i = 0; i < times; i++) acks.push(await send());
  return acks;
}

/** The platform server, when it runs, learns the trade: its queries then answer it paid, its refunds find the order. */
async function tellPlatform(keys: DevKeys, channel: ChannelSimulator, payment: PaymentParams): Promise<void> {
  try {
    await http(`http://127.0.0.1:${keys.platformPort}/simulator/trades`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ channel: channel.name, ...payment }),
    });
  } catch (error) {
    if (!(error instanceof UnreachableError)) throw error;
    print(`  (the platform server is not running: its trade queries will not know this payment)`);
  }
}

interface OrderView {
  deliveries: { items: Array<{ transactionId: string | null; outcome: string }> };
  anomalies: Array<{ id: string; type: string; transactionId: string; status: string }>;
}

const OUTCOME_WORDS: Record<string, string> = {
  PAID: 'the order is paid by it',
  DUPLICATE: 'already applied, nothing changed',
  NOT_PAYING: 'a status that pays nothing',
};

/**
 * What the service made of the transaction: the ack only says it was received, the admin order view (read with
 * the first admin's token) says what happened, e.g. `DUPLICATE_PAYMENT anomaly opened`.
 */
async function printOutcome(keys: DevKeys, target: string, orderNo: string, transactionId: string): Promise<void> {
  const answer = await json(`${target}/admin/orders/${encodeURIComponent(orderNo)}`, 'GET', keys.admins[0]?.token);
  if (answer.status !== 200) {
    return print(`  outcome unknown: GET /admin/orders/${orderNo} answered ${answer.status} ${message(answer)}`);
  }
  const view = answer.json as unknown as OrderView;
  const outcomes = new Set(
    view.deliveries.items.filter((d) => d.transactionId === transactionId).map((d) => d.outcome),
  );
  const anomaly = view.anomalies.find((a) => a.transactionId === transactionId);
  for (const outcome of outcomes) {
    if (anomaly?.type === outcome) print(`  outcome ${outcome} anomaly opened (#${anomaly.id}, ${anomaly.status})`);
    else print(`  outcome ${outcome}${OUTCOME_WORDS[outcome] ? `: ${OUTCOME_WORDS[outcome]}` : ''}`);
  }
}
