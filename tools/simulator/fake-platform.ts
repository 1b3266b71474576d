/**
 * A local fake of the channel APIs the service calls. WeChat Pay APIv3: `POST /v3/refund/domestic/refunds`,
 * `GET /v3/refund/domestic/refunds/{out_refund_no}`, `GET /v3/pay/transactions/out-trade-no/{out_trade_no}?mchid=`
 * and `POST /v3/pay/transactions/out-trade-no/{out_trade_no}/close`. The Alipay openapi gateway
 * (`POST /gateway.do`): `alipay.trade.refund`, `alipay.trade.fastpay.refund.query`, `alipay.trade.query` and
 * `alipay.trade.close`; and the trade bills: WeChat `GET /v3/bill/tradebill` with its signed file download,
 * Alipay `alipay.data.dataservice.bill.downloadurl.query` with its ZIP URL. It listens on 127.0.0.1 with plain node:http, serves several merchant accounts (WeChat
 * mchids, Alipay app ids), checks each request's RSA signature with the key of the account it names, signs every
 * answer for real with that account's platform key, counts the calls and answers as a test scripts it.
 * Money is integer fen inside; Alipay's yuan strings are converted without floating point.
 */
import { createHash, generateKeyPairSync, KeyObject, randomInt, sign, verify } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { beijingDateTime, beijingRfc3339, randomAlphanumeric, signWechatpayBody, yuan } from './platform-signers';

export type RefundBehaviour =
  | 'success' // refund accepted and done: WeChat status SUCCESS; Alipay code 10000 fund_change Y
  | 'processing' // WeChat only: status PROCESSING (Alipay: treat like success)
  | 'unconfirmed' // Alipay only: code 10000 with fund_change N, and the refund NOT done (its queries find no refund_status)
  | 'processing-lost' // WeChat only: status PROCESSING, and the refund NOT kept (its queries find RESOURCE_NOT_EXISTS)
  | 'timeout' // hold the request open without answering for `hangMs` then destroy the socket; the refund is NOT done
  | 'server-error' // WeChat: HTTP 500 SYSTEM_ERROR; Alipay: code 20000 sub_code aop.ACQ.SYSTEM_ERROR
  | { reject: string; message?: string }; // WeChat: HTTP 400 {code: reject}; Alipay: code 40004 sub_code=reject

/** How a refund query is answered; 'answer' tells what the fake knows (the default when nothing is scripted). */
export type QueryBehaviour =
  | 'answer' // WeChat: 200 with the current status, or 404 RESOURCE_NOT_EXISTS; Alipay: code 10000, with or without refund_status
  | 'timeout' // hold the request open without answering for `hangMs` then destroy the socket
  | 'server-error' // WeChat: HTTP 500 SYSTEM_ERROR; Alipay: code 20000 sub_code aop.ACQ.SYSTEM_ERROR
  | { reject: string; message?: string }; // WeChat: HTTP 400 {code: reject}; Alipay: code 40004 sub_code=reject

/** The statuses a WeChat refund query can report. */
export type WechatpayRefundStatus = 'SUCCESS' | 'PROCESSING' | 'CLOSED' | 'ABNORMAL';

/**
 * How a trade query or close is answered; 'answer' tells what the fake knows about the trade (the default).
 * 'bad-signature' is the right answer signed with a key that is not the platform's (a forgery), 'unsigned'
 * the right answer without any signature; `{ delayMs }` the right answer, late.
 */
export type TradeCallBehaviour =
  | 'answer'
  | 'timeout' // hold the request open without answering for `hangMs` then destroy the socket
  | 'server-error' // WeChat: HTTP 500 SYSTEM_ERROR; Alipay: code 20000 sub_code aop.ACQ.SYSTEM_ERROR
  | 'bad-signature'
  | 'unsigned'
  | { delayMs: number };

export type FakeChannel = 'WECHATPAY' | 'ALIPAY';

/**
 * A bill the fake serves for one account and day. WeChat: the CSV text (served gzipped when the request asks
 * tar_type=GZIP, unless `tarType` forces one), `wrongHash` answers a hash_value that is not the file's. Alipay:
 * the ZIP bytes.
 */
export type FakeBill =
  | { channel: 'WECHATPAY'; csv: string; tarType?: 'GZIP' | 'PLAIN'; wrongHash?: boolean }
  /** A bill file prepared on disk (the benchmark's million lines), served as it is with its SHA1. */
  | { channel: 'WECHATPAY'; path: string; sha1: string }
  | { channel: 'ALIPAY'; zip: Buffer };

export interface RecordedBillCall {
  channel: FakeChannel;
  merchantId: string;
  date: string;
  /** What was answered: READY, NOT_READY, or DOWNLOADED for the file itself. */
  answered: 'READY' | 'NOT_READY' | 'DOWNLOADED';
}

/** One WeChat Pay merchant account as the platform knows it. */
export interface FakeWechatpayMerchant {
  mchid: string;
  /** The serial_no the merchant must send. */
  merchantSerialNo: string;
  /** Verifies the merchant's Authorization signature. */
  merchantPublicKeyPem: string;
  /** Signs the answers to this merchant (Wechatpay-* headers). */
  platformSigner: { privateKey: KeyObject; serial: string };
}

/** One Alipay app as the gateway knows it. */
export interface FakeAlipayApp {
  appId: string;
  /** Verifies the app's RSA2 request signature. */
  appPublicKeyPem: string;
  /** Signs the answers to this app. */
  alipayPrivateKey: KeyObject;
}

export interface FakePlatformOptions {
  /** One merchant or several; a request is checked against the one its Authorization names. */
  wechatpay: FakeWechatpayMerchant | FakeWechatpayMerchant[];
  /** One app or several; a request is checked against the one its app_id names. */
  alipay: FakeAlipayApp | FakeAlipayApp[];
  /** How long a 'timeout' holds the request before destroying the socket; 5000 ms by default. */
  hangMs?: number;
  /** The loopback port to listen on; a free one by default. */
  port?: number;
  /** How refunds are answered when nothing is scripted; 'success' by default. */
  defaultRefund?: RefundBehaviour;
  /** Answers requests for paths the platform does not serve (the simulator's own endpoints); true when it did. */
  extraRoutes?: (req: IncomingMessage, res: ServerResponse, body: string) => boolean;
}

/** A trade at the channel, as a test sets it up. */
export interface FakeTrade {
  channel: FakeChannel;
  outTradeNo: string;
  /** The account that owns the trade: WeChat mchid / Alipay app_id. */
  merchantId: string;
  /** WeChat only: the appid of the payment. */
  appid?: string;
  /** transaction_id / trade_no; WeChat has none until paid. */
  transactionId?: string;
  /** Fen. */
  amount: number;
  currency: string;
  state: 'PAID' | 'UNPAID' | 'CLOSED';
  paidAt?: Date;
  /**
   * Answer queries and closes of this trade whichever of the fake's accounts asks, with the trade's own
   * mchid / appid in the answer: an answer that names an account which is not the asker's.
   */
  answersAnyAccount: boolean;
}

export interface TradeParams {
  channel: FakeChannel;
  outTradeNo: string;
  /** Fen. */
  amount: number;
  /** The owning mchid / app_id; the first configured account of the channel by default. */
  merchantId?: string;
  appid?: string;
  currency?: string;
  answersAnyAccount?: boolean;
}

export interface RecordedTradeCall {
  channel: FakeChannel;
  request: 'QUERY' | 'CLOSE';
  outTradeNo: string;
  /** The account that asked: the Authorization's mchid / the app_id. */
  merchantId: string;
  /**
   * What was answered. Query: 'SUCCESS'/'NOTPAY'/'CLOSED' (WeChat trade_state), 'TRADE_SUCCESS'/'WAIT_BUYER_PAY'/
   * 'TRADE_CLOSED' (Alipay trade_status) or 'NOT_EXIST'; close: 'CLOSED', 'PAID', 'NOT_EXIST' or 'ALREADY_CLOSED'
   * (Alipay's ACQ.TRADE_STATUS_ERROR for a closed trade); or the scripted
   * misbehaviour: 'timeout', 'server-error', 'bad-signature', 'unsigned'.
   */
  answered: string;
}

/** A trade query or close as it arrives, before it is answered. */
export type TradeCallArrival = Omit<RecordedTradeCall, 'answered'>;

