import { IncomingMessage, ServerResponse } from 'node:http';
import { formatMinor, parseCommand, positiveInteger, print, UsageError } from './cli';
import { fakePlatformAccounts, loadDevKeys } from './dev-keys';
import { FakeChannel, FakePlatform, RefundBehaviour } from './fake-platform';
import { SimulatedUnionpayGateway, startUnionpayGateway } from './unionpay/unionpay-dev-keys';

export const PLATFORM_USAGE =
  "platform [--port N (default: the key set's, set by init --platform-port, 3100 unless given)] [--refunds processing|success]";

const REFUND_BEHAVIOURS = ['processing', 'success'];
const CHANNEL_IDS: Record<string, FakeChannel> = { wechatpay: 'WECHATPAY', alipay: 'ALIPAY' };
const SETTLED_STATUSES = ['SUCCESS', 'CLOSED', 'ABNORMAL'] as const;
const LOG_INTERVAL_MS = 200;

/**
 * Serves the platforms' APIs the service calls (WeChat Pay refunds, refund and trade queries, closes; the Alipay
 * gateway), verifying the service's signatures and signing every answer with the key set's platform keys, until
 * interrupted. WeChat refunds are answered PROCESSING by default, as WeChat does: `simulate refund-notice` then
 * settles them. Its own endpoints under /simulator/ let the other commands tell it about trades and ask about refunds.
 */
export async function platform(args: string[]): Promise<number> {
  const { values } = parseCommand(args, {
    port: { type: 'string' },
    refunds: { type: 'string', default: 'processing' },
  });
  if (!REFUND_BEHAVIOURS.includes(values.refunds)) {
    throw new UsageError(`--refunds must be ${REFUND_BEHAVIOURS.join(' or ')}, got "${values.refunds}"`);
  }
  const keys = loadDevKeys(values.keys);
  const port = positiveInteger(values.port, 'port') ?? keys.platformPort;
  const control = new SimulatorEndpoints();
  const fake = await FakePlatform.start({
    ...fakePlatformAccounts(keys),
    port,
    defaultRefund: values.refunds as RefundBehaviour,
    extraRoutes: (req, res, body) => control.route(req, res, body),
  });
  control.fake = fake;
  control.unionpay = await startUnionpayGateway(keys.dir, port);
  print(
    `platform listening on ${fake.url}  (WeChat Pay API ${fake.wechatpayBaseUrl}, Alipay gateway ${fake.alipayGatewayUrl})`,
  );
  if (control.unionpay) print(`UnionPay gateway on ${control.unionpay.url}`);
  print(`refunds answered ${values.refunds}; Ctrl-C to stop`);
  const logger = setInterval(() => logNewCalls(fake, control.unionpay), LOG_INTERVAL_MS);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  clearInterval(logger);
  await fake.close();
  await control.unionpay?.close();
  print('platform stopped');
  return 0;
}

interface KnownTrade {
  channel: FakeChannel;
  orderNo: string;
  transactionId: string;
  amount: number;
  /** WeChat partner key set: the sub-merchant paid. */
  subMchid?: string;
}

/** POST /simulator/trades, GET /simulator/refunds/{refundNo}, POST /simulator/refunds/{refundNo}/settle. */
class SimulatorEndpoints {
  fake!: FakePlatform;
  unionpay?: SimulatedUnionpayGateway;
  private readonly trades = new Map<string, KnownTrade>();

  route(req: IncomingMessage, res: ServerResponse, body: string): boolean {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const refund = /^\/simulator\/refunds\/([^/]+)(\/settle)?$/.exec(path);
    const created = /^\/simulator\/created\/([^/]+)$/.exec(path);
    if (req.method === 'POST' && path === '/simulator/trades') this.recordTrade(res, body);
    else if (req.method === 'GET' && created) this.describeCreated(res, decodeURIComponent(created[1]), req.url ?? '');
    else if (refund && req.method === (refund[2] ? 'POST' : 'GET')) {
      const refundNo = decodeURIComponent(refund[1]);
      if (refund[2]) this.settle(res, refundNo, body);
      else this.describeRefund(res, refundNo);
    } else return false;
    return true;
  }

  /** A payment `simulate pay` made: queries of its order answer it paid. */
  private recordTrade(res: ServerResponse, body: string): void {
    const trade = parseObject(body) as Partial<Omit<KnownTrade, 'channel'> & { channel: string }>;
    if (trade.channel === 'unionpay' && this.unionpay?.recordTrade(trade)) return send(res, 204);
    const channel = CHANNEL_IDS[trade.channel ?? ''];
    if (!channel || !trade.orderNo || !trade.transactionId || !Number.isSafeInteger(trade.amount)) {
      return send(res, 400, { message: 'expected {channel: wechatpay|alipay, orderNo, transactionId, amount}' });
    }
    const subMchid = typeof trade.subMchid === 'string' ? trade.subMchid : undefined;
    const known = {
      channel,
      orderNo: trade.orderNo,
      transactionId: trade.transactionId,
      amount: trade.amount!,
      subMchid,
    };
    this.trades.set(`${channel} ${known.transactionId}`, known);
    this.fake.payTrade({
      channel,
      outTradeNo: known.orderNo,
      amount: known.amount,
      transactionId: known.transactionId,
      subMerchantId: subMchid,
    });
    send(res, 204);
  }

