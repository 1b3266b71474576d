/**
 * The fake Alipay openapi gateway (`POST /gateway.do`): `alipay.trade.refund`, `alipay.trade.fastpay.refund.query`,
 * `alipay.trade.query`, `alipay.trade.close` and `alipay.data.dataservice.bill.downloadurl.query` with its ZIP URL.
 * Every request's RSA2 signature is checked with the key of the app it names; every answer is signed with that
 * app's Alipay key. Alipay's yuan strings are converted to fen without floating point. An app in certificate mode
 * must send its app_cert_sn and alipay_root_cert_sn, and its answers name the signing certificate in alipay_cert_sn.
 */
import { KeyObject, sign, verify } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import {
  base64,
  FakeChannelApi,
  FakeLedger,
  FakeTrade,
  isNonEmptyString,
  parseJsonObject,
  randomDigits,
  RefundBehaviour,
  Refusal,
  Tampering,
} from '../fake-api';
import { beijingDateTime } from '../signing';
import { yuan } from './alipay-signer';
import {
  ALIPAY_BUYER_METHODS,
  ALIPAY_CASHIER_PATH,
  ALIPAY_CREATE_METHOD,
  ALIPAY_PRECREATE_METHOD,
  FakeAlipayPayments,
} from './fake-alipay-payments';

/** One Alipay app as the gateway knows it. */
export interface FakeAlipayApp {
  appId: string;
  /** Verifies the app's RSA2 request signature. */
  appPublicKeyPem: string;
  /** Signs the answers to this app. */
  alipayPrivateKey: KeyObject;
  /** Certificate mode: the SNs the app's requests must carry, and the certificate (of alipayPrivateKey) answers name. */
  certMode?: { appCertSn: string; rootCertSn: string; alipayCertSn: string };
  /** The seller_id of the payment notifications the fake sends; the test key sets' own by default. */
  sellerId?: string;
}

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
  [ALIPAY_PRECREATE_METHOD]: 'alipay_trade_precreate_response',
  [ALIPAY_CREATE_METHOD]: 'alipay_trade_create_response',
};
const ALIPAY_BILL_FILE_PATH = '/alipay-bills/';
const ALIPAY_CLOCK_SKEW_MS = 15 * 60 * 1000;

export class FakeAlipayGateway implements FakeChannelApi {
  readonly channel = 'ALIPAY' as const;
  private readonly refunds = new Map<string, AlipayRefund>();
  private readonly buyers = new Map<string, string>();
  readonly payments: FakeAlipayPayments;

  constructor(
    private readonly ledger: FakeLedger,
    private readonly apps: FakeAlipayApp[],
  ) {
    this.payments = new FakeAlipayPayments(ledger);
  }

  get defaultAccount(): string {
    return this.apps[0].appId;
  }

  get gatewayUrl(): string {
    return `${this.ledger.url}${ALIPAY_GATEWAY_PATH}`;
  }

  /** An Alipay trade has its trade_no from the moment the buyer opens the cashier. */
  unpaidTransactionId(): string | undefined {
    return `2026${randomDigits(24)}`;
  }

  /** What a query (trade_status) or a close answered; the gateway refuses to close a closed trade, like a paid one. */
  describeTradeAnswer(request: 'QUERY' | 'CLOSE', trade: FakeTrade): string {
    if (request === 'QUERY') return ALIPAY_TRADE_STATUS[trade.state];
    return { PAID: 'PAID', UNPAID: 'CLOSED', CLOSED: 'ALREADY_CLOSED' }[trade.state];
  }

  route(req: IncomingMessage, res: ServerResponse, body: string, path: string): boolean {
    if (req.method === 'POST' && path === ALIPAY_GATEWAY_PATH) this.gateway(req, res, body);
    else if (req.method === 'GET' && path === ALIPAY_GATEWAY_PATH) this.gateway(req, res, '');
    else if (path.startsWith(ALIPAY_CASHIER_PATH)) return this.payments.routeCashier(req.method, path, res, this.apps);
    else if (req.method === 'GET' && path.startsWith(ALIPAY_BILL_FILE_PATH)) this.billFile(res, path);
    else return false;
    return true;
  }