export interface RecordedRefundCall {
  channel: 'WECHATPAY' | 'ALIPAY';
  /** The account whose key signed the request: WeChat mchid / Alipay app_id. */
  merchantId: string;
  /** out_refund_no / out_request_no. */
  refundNo: string;
  /** transaction_id / trade_no. */
  transactionId: string;
  /** Fen. */
  amount: number;
  /** What was answered: 'success', 'processing', 'timeout', 'server-error' or 'reject:<code>'. */
  behaviour: string;
}

export interface RecordedRefundQuery {
  channel: 'WECHATPAY' | 'ALIPAY';
  /** out_refund_no / out_request_no. */
  refundNo: string;
  /**
   * What was answered. WeChat: the status reported ('SUCCESS', 'PROCESSING', 'CLOSED', 'ABNORMAL') or
   * 'RESOURCE_NOT_EXISTS'; Alipay: 'REFUND_SUCCESS' or 'NO_REFUND' (code 10000 without refund_status);
   * either: 'timeout', 'server-error' or 'reject:<code>'.
   */
  answered: string;
}

const WECHATPAY_REFUND_PATH = '/v3/refund/domestic/refunds';
/** `/v3/pay/transactions/out-trade-no/{out_trade_no}` and `…/close`. */
const WECHATPAY_TRADE_PATH = /^\/v3\/pay\/transactions\/out-trade-no\/([^/]+)(\/close)?$/;
const ALIPAY_GATEWAY_PATH = '/gateway.do';
const ALIPAY_REFUND_METHOD = 'alipay.trade.refund';
const ALIPAY_REFUND_RESPONSE = 'alipay_trade_refund_response';
const ALIPAY_QUERY_METHOD = 'alipay.trade.fastpay.refund.query';
const ALIPAY_QUERY_RESPONSE = 'alipay_trade_fastpay_refund_query_response';
const ALIPAY_TRADE_QUERY_METHOD = 'alipay.trade.query';
const ALIPAY_TRADE_CLOSE_METHOD = 'alipay.trade.close';
const ALIPAY_BILL_METHOD = 'alipay.data.dataservice.bill.downloadurl.query';
const ALIPAY_BILL_RESPONSE = 'alipay_data_dataservice_bill_downloadurl_query_response';
/** The gateway names each method's answer `<method with _ for .>_response`. */
const ALIPAY_RESPONSE_KEYS: Record<string, string> = {
  [ALIPAY_REFUND_METHOD]: ALIPAY_REFUND_RESPONSE,
  [ALIPAY_QUERY_METHOD]: ALIPAY_QUERY_RESPONSE,
  [ALIPAY_TRADE_QUERY_METHOD]: 'alipay_trade_query_response',
  [ALIPAY_TRADE_CLOSE_METHOD]: 'alipay_trade_close_response',
  [ALIPAY_BILL_METHOD]: ALIPAY_BILL_RESPONSE,
};
const WECHATPAY_TRADEBILL_PATH = '/v3/bill/tradebill';
const WECHATPAY_BILL_DOWNLOAD_PATH = '/v3/billdownload/file';
const ALIPAY_BILL_FILE_PATH = '/alipay-bills/';
const WECHATPAY_CLOCK_SKEW_S = 5 * 60;
const ALIPAY_CLOCK_SKEW_MS = 15 * 60 * 1000;

/** How an answer is tampered with: a forged signature, none at all, or neither. */
type Tampering = 'bad-signature' | 'unsigned' | undefined;

export class FakePlatform {
  /** Refund requests only; queries are in `queries`. */
  readonly calls: RecordedRefundCall[] = [];
  /** Refund queries that passed the signature checks, in order. */
  readonly queries: RecordedRefundQuery[] = [];
  /** Trade queries and closes that passed the signature checks, in the order they were answered. */
  readonly tradeCalls: RecordedTradeCall[] = [];
  readonly refusedRequests: Array<{ path: string; reason: string }> = [];
  /** Bill requests and downloads that passed the signature checks, in order. */
  readonly billCalls: RecordedBillCall[] = [];
  private readonly bills = new Map<string, FakeBill>();
  private readonly billFiles = new Map<
    string,
    { bytes?: Buffer; path?: string; call: Omit<RecordedBillCall, 'answered'> }
  >();
  private readonly wechatpayMerchants: FakeWechatpayMerchant[];
  private readonly alipayApps: FakeAlipayApp[];
  /** Signs the forged answers: a real RSA key that no account knows. */
  private readonly forger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  private readonly scripts = new Map<string, RefundBehaviour[]>();
  private readonly queryScripts = new Map<string, QueryBehaviour[]>();
  private readonly tradeScripts = new Map<string, TradeCallBehaviour[]>();
  private readonly trades = new Map<string, FakeTrade>();
  private readonly tradeCallWaiters: Array<{ key: string; resolve: (call: TradeCallArrival) => void }> = [];
  private readonly wechatpayRefunds = new Map<string, WechatpayRefund>();
  private readonly alipayRefunds = new Map<string, AlipayRefund>();
  private readonly alipayBuyers = new Map<string, string>();
  private readonly hanging = new Set<NodeJS.Timeout>();

  private constructor(
    private readonly options: FakePlatformOptions,
    private readonly server: Server,
    readonly url: string,
  ) {
    this.wechatpayMerchants = [options.wechatpay].flat();
    this.alipayApps = [options.alipay].flat();
  }