  /** GET /simulator/created/{orderNo}?channel=: the trade the service created for the order (its create call), to pay. */
  private describeCreated(res: ServerResponse, orderNo: string, url: string): void {
    const channelName = new URL(url, 'http://127.0.0.1').searchParams.get('channel') ?? '';
    const consumption = channelName === 'unionpay' ? this.unionpay?.describeCreated(orderNo) : undefined;
    if (consumption) return send(res, 200, consumption);
    const channel = CHANNEL_IDS[channelName];
    const trade = channel && this.fake.trade(channel, orderNo);
    if (!trade?.created) return send(res, 404, { message: `the service created no trade for ${orderNo} here` });
    send(res, 200, {
      orderNo,
      amount: trade.amount,
      state: trade.state,
      merchantId: trade.merchantId,
      subMchid: trade.subMerchantId,
      tradeType: trade.created.tradeType,
      notifyUrl: trade.created.notifyUrl,
      // Alipay's trade_no, which a trade has from its creation (WeChat Pay's comes with the payment).
      transactionId: trade.channel === 'ALIPAY' ? trade.transactionId : undefined,
    });
  }

  /** What a refund notification needs: the refund as the service asked for it, and its trade when known. */
  private describeRefund(res: ServerResponse, refundNo: string): void {
    const unionpayRefund = this.unionpay?.describeRefund(refundNo);
    if (unionpayRefund) return send(res, 200, unionpayRefund);
    const call = this.fake.calls.filter((c) => c.refundNo === refundNo && !c.behaviour.startsWith('reject')).pop();
    if (!call) return send(res, 404, { message: `the service has asked for no refund ${refundNo} here` });
    const trade = this.trades.get(`${call.channel} ${call.transactionId}`);
    send(res, 200, {
      channel: call.channel === 'WECHATPAY' ? 'wechatpay' : 'alipay',
      refundNo,
      transactionId: call.transactionId,
      amount: call.amount,
      orderNo: trade?.orderNo,
      total: trade?.amount,
      channelRefundId: this.fake.wechatpayRefundId(refundNo),
      subMchid: call.subMerchantId,
    });
  }

  /** WeChat's queries of the refund then report the status the notification gives. */
  private settle(res: ServerResponse, refundNo: string, body: string): void {
    const { status } = parseObject(body) as { status?: unknown };
    const settled = SETTLED_STATUSES.find((s) => s === status);
    if (!settled) return send(res, 400, { message: `status must be one of ${SETTLED_STATUSES.join(', ')}` });
    if (this.fake.wechatpayRefundId(refundNo)) this.fake.settle(refundNo, settled);
    send(res, 204);
  }
}

function parseObject(body: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(body);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function send(res: ServerResponse, status: number, payload?: object): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(payload ? JSON.stringify(payload) : undefined);
}

const logged = { calls: 0, queries: 0, tradeCalls: 0, createCalls: 0, refused: 0, unionpayRefunds: 0 };

function logNewCalls(fake: FakePlatform, unionpay: SimulatedUnionpayGateway | undefined): void {
  for (const call of fake.calls.slice(logged.calls)) {
    print(
      `refund ${call.refundNo}  ${call.channel} ${call.transactionId}  ${formatMinor(call.amount)}  → ${call.behaviour}`,
    );
  }
  for (const query of fake.queries.slice(logged.queries)) {
    print(`refund query ${query.refundNo}  ${query.channel}  → ${query.answered}`);
  }
  for (const call of fake.tradeCalls.slice(logged.tradeCalls)) {
    print(
      `trade ${call.request.toLowerCase()} ${call.outTradeNo}  ${call.channel} ${call.merchantId}  → ${call.answered}`,
    );
  }
  for (const call of fake.createCalls.slice(logged.createCalls)) {
    print(
      `create ${call.tradeType} ${call.outTradeNo}  ${call.channel} ${call.merchantId}  ${formatMinor(call.amount)}  notify ${call.notifyUrl}  → ${call.answered}`,
    );
  }
  for (const refusal of fake.refusedRequests.slice(logged.refused)) print(`REFUSED ${refusal.path}: ${refusal.reason}`);
  const unionpayRefunds = unionpay?.refunds ?? [];
  for (const refund of unionpayRefunds.slice(logged.unionpayRefunds)) {
    print(
      `refund ${refund.orderId}  UNIONPAY ${refund.origQryId}  ${formatMinor(refund.txnAmt)}  → respCode ${refund.respCode}`,
    );
  }
  Object.assign(logged, {
    calls: fake.calls.length,
    queries: fake.queries.length,
    tradeCalls: fake.tradeCalls.length,
    createCalls: fake.createCalls.length,
    refused: fake.refusedRequests.length,
    unionpayRefunds: unionpayRefunds.length,
  });
}