  private gateway(req: IncomingMessage, res: ServerResponse, body: string): void {
    const params = alipayParams(req, body);
    let request: AlipayRequest;
    let app: FakeAlipayApp;
    try {
      app = this.verifyRequest(params);
      request = parseAlipayRequest(params.method, params.biz_content);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      this.ledger.refuse(ALIPAY_GATEWAY_PATH, `${error.code}: ${error.message}`);
      // Only a known method has a named response; the gateway answers anything else as error_response.
      const key = ALIPAY_RESPONSE_KEYS[params.method] ?? 'error_response';
      const signingApp = this.apps.find((a) => a.appId === params.app_id) ?? this.apps[0];
      return this.send(res, signingApp, key, alipayError('40002', 'Invalid Arguments', error.code, error.message));
    }
    // The buyer's browser or SDK brings a signed page, wap or app request: the cashier opens.
    if (ALIPAY_BUYER_METHODS.has(params.method)) return this.payments.openCashier(res, app.appId, params);
    if (request.kind === 'create') {
      return this.payments.answerCreate(res, app.appId, params, (payload) =>
        this.send(res, app, ALIPAY_RESPONSE_KEYS[params.method], payload),
      );
    }
    if (request.kind === 'query') return this.query(res, app, request);
    if (request.kind === 'trade') return this.trade(res, app, request, params.method);
    if (request.kind === 'bill') return this.bill(res, app, request);
    const scripted = this.ledger.nextRefundBehaviour(request.outRequestNo);
    const behaviour = scripted === 'processing' ? 'success' : scripted; // the gateway has no "processing"
    this.ledger.recordRefundCall(
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
      return this.send(res, app, ALIPAY_REFUND_RESPONSE, alipayUnconfirmedAnswer(request));
    }
    this.answerRefund(res, app, request, behaviour);
  }

  private query(res: ServerResponse, app: FakeAlipayApp, request: AlipayQueryRequest): void {
    const behaviour = this.ledger.nextQueryBehaviour(request.outRequestNo);
    const refund = this.refunds.get(`${request.tradeNo}\n${request.outRequestNo}`);
    const answered = behaviour !== 'answer' ? behaviour : refund ? 'REFUND_SUCCESS' : 'NO_REFUND';
    this.ledger.recordRefundQuery({ channel: 'ALIPAY', refundNo: request.outRequestNo }, answered);
    if (behaviour === 'timeout') return this.ledger.hang(res);
    const answer =
      behaviour === 'server-error'
        ? alipayError('20000', 'Service Currently Unavailable', 'aop.ACQ.SYSTEM_ERROR', '系统错误')
        : typeof behaviour === 'object'
          ? alipayError('40004', 'Business Failed', behaviour.reject, behaviour.message ?? behaviour.reject)
          : alipayQueryAnswer(request, refund);
    this.send(res, app, ALIPAY_QUERY_RESPONSE, answer);
  }

  /** alipay.data.dataservice.bill.downloadurl.query: a short-lived URL of the day's ZIP, or isp.bill_not_exist. */
  private bill(res: ServerResponse, app: FakeAlipayApp, request: AlipayBillRequest): void {
    const call = { channel: 'ALIPAY' as const, merchantId: app.appId, date: request.billDate };
    const bill = this.ledger.bill('ALIPAY', app.appId, request.billDate);
    if (bill?.channel !== 'ALIPAY') {
      this.ledger.recordBillCall({ ...call, answered: 'NOT_READY' });
      return this.send(
        res,
        app,
        ALIPAY_BILL_RESPONSE,
        alipayError('40004', 'Business Failed', 'isp.bill_not_exist', '账单不存在'),
      );
    }
    this.ledger.recordBillCall({ ...call, answered: 'READY' });
    const token = this.ledger.offerBillFile({ bytes: bill.zip, call });
    this.send(res, app, ALIPAY_BILL_RESPONSE, {
      code: '10000',
      msg: 'Success',
      bill_download_url: `${this.ledger.url}${ALIPAY_BILL_FILE_PATH}${token}.zip`,
    });
  }