  static async start(options: FakePlatformOptions): Promise<FakePlatform> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', resolve);
    });
    const fake = new FakePlatform(options, server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => fake.handle(req, res));
    return fake;
  }

  get wechatpayBaseUrl(): string {
    return this.url;
  }

  get alipayGatewayUrl(): string {
    return `${this.url}${ALIPAY_GATEWAY_PATH}`;
  }

  /** The service's variables that point both channels' APIs at this fake. */
  get apiEnv(): { WECHATPAY_API_BASE_URL: string; ALIPAY_GATEWAY_URL: string } {
    return { WECHATPAY_API_BASE_URL: this.wechatpayBaseUrl, ALIPAY_GATEWAY_URL: this.alipayGatewayUrl };
  }

  /** Serves `bill` as the account's bill of `date` (YYYY-MM-DD); until then the channel says there is none yet. */
  serveBill(merchantId: string, date: string, bill: FakeBill): void {
    this.bills.set(`${bill.channel} ${merchantId} ${date}`, bill);
  }

  billCallsFor(channel: FakeChannel, date: string, answered?: RecordedBillCall['answered']): number {
    return this.billCalls.filter(
      (c) => c.channel === channel && c.date === date && (!answered || c.answered === answered),
    ).length;
  }

  callsFor(refundNo: string): number {
    return this.calls.filter((call) => call.refundNo === refundNo).length;
  }

  /** Behaviours for the next calls of refundNo (or '*' for any refund), consumed in order; afterwards 'success'. */
  script(refundNo: string | '*', ...behaviours: RefundBehaviour[]): void {
    this.scripts.set(refundNo, [...(this.scripts.get(refundNo) ?? []), ...behaviours]);
  }

  queriesFor(refundNo: string): number {
    return this.queries.filter((query) => query.refundNo === refundNo).length;
  }

  /**
   * Behaviours for the next queries of refundNo (or '*' for any refund), consumed in order; afterwards 'answer'.
   * A queue of its own: `script` never affects queries, nor `scriptQuery` refund calls.
   */
  scriptQuery(refundNo: string | '*', ...behaviours: QueryBehaviour[]): void {
    this.queryScripts.set(refundNo, [...(this.queryScripts.get(refundNo) ?? []), ...behaviours]);
  }

  /**
   * Sets the status WeChat queries report for refundNo from now on, as if WeChat finished processing it.
   * The refund must have been created (answered SUCCESS or PROCESSING); a later refund POST sets it again.
   */
  settle(refundNo: string, status: 'SUCCESS' | 'CLOSED' | 'ABNORMAL'): void {
    const refund = this.wechatpayRefunds.get(refundNo);
    if (!refund) throw new Error(`FakePlatform.settle: no WeChat Pay refund ${refundNo} was created`);
    refund.status = status;
    if (status === 'SUCCESS') refund.successTime ??= beijingRfc3339(new Date());
  }

  /** The refund_id WeChat Pay gave refundNo, once created. */
  wechatpayRefundId(refundNo: string): string | undefined {
    return this.wechatpayRefunds.get(refundNo)?.refundId;
  }

  // ------------------------------------------------------------------------------------------------ trades

  /** The trade is paid at the channel by `transactionId` (a notification the service may never receive). */
  payTrade(params: TradeParams & { transactionId: string; paidAt?: Date }): FakeTrade {
    return this.putTrade(params, { state: 'PAID', transactionId: params.transactionId, paidAt: params.paidAt });
  }

  /**
   * The trade exists at the channel and is not paid: WeChat NOTPAY, Alipay WAIT_BUYER_PAY (an Alipay trade has its
   * trade_no from the moment the buyer opens the cashier).
   */
  openTrade(params: TradeParams): FakeTrade {
    const transactionId = params.channel === 'ALIPAY' ? `2026${randomDigits(24)}` : undefined;
    return this.putTrade(params, { state: 'UNPAID', transactionId });
  }

  /** The channel closed the unpaid trade itself, as both do when a trade expires unpaid. */
  closeTrade(channel: FakeChannel, outTradeNo: string): void {
    const trade = this.trade(channel, outTradeNo);
    if (trade?.state !== 'UNPAID') throw new Error(`FakePlatform.closeTrade: ${outTradeNo} is not an open trade`);
    trade.state = 'CLOSED';
  }

  trade(channel: FakeChannel, outTradeNo: string): FakeTrade | undefined {
    return this.trades.get(tradeKey(channel, outTradeNo));
  }

  /** Behaviours for the next queries of a trade (or '*' for any), consumed in order; afterwards 'answer'. */
  scriptTradeQuery(outTradeNo: string | '*', ...behaviours: TradeCallBehaviour[]): void {
    this.appendTradeScript(`QUERY ${outTradeNo}`, behaviours);
  }

  /** Behaviours for the next closes of a trade (or '*' for any), consumed in order; afterwards 'answer'. */
  scriptTradeClose(outTradeNo: string | '*', ...behaviours: TradeCallBehaviour[]): void {
    this.appendTradeScript(`CLOSE ${outTradeNo}`, behaviours);
  }

  tradeQueriesFor(outTradeNo: string, channel?: FakeChannel): number {
    return this.tradeCallsFor(outTradeNo, 'QUERY', channel).length;
  }

  tradeClosesFor(outTradeNo: string, channel?: FakeChannel): number {
    return this.tradeCallsFor(outTradeNo, 'CLOSE', channel).length;
  }

  tradeCallsFor(outTradeNo: string, request?: 'QUERY' | 'CLOSE', channel?: FakeChannel): RecordedTradeCall[] {
    return this.tradeCalls.filter(
      (call) =>
        call.outTradeNo === outTradeNo &&
        (request === undefined || call.request === request) &&
        (channel === undefined || call.channel === channel),
    );
  }

  /** Resolves when the next query or close of outTradeNo has arrived, before it is answered. */
  nextTradeCall(outTradeNo: string, request: 'QUERY' | 'CLOSE'): Promise<TradeCallArrival> {
    return new Promise((resolve) => this.tradeCallWaiters.push({ key: `${request} ${outTradeNo}`, resolve }));
  }

  /** Stops listening; hanging requests and idle keep-alive connections are destroyed. */
  async close(): Promise<void> {
    for (const timer of this.hanging) clearTimeout(timer);
    this.hanging.clear();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private putTrade(params: TradeParams, state: Pick<FakeTrade, 'state' | 'transactionId' | 'paidAt'>): FakeTrade {
    const defaultAccount = params.channel === 'WECHATPAY' ? this.wechatpayMerchants[0].mchid : this.alipayApps[0].appId;
    const trade: FakeTrade = {
      channel: params.channel,
      outTradeNo: params.outTradeNo,
      merchantId: params.merchantId ?? defaultAccount,
      appid: params.appid,
      amount: params.amount,
      currency: params.currency ?? 'CNY',
      answersAnyAccount: params.answersAnyAccount ?? false,
      ...state,
      paidAt: state.state === 'PAID' ? (state.paidAt ?? new Date()) : undefined,
    };
    this.trades.set(tradeKey(params.channel, params.outTradeNo), trade);
    return trade;
  }

  private appendTradeScript(key: string, behaviours: TradeCallBehaviour[]): void {
    this.tradeScripts.set(key, [...(this.tradeScripts.get(key) ?? []), ...behaviours]);
  }

  private nextTradeBehaviour(request: 'QUERY' | 'CLOSE', outTradeNo: string): TradeCallBehaviour {
    return (
      this.tradeScripts.get(`${request} ${outTradeNo}`)?.shift() ??
      this.tradeScripts.get(`${request} *`)?.shift() ??
      'answer'
    );
  }

  /** The trade as the asking account sees it: another account's trade does not exist for it. */
  private visibleTrade(channel: FakeChannel, outTradeNo: string, merchantId: string): FakeTrade | undefined {
    const trade = this.trade(channel, outTradeNo);
    return trade && (trade.merchantId === merchantId || trade.answersAnyAccount) ? trade : undefined;
  }

  /**
   * Tells the waiters that the call arrived, then answers it by `behaviour`. The trade is looked up when the answer
   * is given, so a trade paid during a `{ delayMs }` is answered paid; the call is recorded with what was answered.
   */
  private answerTradeCall(
    res: ServerResponse,
    call: TradeCallArrival,
    behaviour: TradeCallBehaviour,
    answer: (trade: FakeTrade | undefined, tampering: Tampering, serverError: boolean) => void,
  ): void {
    const key = `${call.request} ${call.outTradeNo}`;
    for (const waiter of this.tradeCallWaiters.filter((w) => w.key === key)) waiter.resolve(call);
    this.tradeCallWaiters.splice(
      0,
      this.tradeCallWaiters.length,
      ...this.tradeCallWaiters.filter((w) => w.key !== key),
    );
    if (behaviour === 'timeout') {
      this.tradeCalls.push({ ...call, answered: 'timeout' });
      return this.hang(res);
    }
    const answerNow = () => {
      const trade = this.visibleTrade(call.channel, call.outTradeNo, call.merchantId);
      this.tradeCalls.push({ ...call, answered: describeTradeAnswer(call.request, call.channel, trade, behaviour) });
      const tampering = behaviour === 'bad-signature' || behaviour === 'unsigned' ? behaviour : undefined;
      answer(trade, tampering, behaviour === 'server-error');
    };
    if (typeof behaviour === 'string') return answerNow();
    const timer = setTimeout(answerNow, behaviour.delayMs);
    this.hanging.add(timer);
    res.on('close', () => this.hanging.delete(timer));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    readBody(req)
      .then((body) => this.route(req, res, body))
      .catch((error: Error) => {
        this.refusedRequests.push({ path: req.url ?? '', reason: `the fake failed: ${error.stack ?? error.message}` });
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(error.stack));
      });
  }

  private route(req: IncomingMessage, res: ServerResponse, body: string): void {
    const path = new URL(req.url ?? '/', this.url).pathname;
    if (req.method === 'POST' && path === WECHATPAY_REFUND_PATH) return this.wechatpayRefund(req, res, body);
    if (req.method === 'GET' && WECHATPAY_QUERY_PATH.test(path)) return this.wechatpayQuery(req, res, body, path);
    const trade = WECHATPAY_TRADE_PATH.exec(path);
    if (trade && req.method === (trade[2] ? 'POST' : 'GET')) {
      return this.wechatpayTrade(req, res, body, path, trade[2] ? 'CLOSE' : 'QUERY');
    }
    if (req.method === 'POST' && path === ALIPAY_GATEWAY_PATH) return this.alipayGateway(req, res, body);
    if (req.method === 'GET' && path === WECHATPAY_TRADEBILL_PATH) return this.wechatpayTradeBill(req, res, body);
    if (req.method === 'GET' && path === WECHATPAY_BILL_DOWNLOAD_PATH) return this.wechatpayBillFile(req, res, body);
    if (req.method === 'GET' && path.startsWith(ALIPAY_BILL_FILE_PATH)) return this.alipayBillFile(res, path);
    if (this.options.extraRoutes?.(req, res, body)) return;
    this.refusedRequests.push({ path, reason: `no such endpoint: ${req.method} ${path}` });
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"code":"NOT_FOUND","message":"no such endpoint"}');
  }

  private nextBehaviour(refundNo: string): RefundBehaviour {
    return (
      this.scripts.get(refundNo)?.shift() ?? this.scripts.get('*')?.shift() ?? this.options.defaultRefund ?? 'success'
    );
  }

  private nextQueryBehaviour(refundNo: string): QueryBehaviour {
    return this.queryScripts.get(refundNo)?.shift() ?? this.queryScripts.get('*')?.shift() ?? 'answer';
  }

  private recordQuery(query: Omit<RecordedRefundQuery, 'answered'>, answered: string | { reject: string }): void {
    this.queries.push({ ...query, answered: typeof answered === 'string' ? answered : `reject:${answered.reject}` });
  }

  private record(call: Omit<RecordedRefundCall, 'behaviour'>, behaviour: RefundBehaviour): void {
    this.calls.push({ ...call, behaviour: typeof behaviour === 'string' ? behaviour : `reject:${behaviour.reject}` });
  }

  /** Answers nothing; after hangMs the socket is destroyed, as a client sees a platform that never answers. */
  private hang(res: ServerResponse): void {
    const timer = setTimeout(() => res.destroy(), this.options.hangMs ?? 5000);
    this.hanging.add(timer);
    res.on('close', () => {
      clearTimeout(timer);
      this.hanging.delete(timer);
    });
  }

  // -------------------------------------------------------------------------------------------- WeChat Pay

  private wechatpayRefund(req: IncomingMessage, res: ServerResponse, body: string): void {
    let request: WechatpayRefundRequest;
    let merchant: FakeWechatpayMerchant;
    try {
      merchant = this.verifyWechatpayAuthorization(req, body);
      request = parseWechatpayRefund(req, body);
    } catch (error) {
      return this.refuseWechatpay(res, WECHATPAY_REFUND_PATH, error);
    }
    const behaviour = this.nextBehaviour(request.outRefundNo);
    this.record(
      {
        channel: 'WECHATPAY',
        merchantId: merchant.mchid,
        refundNo: request.outRefundNo,
        transactionId: request.transactionId,
        amount: request.refund,
      },
      behaviour,
    );
    this.answerWechatpay(res, merchant, request, behaviour);
  }

  private wechatpayQuery(req: IncomingMessage, res: ServerResponse, body: string, path: string): void {
    let outRefundNo: string;
    let merchant: FakeWechatpayMerchant;
    try {
      merchant = this.verifyWechatpayAuthorization(req, body);
      outRefundNo = parseWechatpayQueryPath(path);
    } catch (error) {
      return this.refuseWechatpay(res, path, error);
    }
    const behaviour = this.nextQueryBehaviour(outRefundNo);
    const refund = this.wechatpayRefunds.get(outRefundNo);
    const answered = behaviour !== 'answer' ? behaviour : (refund?.status ?? 'RESOURCE_NOT_EXISTS');
    this.recordQuery({ channel: 'WECHATPAY', refundNo: outRefundNo }, answered);
    if (behaviour === 'timeout') return this.hang(res);
    if (behaviour === 'server-error') {
      return this.sendWechatpay(res, merchant, 500, { code: 'SYSTEM_ERROR', message: '系统错误' });
    }
    if (typeof behaviour === 'object') {
      return this.sendWechatpay(res, merchant, 400, {
        code: behaviour.reject,
        message: behaviour.message ?? behaviour.reject,
      });
    }
    if (!refund) {
      return this.sendWechatpay(res, merchant, 404, { code: 'RESOURCE_NOT_EXISTS', message: '退款单不存在' });
    }
    this.sendWechatpay(res, merchant, 200, wechatpayRefundAnswer(refund));
  }

  /** GET …/out-trade-no/{no}?mchid= (query) and POST …/out-trade-no/{no}/close {"mchid"} (close). */
  private wechatpayTrade(
    req: IncomingMessage,
    res: ServerResponse,
    body: string,
    path: string,
    request: 'QUERY' | 'CLOSE',
  ): void {
    let outTradeNo: string;
    let merchant: FakeWechatpayMerchant;
    try {
      merchant = this.verifyWechatpayAuthorization(req, body);
      outTradeNo = parseOutTradeNo(WECHATPAY_TRADE_PATH.exec(path)![1]);
      const named = request === 'QUERY' ? new URL(req.url ?? '/', this.url).searchParams.get('mchid') : undefined;
      const mchid = request === 'CLOSE' ? parseWechatpayClose(req, body) : named;
      if (mchid !== merchant.mchid) {
        throw new Refusal('PARAM_ERROR', `mchid "${mchid}" is not the signing merchant's ${merchant.mchid}`);
      }
    } catch (error) {
      return this.refuseWechatpay(res, path, error);
    }
    const call = { channel: 'WECHATPAY' as const, request, outTradeNo, merchantId: merchant.mchid };
    this.answerTradeCall(res, call, this.nextTradeBehaviour(request, outTradeNo), (trade, tampering, serverError) => {
      if (serverError) {
        return this.sendWechatpay(res, merchant, 500, { code: 'SYSTEM_ERROR', message: '系统错误' });
      }
      const [status, payload] = request === 'QUERY' ? wechatpayTradeQueryAnswer(trade) : closeWechatpayTrade(trade);
      this.sendWechatpay(res, merchant, status, payload, tampering);
    });
  }

  /** GET /v3/bill/tradebill?bill_date=&bill_type=ALL[&tar_type=GZIP]: where to download, and the file's SHA1. */
  private wechatpayTradeBill(req: IncomingMessage, res: ServerResponse, body: string): void {
    let merchant: FakeWechatpayMerchant;
    const query = new URL(req.url ?? '/', this.url).searchParams;
    const date = query.get('bill_date') ?? '';
    try {
      merchant = this.verifyWechatpayAuthorization(req, body);
      if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) throw new Refusal('PARAM_ERROR', `bill_date "${date}" is not YYYY-MM-DD`);
      if (query.get('bill_type') !== 'ALL') throw new Refusal('PARAM_ERROR', 'the fake serves bill_type=ALL only');
    } catch (error) {
      return this.refuseWechatpay(res, WECHATPAY_TRADEBILL_PATH, error);
    }
    const call = { channel: 'WECHATPAY' as const, merchantId: merchant.mchid, date };
    const bill = this.bills.get(`WECHATPAY ${merchant.mchid} ${date}`);
    if (bill?.channel !== 'WECHATPAY') {
      this.billCalls.push({ ...call, answered: 'NOT_READY' });
      return this.sendWechatpay(res, merchant, 400, { code: 'NO_STATEMENT_EXIST', message: '账单文件不存在' });
    }
    this.billCalls.push({ ...call, answered: 'READY' });
    const token = randomAlphanumeric(24);
    if ('path' in bill) {
      this.billFiles.set(token, { path: bill.path, call });
      return this.sendWechatpay(res, merchant, 200, {
        hash_type: 'SHA1',
        hash_value: bill.sha1,
        download_url: `${this.url}${WECHATPAY_BILL_DOWNLOAD_PATH}?token=${token}`,
      });
    }
    const plain = Buffer.from(bill.csv, 'utf8');
    const gzip = (bill.tarType ?? (query.get('tar_type') === 'GZIP' ? 'GZIP' : 'PLAIN')) === 'GZIP';
    this.billFiles.set(token, { bytes: gzip ? gzipSync(plain) : plain, call });
    const hash = createHash('sha1').update(bill.wrongHash ? Buffer.concat([plain, Buffer.from(' ')]) : plain);
    this.sendWechatpay(res, merchant, 200, {
      hash_type: 'SHA1',
      hash_value: hash.digest('hex'),
      download_url: `${this.url}${WECHATPAY_BILL_DOWNLOAD_PATH}?token=${token}`,
    });
  }

  /** The file itself: the request is signed like any other, the answer is not (its integrity is the hash). */
  private wechatpayBillFile(req: IncomingMessage, res: ServerResponse, body: string): void {
    let merchant: FakeWechatpayMerchant;
    try {
      merchant = this.verifyWechatpayAuthorization(req, body);
    } catch (error) {
      return this.refuseWechatpay(res, WECHATPAY_BILL_DOWNLOAD_PATH, error);
    }
    const file = this.billFiles.get(new URL(req.url ?? '/', this.url).searchParams.get('token') ?? '');
    if (!file || file.call.merchantId !== merchant.mchid) {
      return this.sendWechatpay(res, merchant, 400, { code: 'PARAM_ERROR', message: 'no such bill token' });
    }
    this.billCalls.push({ ...file.call, answered: 'DOWNLOADED' });
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    if (file.path) return void createReadStream(file.path).pipe(res);
    res.end(file.bytes);
  }

  /** The merchant named by the Authorization header, whose key must have signed the request. */
  private verifyWechatpayAuthorization(req: IncomingMessage, body: string): FakeWechatpayMerchant {
    const auth = parseWechatpayAuthorization(req.headers.authorization);
    const merchant = this.wechatpayMerchants.find((m) => m.mchid === auth.mchid);
    if (!merchant) {
      const known = this.wechatpayMerchants.map((m) => m.mchid).join(', ');
      throw new Refusal('SIGN_ERROR', `mchid "${auth.mchid}" is not ${known}`);
    }
    if (auth.serial_no !== merchant.merchantSerialNo) {
      throw new Refusal('SIGN_ERROR', `serial_no "${auth.serial_no}" is not ${merchant.merchantSerialNo}`);
    }
    const { timestamp = '', nonce_str: nonce = '', signature = '' } = auth;
    if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > WECHATPAY_CLOCK_SKEW_S) {
      throw new Refusal('SIGN_ERROR', `timestamp "${timestamp}" is missing or more than 5 minutes off`);
    }
    const message = `${req.method}\n${req.url}\n${timestamp}\n${nonce}\n${body}\n`;
    if (!nonce || !verify('sha256', Buffer.from(message, 'utf8'), merchant.merchantPublicKeyPem, base64(signature))) {
      throw new Refusal('SIGN_ERROR', 'the Authorization signature does not verify');
    }
    return merchant;
  }

  /** A request turned away before any logic: signed with the first merchant's platform key, as no account is known. */
  private refuseWechatpay(res: ServerResponse, path: string, error: unknown): void {
    if (!(error instanceof Refusal)) throw error;
    this.refusedRequests.push({ path, reason: error.message });
    const status = error.code === 'SIGN_ERROR' ? 401 : 400;
    this.sendWechatpay(res, this.wechatpayMerchants[0], status, { code: error.code, message: error.message });
  }

  private answerWechatpay(
    res: ServerResponse,
    merchant: FakeWechatpayMerchant,
    request: WechatpayRefundRequest,
    behaviour: RefundBehaviour,
  ): void {
    if (behaviour === 'timeout') return this.hang(res);
    if (behaviour === 'server-error') {
      return this.sendWechatpay(res, merchant, 500, { code: 'SYSTEM_ERROR', message: '系统错误' });
    }
    if (typeof behaviour === 'object') {
      return this.sendWechatpay(res, merchant, 400, {
        code: behaviour.reject,
        message: behaviour.message ?? behaviour.reject,
      });
    }
    if (behaviour === 'processing-lost') {
      const lost = { ...request, refundId: `5000${randomDigits(25)}`, createTime: beijingRfc3339(new Date()) };
      return this.sendWechatpay(res, merchant, 200, wechatpayRefundAnswer({ ...lost, status: 'PROCESSING' }));
    }
    const refund = this.settleWechatpayRefund(request, behaviour === 'success' ? 'SUCCESS' : 'PROCESSING');
    this.sendWechatpay(res, merchant, 200, wechatpayRefundAnswer(refund));
  }

  /** Like the real API, one refund_id per out_refund_no, however often it is asked for. */
  private settleWechatpayRefund(request: WechatpayRefundRequest, status: WechatpayRefund['status']): WechatpayRefund {
    const refund = this.wechatpayRefunds.get(request.outRefundNo) ?? {
      ...request,
      refundId: `5000${randomDigits(25)}`,
      createTime: beijingRfc3339(new Date()),
      status,
    };
    refund.status = status;
    if (status === 'SUCCESS') refund.successTime ??= beijingRfc3339(new Date());
    this.wechatpayRefunds.set(request.outRefundNo, refund);
    return refund;
  }

  /** Signed with the merchant's platform key (or forged, or unsigned); no payload is a 204-style empty body. */
  private sendWechatpay(
    res: ServerResponse,
    merchant: FakeWechatpayMerchant,
    status: number,
    payload: object | undefined,
    tampering?: Tampering,
  ): void {
    const body = payload === undefined ? '' : JSON.stringify(payload);
    const signer =
      tampering === 'bad-signature'
        ? { privateKey: this.forger, serial: merchant.platformSigner.serial }
        : merchant.platformSigner;
    const signed = signWechatpayBody(signer, body);
    const headers =
      tampering === 'unsigned'
        ? { 'content-type': 'application/json', 'request-id': randomAlphanumeric(32) }
        : { ...signed, 'request-id': randomAlphanumeric(32) };
    res.writeHead(status, headers).end(body);
  }

  // ------------------------------------------------------------------------------------------------ Alipay

  private alipayGateway(req: IncomingMessage, res: ServerResponse, body: string): void {
    const params = alipayParams(req, body);
    let request: AlipayRequest;
    let app: FakeAlipayApp;
    try {
      app = this.verifyAlipayRequest(params);
      request = parseAlipayRequest(params.method, params.biz_content);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      this.refusedRequests.push({ path: ALIPAY_GATEWAY_PATH, reason: `${error.code}: ${error.message}` });
      // Only a known method has a named response; the gateway answers anything else as error_response.
      const key = ALIPAY_RESPONSE_KEYS[params.method] ?? 'error_response';
      const signingApp = this.alipayApps.find((a) => a.appId === params.app_id) ?? this.alipayApps[0];
      return this.sendAlipay(
        res,
        signingApp,
        key,
        alipayError('40002', 'Invalid Arguments', error.code, error.message),
      );
    }
    if (request.kind === 'query') return this.alipayQuery(res, app, request);
    if (request.kind === 'trade') return this.alipayTrade(res, app, request, params.method);
    if (request.kind === 'bill') return this.alipayBill(res, app, request);
    const scripted = this.nextBehaviour(request.outRequestNo);
    const behaviour = scripted === 'processing' ? 'success' : scripted; // the gateway has no "processing"
    this.record(
      {
        channel: 'ALIPAY',
        merchantId: app.appId,
        refundNo: request.outRequestNo,
        transactionId: request.tradeNo,
        amount: request.amount,
      },
      behaviour,
    );
    if (behaviour === 'unconfirmed') {
      return this.sendAlipay(res, app, ALIPAY_REFUND_RESPONSE, alipayUnconfirmedAnswer(request));
    }
    this.answerAlipay(res, app, request, behaviour);
  }

  private alipayQuery(res: ServerResponse, app: FakeAlipayApp, request: AlipayQueryRequest): void {
    const behaviour = this.nextQueryBehaviour(request.outRequestNo);
    const refund = this.alipayRefunds.get(`${request.tradeNo}\n${request.outRequestNo}`);
    const answered = behaviour !== 'answer' ? behaviour : refund ? 'REFUND_SUCCESS' : 'NO_REFUND';
    this.recordQuery({ channel: 'ALIPAY', refundNo: request.outRequestNo }, answered);
    if (behaviour === 'timeout') return this.hang(res);
    const answer =
      behaviour === 'server-error'
        ? alipayError('20000', 'Service Currently Unavailable', 'aop.ACQ.SYSTEM_ERROR', '系统错误')
        : typeof behaviour === 'object'
          ? alipayError('40004', 'Business Failed', behaviour.reject, behaviour.message ?? behaviour.reject)
          : alipayQueryAnswer(request, refund);
    this.sendAlipay(res, app, ALIPAY_QUERY_RESPONSE, answer);
  }

  /** alipay.data.dataservice.bill.downloadurl.query: a short-lived URL of the day's ZIP, or isp.bill_not_exist. */
  private alipayBill(res: ServerResponse, app: FakeAlipayApp, request: AlipayBillRequest): void {
    const call = { channel: 'ALIPAY' as const, merchantId: app.appId, date: request.billDate };
    const bill = this.bills.get(`ALIPAY ${app.appId} ${request.billDate}`);
    if (bill?.channel !== 'ALIPAY') {
      this.billCalls.push({ ...call, answered: 'NOT_READY' });
      return this.sendAlipay(
        res,
        app,
        ALIPAY_BILL_RESPONSE,
        alipayError('40004', 'Business Failed', 'isp.bill_not_exist', '账单不存在'),
      );
    }
    this.billCalls.push({ ...call, answered: 'READY' });
    const token = randomAlphanumeric(24);
    this.billFiles.set(token, { bytes: bill.zip, call });
    this.sendAlipay(res, app, ALIPAY_BILL_RESPONSE, {
      code: '10000',
      msg: 'Success',
      bill_download_url: `${this.url}${ALIPAY_BILL_FILE_PATH}${token}.zip`,
    });
  }

  /** The ZIP behind the URL: no signature, the token in the URL is the credential. */
  private alipayBillFile(res: ServerResponse, path: string): void {
    const file = this.billFiles.get(path.slice(ALIPAY_BILL_FILE_PATH.length).replace(/\.zip$/, ''));
    if (!file || file.call.channel !== 'ALIPAY') return void res.writeHead(404).end('no such bill');
    this.billCalls.push({ ...file.call, answered: 'DOWNLOADED' });
    res.writeHead(200, { 'content-type': 'application/zip' }).end(file.bytes);
  }

  /** alipay.trade.query and alipay.trade.close, by out_trade_no. */
  private alipayTrade(res: ServerResponse, app: FakeAlipayApp, request: AlipayTradeRequest, method: string): void {
    const kind: 'QUERY' | 'CLOSE' = method === ALIPAY_TRADE_QUERY_METHOD ? 'QUERY' : 'CLOSE';
    const call = { channel: 'ALIPAY' as const, request: kind, outTradeNo: request.outTradeNo, merchantId: app.appId };
    const behaviour = this.nextTradeBehaviour(kind, request.outTradeNo);
    this.answerTradeCall(res, call, behaviour, (trade, tampering, serverError) => {
      const answer = serverError
        ? alipayError('20000', 'Service Currently Unavailable', 'aop.ACQ.SYSTEM_ERROR', '系统错误')
        : kind === 'QUERY'
          ? this.alipayTradeQueryAnswer(trade)
          : closeAlipayTrade(trade);
      this.sendAlipay(res, app, ALIPAY_RESPONSE_KEYS[method], answer, tampering);
    });
  }

  private alipayTradeQueryAnswer(trade: FakeTrade | undefined): object {
    if (!trade) return alipayError('40004', 'Business Failed', 'ACQ.TRADE_NOT_EXIST', '交易不存在');
    return {
      code: '10000',
      msg: 'Success',
      trade_no: trade.transactionId,
      out_trade_no: trade.outTradeNo,
      buyer_logon_id: '159****5620',
      trade_status: ALIPAY_TRADE_STATUS[trade.state],
      total_amount: yuan(trade.amount),
      ...(trade.state === 'PAID'
        ? {
            buyer_pay_amount: yuan(trade.amount),
            receipt_amount: yuan(trade.amount),
            send_pay_date: beijingDateTime(trade.paidAt!),
            buyer_user_id: this.alipayBuyer(trade.transactionId!),
          }
        : { buyer_pay_amount: '0.00' }),
    };
  }

  /** The app named by app_id, whose key must have signed the request. */
  private verifyAlipayRequest(params: Record<string, string>): FakeAlipayApp {
    const app = this.alipayApps.find((a) => a.appId === params.app_id);
    if (!app) {
      const known = this.alipayApps.map((a) => a.appId).join(', ');
      throw new Refusal('isv.invalid-app-id', `app_id "${params.app_id}" is not ${known}`);
    }
    if (!(params.method in ALIPAY_RESPONSE_KEYS)) {
      throw new Refusal(
        'isv.invalid-method',
        `method "${params.method}" is not one of ${Object.keys(ALIPAY_RESPONSE_KEYS)}`,
      );
    }
    for (const [name, expected, subCode, optional] of ALIPAY_FIXED_PARAMS) {
      if (params[name] === expected || (optional && params[name] === undefined)) continue;
      throw new Refusal(subCode, `${name} "${params[name]}" is not ${expected}`);
    }
    if (!verify('sha256', Buffer.from(alipaySignedContent(params), 'utf8'), app.appPublicKeyPem, base64(params.sign))) {
      throw new Refusal('isv.invalid-signature', 'the request signature does not verify');
    }
    const sentAt = parseBeijingDateTime(params.timestamp);
    if (sentAt === undefined || Math.abs(Date.now() - sentAt) > ALIPAY_CLOCK_SKEW_MS) {
      throw new Refusal('isv.invalid-timestamp', `timestamp "${params.timestamp}" is malformed or 15 minutes off`);
    }
    return app;
  }

  private answerAlipay(
    res: ServerResponse,
    app: FakeAlipayApp,
    request: AlipayRefundRequest,
    behaviour: RefundBehaviour,
  ): void {
    if (behaviour === 'timeout') return this.hang(res);
    const answer =
      behaviour === 'server-error'
        ? alipayError('20000', 'Service Currently Unavailable', 'aop.ACQ.SYSTEM_ERROR', '系统错误')
        : typeof behaviour === 'object'
          ? alipayError('40004', 'Business Failed', behaviour.reject, behaviour.message ?? behaviour.reject)
          : this.settleAlipayRefund(request);
    this.sendAlipay(res, app, ALIPAY_REFUND_RESPONSE, answer);
  }

  /** Like the real gateway, funds move once per out_request_no: fund_change is 'N' when it is asked again. */
  private settleAlipayRefund(request: AlipayRefundRequest): object {
    const key = `${request.tradeNo}\n${request.outRequestNo}`;
    const known = this.alipayRefunds.get(key);
    const refund = known ?? { tradeNo: request.tradeNo, amount: request.amount, refundedAt: new Date() };
    this.alipayRefunds.set(key, refund);
    let refunded = 0;
    for (const each of this.alipayRefunds.values()) if (each.tradeNo === request.tradeNo) refunded += each.amount;
    return {
      code: '10000',
      msg: 'Success',
      trade_no: request.tradeNo,
      out_trade_no: '',
      buyer_logon_id: '159****5620',
      fund_change: known ? 'N' : 'Y',
      refund_fee: yuan(refunded),
      gmt_refund_pay: beijingDateTime(refund.refundedAt),
      buyer_user_id: this.alipayBuyer(request.tradeNo),
    };
  }

  private alipayBuyer(tradeNo: string): string {
    const buyer = this.alipayBuyers.get(tradeNo) ?? `2088${randomDigits(12)}`;
    this.alipayBuyers.set(tradeNo, buyer);
    return buyer;
  }

  /** The body is `{"<key>":<json>,"sign":"…"}`, signed over the exact text of <json> with the app's Alipay key. */
  private sendAlipay(
    res: ServerResponse,
    app: FakeAlipayApp,
    key: string,
    payload: object,
    tampering?: Tampering,
  ): void {
    const json = JSON.stringify(payload);
    const signingKey = tampering === 'bad-signature' ? this.forger : app.alipayPrivateKey;
    const signature = sign('sha256', Buffer.from(json, 'utf8'), signingKey);
    const body =
      tampering === 'unsigned' ? `{"${key}":${json}}` : `{"${key}":${json},"sign":"${signature.toString('base64')}"}`;
    res.writeHead(200, { 'content-type': 'application/json;charset=utf-8' }).end(body);
  }
}

