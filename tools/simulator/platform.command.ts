import { IncomingMessage, ServerResponse } from 'node:http';
import { formatMinor, parseCommand, positiveInteger, print, UsageError } from './cli';
import { ChannelPlatform, ToldTrade } from './channel-simulator';
import { CHANNEL_SIMULATORS, CHANNELS, fakePlatformAccounts } from './channels';
import { loadDevKeys } from './dev-keys';
import { FakePlatform, RefundBehaviour } from './fake-platform';

export const PLATFORM_USAGE =
  "platform [--port N (default: the key set's, set by init --platform-port, 3100 unless given)] [--refunds processing|success]";

const REFUND_BEHAVIOURS = ['processing', 'success'];
const SETTLED_STATUSES = ['SUCCESS', 'CLOSED', 'ABNORMAL'] as const;
const LOG_INTERVAL_MS = 200;

/**
 * Serves the platforms' APIs the service calls (WeChat Pay refunds, refund and trade queries, closes; the Alipay
 * gateway; UnionPay's gateway on the port + 1), each channel's side by its ChannelSimulator, verifying the service's
 * signatures and signing every answer with the key set's platform keys, until interrupted. WeChat refunds are
 * answered PROCESSING by default, as WeChat does: `simulate refund-notice` then settles them. Its own endpoints
 * under /simulator/ let the other commands tell it about trades and ask about refunds.
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
  for (const channel of CHANNEL_SIMULATORS) {
    const side = await channel.startPlatform({ keys, port, fake });
    if (side) control.sides.set(channel.name, side);
  }
  const sides = [...control.sides.values()];
  print(`platform listening on ${fake.url}  (${sides.map((side) => side.description).join(', ')})`);
  print(`refunds answered ${values.refunds}; Ctrl-C to stop`);
  const logger = setInterval(() => logNewCalls(fake, sides), LOG_INTERVAL_MS);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  clearInterval(logger);
  await fake.close();
  for (const side of sides) await side.close?.();
  print('platform stopped');
  return 0;
}

/** POST /simulator/trades, GET /simulator/created/{orderNo}, GET /simulator/refunds/{refundNo}, POST …/settle. */
class SimulatorEndpoints {
  /** Each channel's side of the platform, by channel name. */
  readonly sides = new Map<string, ChannelPlatform>();

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
    const trade = parseObject(body) as ToldTrade & { channel?: unknown };
    const side = typeof trade.channel === 'string' ? this.sides.get(trade.channel) : undefined;
    if (!side?.recordTrade(trade)) {
      return send(res, 400, { message: `expected {channel: ${CHANNELS.join('|')}, orderNo, transactionId, amount}` });
    }
    send(res, 204);
  }

  /** GET /simulator/created/{orderNo}?channel=: the trade the service created for the order (its create call), to pay. */
  private describeCreated(res: ServerResponse, orderNo: string, url: string): void {
    const channel = new URL(url, 'http://127.0.0.1').searchParams.get('channel') ?? '';
    const created = this.sides.get(channel)?.describeCreated(orderNo);
    if (!created) return send(res, 404, { message: `the service created no trade for ${orderNo} here` });
    send(res, 200, created);
  }

  /** What a refund notification needs: the refund as the service asked for it, and its trade when known. */
  private describeRefund(res: ServerResponse, refundNo: string): void {
    for (const side of this.sides.values()) {
      const described = side.describeRefund(refundNo);
      if (described) return send(res, 200, described);
    }
    send(res, 404, { message: `the service has asked for no refund ${refundNo} here` });
  }

  /** The channel's queries of the refund then report the status the notification gives. */
  private settle(res: ServerResponse, refundNo: string, body: string): void {
    const { status } = parseObject(body) as { status?: unknown };
    const settled = SETTLED_STATUSES.find((s) => s === status);
    if (!settled) return send(res, 400, { message: `status must be one of ${SETTLED_STATUSES.join(', ')}` });
    for (const side of this.sides.values()) side.settle?.(refundNo, settled);
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

const logged = { calls: 0, queries: 0, tradeCalls: 0, createCalls: 0, refused: 0 };

/** What the shared fake platform received since the last call, then each channel's own (a gateway of its own). */
function logNewCalls(fake: FakePlatform, sides: ChannelPlatform[]): void {
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
  for (const side of sides) side.newLogLines?.().forEach((line) => print(line));
  Object.assign(logged, {
    calls: fake.calls.length,
    queries: fake.queries.length,
    tradeCalls: fake.tradeCalls.length,
    createCalls: fake.createCalls.length,
    refused: fake.refusedRequests.length,
  });
}