  /** The ZIP behind the URL: no signature, the token in the URL is the credential. */
  private billFile(res: ServerResponse, path: string): void {
    const file = this.ledger.billFile(path.slice(ALIPAY_BILL_FILE_PATH.length).replace(/\.zip$/, ''));
    if (!file || file.call.channel !== 'ALIPAY') return void res.writeHead(404).end('no such bill');
    this.ledger.recordBillCall({ ...file.call, answered: 'DOWNLOADED' });
    res.writeHead(200, { 'content-type': 'application/zip' }).end(file.bytes);
  }

  /** alipay.trade.query and alipay.trade.close, by out_trade_no. */
  private trade(res: ServerResponse, app: FakeAlipayApp, request: AlipayTradeRequest, method: string): void {
    const kind: 'QUERY' | 'CLOSE' = method === ALIPAY_TRADE_QUERY_METHOD ? 'QUERY' : 'CLOSE';
    const call = { channel: 'ALIPAY' as const, request: kind, outTradeNo: request.outTradeNo, merchantId: app.appId };
    this.ledger.answerTradeCall(res, call, (trade, tampering, serverError) => {
      const answer = serverError
        ? alipayError('20000', 'Service Currently Unavailable', 'aop.ACQ.SYSTEM_ERROR', '系统错误')
        : kind === 'QUERY'
          ? this.tradeQueryAnswer(trade)
          : closeAlipayTrade(trade);
      this.send(res, app, ALIPAY_RESPONSE_KEYS[method], answer, tampering);
    });
  }

  private tradeQueryAnswer(trade: FakeTrade | undefined): object {
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
            buyer_user_id: this.buyer(trade.transactionId!),
          }
        : { buyer_pay_amount: '0.00' }),
    };
  }

  /** The app named by app_id, whose key must have signed the request. */
  private verifyRequest(params: Record<string, string>): FakeAlipayApp {
    const app = this.apps.find((a) => a.appId === params.app_id);
    if (!app) {
      const known = this.apps.map((a) => a.appId).join(', ');
      throw new Refusal('isv.invalid-app-id', `app_id "${params.app_id}" is not ${known}`);
    }
    if (!(params.method in ALIPAY_RESPONSE_KEYS) && !ALIPAY_BUYER_METHODS.has(params.method)) {
      throw new Refusal(
        'isv.invalid-method',
        `method "${params.method}" is not one of ${Object.keys(ALIPAY_RESPONSE_KEYS).join(',')}`,
      );
    }
    for (const [name, expected, subCode, optional] of ALIPAY_FIXED_PARAMS) {
      if (params[name] === expected || (optional && params[name] === undefined)) continue;
      throw new Refusal(subCode, `${name} "${params[name]}" is not ${expected}`);
    }
    if (!verify('sha256', Buffer.from(alipaySignedContent(params), 'utf8'), app.appPublicKeyPem, base64(params.sign))) {
      throw new Refusal('isv.invalid-signature', 'the request signature does not verify');
    }
    if (app.certMode) checkCertSns(params, app.certMode);
    const sentAt = parseBeijingDateTime(params.timestamp);
    if (sentAt === undefined || Math.abs(Date.now() - sentAt) > ALIPAY_CLOCK_SKEW_MS) {
      throw new Refusal('isv.invalid-timestamp', `timestamp "${params.timestamp}" is malformed or 15 minutes off`);
    }
    return app;
  }

  private answerRefund(
    res: ServerResponse,
    app: FakeAlipayApp,
    request: AlipayRefundRequest,
    behaviour: RefundBehaviour,
  ): void {
    if (behaviour === 'timeout') return this.ledger.hang(res);
    if (behaviour === 'answer-lost') {
      this.settleRefund(request);
      return this.ledger.hang(res);
    }
    const answer =
      behaviour === 'server-error'
        ? alipayError('20000', 'Service Currently Unavailable', 'aop.ACQ.SYSTEM_ERROR', '系统错误')
        : typeof behaviour === 'object'
          ? alipayError('40004', 'Business Failed', behaviour.reject, behaviour.message ?? behaviour.reject)
          : this.settleRefund(request);
    this.send(res, app, ALIPAY_REFUND_RESPONSE, answer);
  }

  /** Like the real gateway, funds move once per out_request_no: fund_change is 'N' when it is asked again. */
  private settleRefund(request: AlipayRefundRequest): object {
    const key = `${request.tradeNo}\n${request.outRequestNo}`;
    const known = this.refunds.get(key);
    const refund = known ?? { tradeNo: request.tradeNo, amount: request.amount, refundedAt: new Date() };
    this.refunds.set(key, refund);
    let refunded = 0;
    for (const each of this.refunds.values()) if (each.tradeNo === request.tradeNo) refunded += each.amount;
    return {
      code: '10000',
      msg: 'Success',
      trade_no: request.tradeNo,
      out_trade_no: '',
      buyer_logon_id: '159****5620',
      fund_change: known ? 'N' : 'Y',
      refund_fee: yuan(refunded),
      gmt_refund_pay: beijingDateTime(refund.refundedAt),
      buyer_user_id: this.buyer(request.tradeNo),
    };
  }

  refundsOf(tradeNo: string): number {
    return [...this.refunds.values()].filter((r) => r.tradeNo === tradeNo).length;
  }

  private buyer(tradeNo: string): string {
    const buyer = this.buyers.get(tradeNo) ?? `2088${randomDigits(12)}`;
    this.buyers.set(tradeNo, buyer);
    return buyer;
  }

  /** The body is `{"<key>":<json>,"sign":"…"}`, signed over the exact text of <json> with the app's Alipay key. */
  private send(res: ServerResponse, app: FakeAlipayApp, key: string, payload: object, tampering?: Tampering): void {
    const json = JSON.stringify(payload);
    const signingKey = tampering === 'bad-signature' ? this.ledger.forger : app.alipayPrivateKey;
    const signature = sign('sha256', Buffer.from(json, 'utf8'), signingKey);
    const certSn = app.certMode ? `"alipay_cert_sn":"${app.certMode.alipayCertSn}",` : '';
    const body =
      tampering === 'unsigned'
        ? `{"${key}":${json}}`
        : `{"${key}":${json},${certSn}"sign":"${signature.toString('base64')}"}`;
    res.writeHead(200, { 'content-type': 'application/json;charset=utf-8' }).end(body);
  }
}