// ------------------------------------------------------------------------------------------------- helpers

/** A request turned away before any refund logic: bad signature or malformed. */
class Refusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

// ------------------------------------------------------------------------------------------------- trades

function tradeKey(channel: FakeChannel, outTradeNo: string): string {
  return `${channel} ${outTradeNo}`;
}

function parseOutTradeNo(encoded: string): string {
  let outTradeNo: string;
  try {
    outTradeNo = decodeURIComponent(encoded);
  } catch {
    throw new Refusal('PARAM_ERROR', `out_trade_no "${encoded}" is not valid percent-encoding`);
  }
  if (!/^[0-9A-Za-z_\-|*@]{1,64}$/.test(outTradeNo)) {
    throw new Refusal('PARAM_ERROR', `out_trade_no "${outTradeNo}" is not 1-64 of [0-9A-Za-z_-|*@]`);
  }
  return outTradeNo;
}

/** The close body is exactly `{"mchid":"…"}`; answers the mchid. */
function parseWechatpayClose(req: IncomingMessage, body: string): string {
  if (!req.headers['content-type']?.startsWith('application/json')) {
    throw new Refusal('PARAM_ERROR', `Content-Type "${req.headers['content-type']}" is not application/json`);
  }
  const json = parseJsonObject(body, 'PARAM_ERROR');
  if (!isNonEmptyString(json.mchid)) throw new Refusal('PARAM_ERROR', 'mchid is missing from the close body');
  return json.mchid;
}

