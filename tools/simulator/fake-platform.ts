/**
 * A local fake of the channel APIs the service calls, on one loopback port with plain node:http: each channel's
 * piece (wechatpay/fake-wechatpay-api.ts, alipay/fake-alipay-gateway.ts) answers its own paths; this server keeps
 * what they share: the scripted behaviours, the recorded calls, the trades, the bills and the hanging requests. It
 * serves several merchant accounts per channel, checks each request's RSA signature with the key of the account it
 * names, signs every answer for real with that account's platform key, and answers as a test scripts it.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { FakeAlipayApp, FakeAlipayGateway } from './alipay/fake-alipay-gateway';
import { FakeAlipayPayments } from './alipay/fake-alipay-payments';
import {
  BillFile,
  FakeBill,
  FakeChannel,
  FakeChannelApi,
  FakeLedger,
  CreateBehaviour,
  FakeTrade,
  RecordedCreateCall,
  QueryBehaviour,
  readBody,
  RecordedBillCall,
  RecordedRefundCall,
  RecordedRefundQuery,
  RecordedTradeCall,
  RefundBehaviour,
  TradeAnswer,
  TradeCallArrival,
  TradeCallBehaviour,
  TradeParams,
} from './fake-api';
import { randomAlphanumeric } from './signing';
import { FakeWechatpayApi, FakeWechatpayMerchant } from './wechatpay/fake-wechatpay-api';

export type {
  CreateBehaviour,
  RecordedCreateCall,
  FakeBill,
  FakeChannel,
  FakeTrade,
  QueryBehaviour,
  RecordedBillCall,
  RecordedRefundCall,
  RecordedRefundQuery,
  RecordedTradeCall,
  RefundBehaviour,
  TradeCallArrival,
  TradeCallBehaviour,
  TradeParams,
} from './fake-api';
export type { FakeAlipayApp } from './alipay/fake-alipay-gateway';
export type { FakeWechatpayMerchant, WechatpayRefundStatus } from './wechatpay/fake-wechatpay-api';

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

/** The accounts of the channels this fake serves, as a key set's channels give them. */
export type FakePlatformAccounts = Pick<FakePlatformOptions, 'wechatpay' | 'alipay'>;

export class FakePlatform implements FakeLedger {
  /** Refund requests only; queries are in `queries`. */
  readonly calls: RecordedRefundCall[] = [];
  /** Refund queries that passed the signature checks, in order. */
  readonly queries: RecordedRefundQuery[] = [];
  /** Create calls (prepay, ...) that passed the signature checks, in the order they arrived. */
  readonly createCalls: RecordedCreateCall[] = [];
  /** Trade queries and closes that passed the signature checks, in the order they were answered. */
  readonly tradeCalls: RecordedTradeCall[] = [];
  readonly refusedRequests: Array<{ path: string; reason: string }> = [];
  /** Bill requests and downloads that passed the signature checks, in order. */
  readonly billCalls: RecordedBillCall[] = [];
  /** Signs the forged answers: a real RSA key that no account knows. */
  readonly forger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  private readonly bills = new Map<string, FakeBill>();
  private readonly billFiles = new Map<string, BillFile>();
  private readonly scripts = new Map<string, RefundBehaviour[]>();
  private readonly queryScripts = new Map<string, QueryBehaviour[]>();
  private readonly tradeScripts = new Map<string, TradeCallBehaviour[]>();
  private readonly createScripts = new Map<string, CreateBehaviour[]>();
  private readonly trades = new Map<string, FakeTrade>();
  private readonly tradeCallWaiters: Array<{ key: string; resolve: (call: TradeCallArrival) => void }> = [];
  private readonly hanging = new Set<NodeJS.Timeout>();
  private readonly wechatpay: FakeWechatpayApi;
  private readonly alipay: FakeAlipayGateway;
  private readonly channelApis: FakeChannelApi[];