const ALIPAY_TRADE_STATUS: Record<FakeTrade['state'], string> = {
  PAID: 'TRADE_SUCCESS',
  UNPAID: 'WAIT_BUYER_PAY',
  CLOSED: 'TRADE_CLOSED',
};

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

/** precreate, create, and the buyer's page, wap and app requests: FakeAlipayPayments reads their biz_content. */
interface AlipayCreateRequest {
  kind: 'create';
}

type AlipayRequest =
  AlipayRefundRequest | AlipayQueryRequest | AlipayTradeRequest | AlipayBillRequest | AlipayCreateRequest;

interface AlipayRefund {
  tradeNo: string;
  amount: number;
  refundedAt: Date;
}

/** Public parameters with a fixed value, the sub_code for a wrong one, and whether the gateway lets it be left out. */
const ALIPAY_FIXED_PARAMS: Array<[name: string, value: string, subCode: string, optional: boolean]> = [
  ['format', 'JSON', 'isv.invalid-format', true],
  ['charset', 'utf-8', 'isv.invalid-charset', false],
  ['sign_type', 'RSA2', 'isv.invalid-signature-type', false],
  ['version', '1.0', 'isv.invalid-version', false],
];

/**
 * A certificate-mode app's request names its app certificate and Alipay's root bundle by SN (both signed with
 * the rest); the sub_codes are the fake's own.
 */
function checkCertSns(params: Record<string, string>, certMode: NonNullable<FakeAlipayApp['certMode']>): void {
  if (params.app_cert_sn !== certMode.appCertSn) {
    throw new Refusal('isv.invalid-app-cert-sn', `app_cert_sn "${params.app_cert_sn}" is not ${certMode.appCertSn}`);
  }
  if (params.alipay_root_cert_sn !== certMode.rootCertSn) {
    throw new Refusal(
      'isv.invalid-alipay-root-cert-sn',
      `alipay_root_cert_sn "${params.alipay_root_cert_sn}" is not ${certMode.rootCertSn}`,
    );
  }
}

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
  if (method === ALIPAY_PRECREATE_METHOD || method === ALIPAY_CREATE_METHOD || ALIPAY_BUYER_METHODS.has(method)) {
    return { kind: 'create' };
  }
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