/** What a trade call answered, for RecordedTradeCall.answered. */
function describeTradeAnswer(
  request: 'QUERY' | 'CLOSE',
  channel: FakeChannel,
  trade: FakeTrade | undefined,
  behaviour: TradeCallBehaviour,
): string {
  if (typeof behaviour === 'string' && behaviour !== 'answer') return behaviour;
  if (!trade) return 'NOT_EXIST';
  if (request === 'CLOSE') return CLOSE_ANSWER[channel][trade.state];
  return channel === 'WECHATPAY' ? WECHATPAY_TRADE_STATE[trade.state] : ALIPAY_TRADE_STATUS[trade.state];
}

/** WeChat closes a closed trade again without complaint; Alipay refuses it like a paid one. */
const CLOSE_ANSWER: Record<FakeChannel, Record<FakeTrade['state'], string>> = {
  WECHATPAY: { PAID: 'PAID', UNPAID: 'CLOSED', CLOSED: 'CLOSED' },
  ALIPAY: { PAID: 'PAID', UNPAID: 'CLOSED', CLOSED: 'ALREADY_CLOSED' },
};

const WECHATPAY_TRADE_STATE: Record<FakeTrade['state'], string> = {
  PAID: 'SUCCESS',
  UNPAID: 'NOTPAY',
  CLOSED: 'CLOSED',
};