  private constructor(
    private readonly options: FakePlatformOptions,
    private readonly server: Server,
    readonly url: string,
  ) {
    this.wechatpay = new FakeWechatpayApi(this, [options.wechatpay].flat());
    this.alipay = new FakeAlipayGateway(this, [options.alipay].flat());
    this.channelApis = [this.wechatpay, this.alipay];
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

  /** The fake Alipay's payments: its create calls, the trades they opened, and their buyer. */
  get alipayPayments(): FakeAlipayPayments {
    return this.alipay.payments;
  }

  get alipayGatewayUrl(): string {
    return this.alipay.gatewayUrl;
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
  script(refundNo: string, ...behaviours: RefundBehaviour[]): void {
    this.scripts.set(refundNo, [...(this.scripts.get(refundNo) ?? []), ...behaviours]);
  }

  queriesFor(refundNo: string): number {
    return this.queries.filter((query) => query.refundNo === refundNo).length;
  }

  /**
   * Behaviours for the next queries of refundNo (or '*' for any refund), consumed in order; afterwards 'answer'.
   * A queue of its own: `script` never affects queries, nor `scriptQuery` refund calls.
   */
  scriptQuery(refundNo: string, ...behaviours: QueryBehaviour[]): void {
    this.queryScripts.set(refundNo, [...(this.queryScripts.get(refundNo) ?? []), ...behaviours]);
  }

  /**
   * Sets the status WeChat queries report for refundNo from now on, as if WeChat finished processing it.
   * The refund must have been created (answered SUCCESS or PROCESSING); a later refund POST sets it again.
   */
  settle(refundNo: string, status: 'SUCCESS' | 'CLOSED' | 'ABNORMAL'): void {
    this.wechatpay.settle(refundNo, status);
  }

  /** The refunds the channel has made of a transaction: money that left, whatever the service heard. */
  refundsAtChannel(channel: FakeChannel, transactionId: string): number {
    return this.api(channel).refundsOf(transactionId);
  }

  /** The refund_id WeChat Pay gave refundNo, once created. */
  wechatpayRefundId(refundNo: string): string | undefined {
    return this.wechatpay.refundId(refundNo);
  }

  /** The trade is paid at the channel by `transactionId` (a notification the service may never receive). */
  payTrade(params: TradeParams & { transactionId: string; paidAt?: Date }): FakeTrade {
    return this.putTrade(params, { state: 'PAID', transactionId: params.transactionId, paidAt: params.paidAt });
  }

  /**
   * The trade exists at the channel and is not paid: WeChat NOTPAY, Alipay WAIT_BUYER_PAY (an Alipay trade has its
   * trade_no from the moment the buyer opens the cashier).
   */
  openTrade(params: TradeParams): FakeTrade {
    return this.putTrade(params, { state: 'UNPAID', transactionId: this.api(params.channel).unpaidTransactionId() });
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

  /** Behaviours for the next create calls of an order number (or '*' for any), consumed in order; afterwards 'answer'. */
  scriptCreate(outTradeNo: string, ...behaviours: CreateBehaviour[]): void {
    this.createScripts.set(outTradeNo, [...(this.createScripts.get(outTradeNo) ?? []), ...behaviours]);
  }

  createCallsFor(outTradeNo: string, channel?: FakeChannel): RecordedCreateCall[] {
    return this.createCalls.filter((c) => c.outTradeNo === outTradeNo && (!channel || c.channel === channel));
  }

  nextCreateBehaviour(outTradeNo: string): CreateBehaviour {
    return this.createScripts.get(outTradeNo)?.shift() ?? this.createScripts.get('*')?.shift() ?? 'answer';
  }

  recordCreateCall(call: RecordedCreateCall): void {
    this.createCalls.push(call);
  }

  createTrade(params: TradeParams, created: NonNullable<FakeTrade['created']>): FakeTrade | undefined {
    const existing = this.trade(params.channel, params.outTradeNo);
    if (existing) return existing.created?.terms === created.terms ? existing : undefined;
    const trade = this.openTrade(params);
    trade.created = created;
    return trade;
  }

  /** Behaviours for the next queries of a trade (or '*' for any), consumed in order; afterwards 'answer'. */
  scriptTradeQuery(outTradeNo: string, ...behaviours: TradeCallBehaviour[]): void {
    this.appendTradeScript(`QUERY ${outTradeNo}`, behaviours);
  }

  /** Behaviours for the next closes of a trade (or '*' for any), consumed in order; afterwards 'answer'. */
  scriptTradeClose(outTradeNo: string, ...behaviours: TradeCallBehaviour[]): void {
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
    const trade: FakeTrade = {
      channel: params.channel,
      outTradeNo: params.outTradeNo,
      merchantId: params.merchantId ?? this.api(params.channel).defaultAccount,
      appid: params.appid,
      ...(params.subMerchantId === undefined ? {} : { subMerchantId: params.subMerchantId }),
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
  private visibleTrade(call: TradeCallArrival): FakeTrade | undefined {
    const trade = this.trade(call.channel, call.outTradeNo);
    if (trade?.answersAnyAccount) return trade;
    // A service provider sees the trades of the sub-merchant it asks for, as the partner paths do.
    const ours = trade?.merchantId === call.merchantId && trade.subMerchantId === call.subMerchantId;
    return ours ? trade : undefined;
  }

  /**
   * Tells the waiters that the call arrived, then answers it by `behaviour`. The trade is looked up when the answer
   * is given, so a trade paid during a `{ delayMs }` is answered paid; the call is recorded with what was answered.
   */
  answerTradeCall(res: ServerResponse, call: TradeCallArrival, answer: TradeAnswer): void {
    const behaviour = this.nextTradeBehaviour(call.request, call.outTradeNo);
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
      const trade = this.visibleTrade(call);
      this.tradeCalls.push({ ...call, answered: this.describeTradeAnswer(call, trade, behaviour) });
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
    if (this.channelApis.some((api) => api.route(req, res, body, path))) return;
    if (this.options.extraRoutes?.(req, res, body)) return;
    this.refusedRequests.push({ path, reason: `no such endpoint: ${req.method} ${path}` });
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"code":"NOT_FOUND","message":"no such endpoint"}');
  }

  nextRefundBehaviour(refundNo: string): RefundBehaviour {
    return (
      this.scripts.get(refundNo)?.shift() ?? this.scripts.get('*')?.shift() ?? this.options.defaultRefund ?? 'success'
    );
  }

  nextQueryBehaviour(refundNo: string): QueryBehaviour {
    return this.queryScripts.get(refundNo)?.shift() ?? this.queryScripts.get('*')?.shift() ?? 'answer';
  }

  recordRefundQuery(query: Omit<RecordedRefundQuery, 'answered'>, answered: string | { reject: string }): void {
    this.queries.push({ ...query, answered: typeof answered === 'string' ? answered : `reject:${answered.reject}` });
  }

  recordRefundCall(call: Omit<RecordedRefundCall, 'behaviour'>, behaviour: RefundBehaviour): void {
    this.calls.push({ ...call, behaviour: typeof behaviour === 'string' ? behaviour : `reject:${behaviour.reject}` });
  }

  hang(res: ServerResponse): void {
    const timer = setTimeout(() => res.destroy(), this.options.hangMs ?? 5000);
    this.hanging.add(timer);
    res.on('close', () => {
      clearTimeout(timer);
      this.hanging.delete(timer);
    });
  }

  refuse(path: string, reason: string): void {
    this.refusedRequests.push({ path, reason });
  }

  bill(channel: FakeChannel, merchantId: string, date: string): FakeBill | undefined {
    return this.bills.get(`${channel} ${merchantId} ${date}`);
  }

  recordBillCall(call: RecordedBillCall): void {
    this.billCalls.push(call);
  }

  offerBillFile(file: BillFile): string {
    const token = randomAlphanumeric(24);
    this.billFiles.set(token, file);
    return token;
  }

  billFile(token: string): BillFile | undefined {
    return this.billFiles.get(token);
  }

  private api(channel: FakeChannel): FakeChannelApi {
    return this.channelApis.find((api) => api.channel === channel)!;
  }

  /** What a trade call answered, for RecordedTradeCall.answered. */
  private describeTradeAnswer(
    call: TradeCallArrival,
    trade: FakeTrade | undefined,
    behaviour: TradeCallBehaviour,
  ): string {
    if (typeof behaviour === 'string' && behaviour !== 'answer') return behaviour;
    if (!trade) return 'NOT_EXIST';
    return this.api(call.channel).describeTradeAnswer(call.request, trade);
  }
}

function tradeKey(channel: FakeChannel, outTradeNo: string): string {
  return `${channel} ${outTradeNo}`;
}
