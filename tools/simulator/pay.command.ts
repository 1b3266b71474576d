import { http, json, onePositional, parseCommand, positiveInteger, print, UnreachableError, UsageError } from './cli';
import { DevKeys, loadDevKeys } from './dev-keys';
import { channelOption, message, orderAmount, orderChannelTime, printOrderStatus } from './order.command';
import { Ack, deliver, newTransactionId, paymentNotification, printAck, SimulatedChannel } from './notifications';
import { wechatpayDialect } from './wechatpay/partner-dialect';
import { dialectOption, signTypeOption, v2PaymentDelivery } from './wechatpay/v2/v2-simulation';

export const PAY_USAGE =
  'pay <orderNo> --channel wechatpay|alipay|unionpay [--amount FEN] [--times N] [--concurrent] [--status S] [--transaction ID] [--dialect v3|partner|v2] [--sub-mchid ID] [--sign-type MD5|HMAC-SHA256]';

const PAYING_STATUSES = new Set(['SUCCESS', 'TRADE_SUCCESS', 'TRADE_FINISHED', '00', 'A6']);
/** Each channel's paying status: WeChat trade_state, Alipay trade_status, UnionPay respCode. */
const DEFAULT_STATUS = { wechatpay: 'SUCCESS', alipay: 'TRADE_SUCCESS', unionpay: '00' } as const;

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
    dialect: { type: 'string' },
    'sub-mchid': { type: 'string' },
    'sign-type': { type: 'string' },
  });
  const orderNo = onePositional(positionals, 'order number');
  const channel = channelOption(values.channel);
  // v2 is its own notification endpoint; v3 and partner are the APIv3 dialects of the key set.
  const dialect = values.dialect === 'v2' ? dialectOption(values.dialect, channel) : undefined;
  const signType = signTypeOption(values['sign-type']);
  const times = positiveInteger(values.times, 'times')!;
  if (times > 100) throw new UsageError('--times is at most 100 (the platforms deliver up to 8 times)');
  const keys = loadDevKeys(values.keys);
  if (channel !== 'wechatpay' && (values.dialect !== undefined || values['sub-mchid'] !== undefined)) {
    throw new UsageError('--dialect and --sub-mchid are WeChat Pay options');
  }
  const { subMchid } =
    channel === 'wechatpay' && dialect !== 'v2'
      ? wechatpayDialect(keys, values.dialect, values['sub-mchid'])
      : { subMchid: undefined };
  // A payment the service created at the platform is paid as its buyer would, and notified where it was told.
  // A form or orderStr the service signed reaches the platform only when the buyer brings it: brought first.
  const created =
    (await createdTrade(keys, channel, orderNo)) ??
    ((await bringBuyerRequest(keys, values.target, orderNo)) ? await createdTrade(keys, channel, orderNo) : undefined);
  if (created) {
    print(`the buyer ${BUYER_ACTIONS[created.tradeType] ?? 'pays'} (${created.tradeType}, ${created.merchantId})`);
    print(`  the service gave the platform notify_url ${created.notifyUrl}`);
  }
  const target = values.target;
  const amount =
    positiveInteger(values.amount, 'amount') ?? created?.amount ?? (await orderAmount(keys, values.target, orderNo));
  if (amount === undefined) return 1;
  const status = values.status ?? DEFAULT_STATUS[channel];
  // UnionPay: the consumption's txnTime is the one the order was registered with (channelOrderTime), so the
  // service's queryTrans finds it; now when the order has none.
  const txnTime = channel === 'unionpay' ? await orderChannelTime(keys, values.target, orderNo) : undefined;
  const payment = {
    orderNo,
    amount,
    status,
    // Alipay gives a trade its trade_no when it is created; the payment keeps it.
    transactionId: values.transaction ?? created?.transactionId ?? newTransactionId(channel),
    subMchid,
    txnTime,
  };
  // WeChat Pay v2: an XML result_code, signed with the APIv2 key, at /notify/wechatpay-v2.
  const sign = () =>
    dialect === 'v2' ? v2PaymentDelivery(keys, payment, signType) : paymentNotification(keys, channel, payment);
  const notification = sign();
  print(
    `${notification.summary}  → ${target}, ${times} ${times === 1 ? 'delivery' : 'deliveries'}${values.concurrent ? ' at once' : ''}`,
  );
  if (PAYING_STATUSES.has(status)) await tellPlatform(keys, channel, payment);
  // Each delivery signed afresh, as the platforms sign their retries (WeChat Pay: a new timestamp and nonce).
  const acks = await deliverTimes(times, values.concurrent, () => deliver(target, sign()));
  acks.forEach((ack, i) => printAck(i + 1, ack));
  if (acks.some((ack) => ack.acked)) await printOutcome(keys, values.target, orderNo, payment.transactionId);
  await printOrderStatus(keys, values.target, orderNo);
  return acks.every((ack) => ack.acked) ? 0 : 1;
}

/** What the buyer does with what the service gave it, per trade type the platform was asked for. */
const BUYER_ACTIONS: Record<string, string> = {
  jsapi: 'confirms the prepay in WeChat (wx.requestPayment)',
  app: 'confirms the prepay in the app',
  native: 'scans the code_url',
  h5: 'opens the h5_url',
  'alipay.trade.page.pay': 'posts the page pay form to Alipay and pays at the cashier',
  'alipay.trade.wap.pay': 'posts the wap pay form to Alipay and pays at the cashier',
  'alipay.trade.app.pay': "takes the orderStr to Alipay in the app (the SDK's payOrder)",
  'alipay.trade.precreate': 'scans the qr_code',
  'alipay.trade.create': 'pays in the mini-program (my.tradePay with the trade_no)',
  frontTrans: 'posts the consumption form to UnionPay and pays',
  appTrans: "pays with the tn in the app (UnionPay's startPay)",
};

/**
 * The buyer's side of a payment the service signed without calling the platform (Alipay page, wap and app pay,
 * UnionPay's front consumption): the form posted, or the orderStr taken, to the platform, as the browser or the
 * SDK does, so that the platform opens the trade. Read from the admin order view; false when there is none.
 */
async function bringBuyerRequest(keys: DevKeys, target: string, orderNo: string): Promise<boolean> {
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
    : buyer?.params.orderStr
      ? { url: `http://127.0.0.1:${keys.platformPort}/gateway.do`, body: buyer.params.orderStr }
      : undefined;
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
  channel: SimulatedChannel,
  orderNo: string,
): Promise<
  { amount: number; tradeType: string; notifyUrl: string; merchantId: string; transactionId?: string } | undefined
> {
  try {
    const answer = await json(
      `http://127.0.0.1:${keys.platformPort}/simulator/created/${encodeURIComponent(orderNo)}?channel=${channel}`,
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
async function tellPlatform(
  keys: DevKeys,
  channel: SimulatedChannel,
  payment: { orderNo: string; transactionId: string; amount: number; subMchid?: string; txnTime?: string },
): Promise<void> {
  try {
    await http(`http://127.0.0.1:${keys.platformPort}/simulator/trades`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ channel, ...payment }),
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