const WECHATPAY_TRADE_STATE_DESC: Record<FakeTrade['state'], string> = {
  PAID: '支付成功',
  UNPAID: '订单未支付',
  CLOSED: '订单已关闭',
};

const ALIPAY_TRADE_STATUS: Record<FakeTrade['state'], string> = {
  PAID: 'TRADE_SUCCESS',
  UNPAID: 'WAIT_BUYER_PAY',
  CLOSED: 'TRADE_CLOSED',
};

/** 200 with the transaction (shaped like the real one, per trade state), or 404 ORDER_NOT_EXIST. */
function wechatpayTradeQueryAnswer(trade: FakeTrade | undefined): [number, object] {
  if (!trade) return [404, { code: 'ORDER_NOT_EXIST', message: '订单不存在' }];
  const paid = trade.state === 'PAID';
  return [
    200,
    {
      appid: trade.appid ?? 'wxd678efh567hg6787',
      mchid: trade.merchantId,
      out_trade_no: trade.outTradeNo,
      ...(paid
        ? {
            transaction_id: trade.transactionId,
            trade_type: 'JSAPI',
            bank_type: 'OTHERS',
            success_time: beijingRfc3339(trade.paidAt!),
            payer: { openid: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o' },
          }
        : {}),
      trade_state: WECHATPAY_TRADE_STATE[trade.state],
      trade_state_desc: WECHATPAY_TRADE_STATE_DESC[trade.state],
      attach: '',
      amount: paid
        ? { total: trade.amount, payer_total: trade.amount, currency: trade.currency, payer_currency: trade.currency }
        : { total: trade.amount, currency: trade.currency, payer_currency: trade.currency },
    },
  ];
}

/** 204 closed (empty body), 400 ORDERPAID, 404 ORDER_NOT_EXIST; an unpaid trade is closed for good. */
function closeWechatpayTrade(trade: FakeTrade | undefined): [number, object | undefined] {
  if (!trade) return [404, { code: 'ORDER_NOT_EXIST', message: '订单不存在' }];
  if (trade.state === 'PAID') return [400, { code: 'ORDERPAID', message: '订单已支付' }];
  trade.state = 'CLOSED';
  return [204, undefined];
}

/**
 * 10000 closed; 40004 ACQ.TRADE_NOT_EXIST for none; 40004 ACQ.TRADE_STATUS_ERROR for any trade not waiting for
 * the buyer: paid, and also already closed (the gateway only closes WAIT_BUYER_PAY trades).
 */
function closeAlipayTrade(trade: FakeTrade | undefined): object {
  if (!trade) return alipayError('40004', 'Business Failed', 'ACQ.TRADE_NOT_EXIST', '交易不存在');
  if (trade.state !== 'UNPAID') {
    return alipayError('40004', 'Business Failed', 'ACQ.TRADE_STATUS_ERROR', '交易状态不合法');
  }
  trade.state = 'CLOSED';
  return { code: '10000', msg: 'Success', trade_no: trade.transactionId, out_trade_no: trade.outTradeNo };
}

interface WechatpayRefundRequest {
  transactionId: string;
  outRefundNo: string;
  refund: number;
  total: number;
}

interface WechatpayRefund extends WechatpayRefundRequest {
  refundId: string;
  createTime: string;
  successTime?: string;
  status: WechatpayRefundStatus;
}

interface AlipayRefundRequest {
  kind: 'refund';
  tradeNo: string;
  outRequestNo: string;
  amount: number;
}

interface AlipayQueryRequest {
  kind: 'query';
  tradeNo: string;
  outRequestNo: string;
  queryOptions: string[];
}

interface AlipayTradeRequest {
  kind: 'trade';
  outTradeNo: string;
}

interface AlipayBillRequest {
  kind: 'bill';
  billDate: string;
}

type AlipayRequest = AlipayRefundRequest | AlipayQueryRequest | AlipayTradeRequest | AlipayBillRequest;

interface AlipayRefund {
  tradeNo: string;
  amount: number;
  refundedAt: Date;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function base64(text: string | undefined): Buffer {
  return Buffer.from(text ?? '', 'base64');
}

function randomDigits(length: number): string {
  return Array.from({ length }, () => randomInt(10)).join('');
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

function isPositiveInteger(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) > 0;
}

/** `WECHATPAY2-SHA256-RSA2048 k="v",k="v",…` in any order. */
function parseWechatpayAuthorization(header: string | undefined): Record<string, string | undefined> {
  const match = /^WECHATPAY2-SHA256-RSA2048 (.+)$/.exec(header ?? '');
  if (!match) throw new Refusal('SIGN_ERROR', 'Authorization is missing or not WECHATPAY2-SHA256-RSA2048');
  const fields: Record<string, string> = {};
  for (const part of match[1].split(',')) {
    const pair = /^\s*(\w+)="([^"]*)"\s*$/.exec(part);
    if (!pair) throw new Refusal('SIGN_ERROR', `Authorization has a malformed part: ${part}`);
    fields[pair[1]] = pair[2];
  }
  return fields;
}

function parseWechatpayRefund(req: IncomingMessage, body: string): WechatpayRefundRequest {
  if (!req.headers['content-type']?.startsWith('application/json')) {
    throw new Refusal('PARAM_ERROR', `Content-Type "${req.headers['content-type']}" is not application/json`);
  }
  const json = parseJsonObject(body, 'PARAM_ERROR');
  const amount = (json.amount ?? {}) as Record<string, unknown>;
  if (!isNonEmptyString(json.transaction_id)) throw new Refusal('PARAM_ERROR', 'transaction_id is missing');
  if (!isNonEmptyString(json.out_refund_no)) throw new Refusal('PARAM_ERROR', 'out_refund_no is missing');
  if (!isPositiveInteger(amount.refund) || !isPositiveInteger(amount.total) || amount.refund > amount.total) {
    throw new Refusal('PARAM_ERROR', 'amount.refund and amount.total must be fen with 0 < refund <= total');
  }
  if (amount.currency !== 'CNY') throw new Refusal('PARAM_ERROR', `amount.currency "${amount.currency}" is not CNY`);
  return {
    transactionId: json.transaction_id,
    outRefundNo: json.out_refund_no,
    refund: amount.refund,
    total: amount.total,
  };
}

/** `/v3/refund/domestic/refunds/{out_refund_no}`, nothing after the number. */
const WECHATPAY_QUERY_PATH = /^\/v3\/refund\/domestic\/refunds\/[^/]+$/;

function parseWechatpayQueryPath(path: string): string {
  let outRefundNo: string;
  try {
    outRefundNo = decodeURIComponent(path.slice(WECHATPAY_REFUND_PATH.length + 1));
  } catch {
    throw new Refusal('PARAM_ERROR', `out_refund_no in ${path} is not valid percent-encoding`);
  }
  if (!/^[0-9A-Za-z_\-|*@]{1,64}$/.test(outRefundNo)) {
    throw new Refusal('PARAM_ERROR', `out_refund_no "${outRefundNo}" is not 1-64 of [0-9A-Za-z_-|*@]`);
  }
  return outRefundNo;
}

function parseJsonObject(text: string | undefined, code: string): Record<string, unknown> {
  try {
    const json: unknown = JSON.parse(text ?? '');
    if (typeof json === 'object' && json !== null && !Array.isArray(json)) return json as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new Refusal(code, 'not a JSON object');
}

function wechatpayRefundAnswer(refund: WechatpayRefund): object {
  return {
    refund_id: refund.refundId,
    out_refund_no: refund.outRefundNo,
    transaction_id: refund.transactionId,
    out_trade_no: '',
    channel: 'ORIGINAL',
    user_received_account: '支付用户零钱',
    ...(refund.status === 'SUCCESS' ? { success_time: refund.successTime } : {}),
    create_time: refund.createTime,
    status: refund.status,
    funds_account: 'AVAILABLE',
    amount: {
      total: refund.total,
      refund: refund.refund,
      payer_total: refund.total,
      payer_refund: refund.refund,
      settlement_refund: refund.refund,
      settlement_total: refund.total,
      discount_refund: 0,
      currency: 'CNY',
    },
  };
}

/** Public parameters with a fixed value, the sub_code for a wrong one, and whether the gateway lets it be left out. */
const ALIPAY_FIXED_PARAMS: Array<[name: string, value: string, subCode: string, optional: boolean]> = [
  ['format', 'JSON', 'isv.invalid-format', true],
  ['charset', 'utf-8', 'isv.invalid-charset', false],
  ['sign_type', 'RSA2', 'isv.invalid-signature-type', false],
  ['version', '1.0', 'isv.invalid-version', false],
];

/** Query string and form body merged; the body wins. */
function alipayParams(req: IncomingMessage, body: string): Record<string, string> {
  const query = new URL(req.url ?? '/', 'http://127.0.0.1').searchParams;
  const isForm = req.headers['content-type']?.startsWith('application/x-www-form-urlencoded') ?? false;
  return { ...Object.fromEntries(query), ...Object.fromEntries(new URLSearchParams(isForm ? body : '')) };
}

/** Requests sign every parameter but sign itself (sign_type included), non-empty, sorted by key, raw `k=v&k=v`. */
function alipaySignedContent(params: Record<string, string>): string {
  return Object.keys(params)
    .filter((key) => key !== 'sign' && params[key] !== '')
    .sort()
    .map((key) => `${key}=${params[key]}`)
    .join('&');
}

function parseAlipayRequest(method: string, bizContent: string | undefined): AlipayRequest {
  if (method === ALIPAY_REFUND_METHOD) return parseAlipayRefund(bizContent);
  if (method === ALIPAY_QUERY_METHOD) return parseAlipayQuery(bizContent);
  if (method === ALIPAY_BILL_METHOD) return parseAlipayBill(bizContent);
  return parseAlipayTrade(bizContent);
}

function parseAlipayBill(bizContent: string | undefined): AlipayBillRequest {
  const json = parseJsonObject(bizContent, 'isv.invalid-parameter');
  if (json.bill_type !== 'trade') throw new Refusal('isv.invalid-parameter', 'the fake serves bill_type trade only');
  if (typeof json.bill_date !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(json.bill_date)) {
    throw new Refusal('isv.invalid-parameter', `bill_date ${JSON.stringify(json.bill_date)} is not YYYY-MM-DD`);
  }
  return { kind: 'bill', billDate: json.bill_date };
}

/** alipay.trade.query / alipay.trade.close by out_trade_no (the fake does not look trades up by trade_no). */
function parseAlipayTrade(bizContent: string | undefined): AlipayTradeRequest {
  const json = parseJsonObject(bizContent, 'isv.invalid-parameter');
  if (!isNonEmptyString(json.out_trade_no)) throw new Refusal('isv.invalid-parameter', 'out_trade_no is missing');
  return { kind: 'trade', outTradeNo: json.out_trade_no };
}

function parseAlipayRefund(bizContent: string | undefined): AlipayRefundRequest {
  const json = parseJsonObject(bizContent, 'isv.invalid-parameter');
  if (!isNonEmptyString(json.trade_no)) throw new Refusal('isv.invalid-parameter', 'trade_no is missing');
  if (!isNonEmptyString(json.out_request_no)) throw new Refusal('isv.invalid-parameter', 'out_request_no is missing');
  const amount = fenFromYuan(json.refund_amount);
  if (amount === undefined) {
    throw new Refusal('isv.invalid-parameter', `refund_amount ${JSON.stringify(json.refund_amount)} is not yuan`);
  }
  return { kind: 'refund', tradeNo: json.trade_no, outRequestNo: json.out_request_no, amount };
}

function parseAlipayQuery(bizContent: string | undefined): AlipayQueryRequest {
  const json = parseJsonObject(bizContent, 'isv.invalid-parameter');
  if (!isNonEmptyString(json.trade_no)) {
    throw new Refusal(
      'isv.invalid-parameter',
      'trade_no is missing (the fake does not look refunds up by out_trade_no)',
    );
  }
  if (!isNonEmptyString(json.out_request_no)) throw new Refusal('isv.invalid-parameter', 'out_request_no is missing');
  const options: unknown = json.query_options ?? [];
  if (!Array.isArray(options) || !options.every(isNonEmptyString)) {
    throw new Refusal(
      'isv.invalid-parameter',
      `query_options ${JSON.stringify(json.query_options)} is not a string array`,
    );
  }
  return { kind: 'query', tradeNo: json.trade_no, outRequestNo: json.out_request_no, queryOptions: options };
}

/**
 * code 10000 only says the query worked: refund_status REFUND_SUCCESS says the refund succeeded, its absence that
 * no such refund succeeded. The fake does not know the trade's total, so total_amount is left out.
 */
function alipayQueryAnswer(request: AlipayQueryRequest, refund: AlipayRefund | undefined): object {
  const asked = { code: '10000', msg: 'Success', trade_no: request.tradeNo };
  if (!refund) return { ...asked, out_request_no: request.outRequestNo };
  return {
    ...asked,
    out_trade_no: '',
    out_request_no: request.outRequestNo,
    refund_amount: yuan(refund.amount),
    refund_status: 'REFUND_SUCCESS',
    gmt_refund_pay: beijingDateTime(refund.refundedAt),
  };
}

/** What the gateway answers when it took the request but moved no money (yet): 10000, fund_change N. */
function alipayUnconfirmedAnswer(request: AlipayRefundRequest): object {
  return {
    code: '10000',
    msg: 'Success',
    trade_no: request.tradeNo,
    out_trade_no: '',
    buyer_logon_id: '159****5620',
    fund_change: 'N',
    refund_fee: '0.00',
  };
}

function alipayError(code: string, msg: string, subCode: string, subMsg: string): object {
  return { code, msg, sub_code: subCode, sub_msg: subMsg };
}

/** "12.34" → 1234, in integers only; undefined unless a positive yuan string with at most two decimals. */
function fenFromYuan(yuan: unknown): number | undefined {
  const match = typeof yuan === 'string' ? /^(\d{1,12})(?:\.(\d{1,2}))?$/.exec(yuan) : null;
  if (!match) return undefined;
  const fen = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  return fen > 0 ? fen : undefined;
}

/** 'yyyy-MM-dd HH:mm:ss' in Beijing time → epoch ms. */
function parseBeijingDateTime(text = ''): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(text)) return undefined;
  const at = Date.parse(`${text.replace(' ', 'T')}+08:00`);
  return Number.isNaN(at) ? undefined : at;
}
