/**
 * The fake WeChat Pay APIv3: `POST /v3/refund/domestic/refunds`, `GET /v3/refund/domestic/refunds/{out_refund_no}`,
 * `GET /v3/pay/transactions/out-trade-no/{out_trade_no}?mchid=`, `POST …/out-trade-no/{out_trade_no}/close`, and the
 * trade bill `GET /v3/bill/tradebill` with its signed file download. Every request's Authorization is checked with
 * the key of the merchant it names; every answer is signed with that merchant's platform key.
 */
import { createHash, KeyObject, verify } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import {
  FakeChannelApi,
  FakeLedger,
  FakeTrade,
  isNonEmptyString,
  isPositiveInteger,
  parseJsonObject,
  randomDigits,
  RefundBehaviour,
  Refusal,
  Tampering,
  base64,
} from '../fake-api';
import { beijingRfc3339, randomAlphanumeric } from '../signing';
import { signWechatpayBody } from './wechatpay-signer';
import {
  parseWechatpayCreate,
  WECHATPAY_CREATE_PATH,
  wechatpayCreateAnswer,
  WechatpayCreateRequest,
} from './fake-wechatpay-create';
import {
  checkSubMchid,
  partnerBillAccount,
  partnerTradeNames,
  partnerTradeQueryAnswer,
  WECHATPAY_PARTNER_TRADE_PATH,
} from './fake-wechatpay-partner';

/** The statuses a WeChat refund query can report. */
export type WechatpayRefundStatus = 'SUCCESS' | 'PROCESSING' | 'CLOSED' | 'ABNORMAL';

/** One WeChat Pay merchant account as the platform knows it. */
export interface FakeWechatpayMerchant {
  mchid: string;
  /** The serial_no the merchant must send. */
  merchantSerialNo: string;
  /** Verifies the merchant's Authorization signature. */
  merchantPublicKeyPem: string;
  /** Signs the answers to this merchant (Wechatpay-* headers). */
  platformSigner: { privateKey: KeyObject; serial: string };
  /** Service-provider (partner) mode: the sub_mchids it acts for (fake-wechatpay-partner.ts). */
  subMchids?: string[];
}

const WECHATPAY_REFUND_PATH = '/v3/refund/domestic/refunds';
/** `/v3/pay/transactions/out-trade-no/{out_trade_no}` and `…/close`. */
const WECHATPAY_TRADE_PATH = /^\/v3\/pay\/transactions\/out-trade-no\/([^/]+)(\/close)?$/;
const WECHATPAY_TRADEBILL_PATH = '/v3/bill/tradebill';
const WECHATPAY_BILL_DOWNLOAD_PATH = '/v3/billdownload/file';
const WECHATPAY_CLOCK_SKEW_S = 5 * 60;

export class FakeWechatpayApi implements FakeChannelApi {
  readonly channel = 'WECHATPAY' as const;
  private readonly refunds = new Map<string, WechatpayRefund>();

  constructor(
    private readonly ledger: FakeLedger,
    private readonly merchants: FakeWechatpayMerchant[],
  ) {}

  get defaultAccount(): string {
    return this.merchants[0].mchid;
  }

  /** WeChat gives a trade its transaction_id only when it is paid. */
  unpaidTransactionId(): string | undefined {
    return undefined;
  }

  /** What a query (trade_state) or a close answered; WeChat closes a closed trade again without complaint. */
  describeTradeAnswer(request: 'QUERY' | 'CLOSE', trade: FakeTrade): string {
    if (request === 'QUERY') return WECHATPAY_TRADE_STATE[trade.state];
    return trade.state === 'PAID' ? 'PAID' : 'CLOSED';
  }

  route(req: IncomingMessage, res: ServerResponse, body: string, path: string): boolean {
    const trade = WECHATPAY_TRADE_PATH.exec(path);
    const partnerTrade = WECHATPAY_PARTNER_TRADE_PATH.exec(path);
    if (req.method === 'POST' && WECHATPAY_CREATE_PATH.test(path)) this.create(req, res, body, path);
    else if (partnerTrade && req.method === (partnerTrade[2] ? 'POST' : 'GET')) {
      this.partnerTrade(req, res, body, path, partnerTrade[2] ? 'CLOSE' : 'QUERY');
    } else if (req.method === 'POST' && path === WECHATPAY_REFUND_PATH) this.refund(req, res, body);
    else if (req.method === 'GET' && WECHATPAY_QUERY_PATH.test(path)) this.query(req, res, body, path);
    else if (trade && req.method === (trade[2] ? 'POST' : 'GET')) {
      this.trade(req, res, body, path, trade[2] ? 'CLOSE' : 'QUERY');
    } else if (req.method === 'GET' && path === WECHATPAY_TRADEBILL_PATH) this.tradeBill(req, res, body);
    else if (req.method === 'GET' && path === WECHATPAY_BILL_DOWNLOAD_PATH) this.billFile(req, res, body);
    else return false;
    return true;
  }

  private refund(req: IncomingMessage, res: ServerResponse, body: string): void {
    let request: WechatpayRefundRequest;
    let merchant: FakeWechatpayMerchant;
    try {
      merchant = this.verifyAuthorization(req, body);
      request = parseWechatpayRefund(req, body);
      request.subMchid = checkSubMchid(merchant, parseJsonObject(body, 'PARAM_ERROR').sub_mchid);
    } catch (error) {
      return this.refuse(res, WECHATPAY_REFUND_PATH, error);
    }
    const behaviour = this.ledger.nextRefundBehaviour(request.outRefundNo);
    this.ledger.recordRefundCall(
      {
        channel: 'WECHATPAY',
        merchantId: merchant.mchid,
        ...(request.subMchid === undefined ? {} : { subMerchantId: request.subMchid }),
        refundNo: request.outRefundNo,
        transactionId: request.transactionId,
        amount: request.refund,
      },
      behaviour,
    );
    this.answerRefund(res, merchant, request, behaviour);
  }

  /** POST /v3/pay[/partner]/transactions/{jsapi,native,h5,app}: a trade created UNPAID, as the script says. */
  private create(req: IncomingMessage, res: ServerResponse, body: string, path: string): void {
    let merchant: FakeWechatpayMerchant;
    let request: WechatpayCreateRequest;
    try {
      merchant = this.verifyAuthorization(req, body);
      request = parseWechatpayCreate(path, body, merchant);
    } catch (error) {
      return this.refuse(res, path, error);
    }
    const behaviour = this.ledger.nextCreateBehaviour(request.outTradeNo);
    const record = (answered: string) =>
      this.ledger.recordCreateCall({
        channel: 'WECHATPAY',
        outTradeNo: request.outTradeNo,
        merchantId: request.mchid,
        ...(request.subMchid === undefined ? {} : { subMerchantId: request.subMchid }),
        tradeType: request.tradeType,
        amount: request.amount,
        currency: request.currency,
        notifyUrl: request.notifyUrl,
        expiry: request.timeExpire,
        request: request.json,
        answered,
      });
    if (behaviour === 'timeout') {
      record('timeout');
      return this.ledger.hang(res);
    }
    if (behaviour === 'server-error') {
      record('server-error');
      return this.send(res, merchant, 500, { code: 'SYSTEM_ERROR', message: '系统错误' });
    }
    if (typeof behaviour === 'object') {
      record(`reject:${behaviour.reject}`);
      return this.send(res, merchant, 400, { code: behaviour.reject, message: behaviour.message ?? behaviour.reject });
    }
    const trade = this.ledger.createTrade(
      {
        channel: 'WECHATPAY',
        outTradeNo: request.outTradeNo,
        amount: request.amount,
        currency: request.currency,
        merchantId: request.mchid,
        appid: request.subAppid ?? request.appid,
        ...(request.subMchid === undefined ? {} : { subMerchantId: request.subMchid }),
      },
      { terms: request.terms, notifyUrl: request.notifyUrl, tradeType: request.tradeType },
    );
    if (!trade) {
      record('reject:INVALID_REQUEST');
      return this.send(res, merchant, 400, { code: 'INVALID_REQUEST', message: '201 商户订单号重复' });
    }
    if (trade.state === 'PAID') {
      record('reject:ORDERPAID');
      return this.send(res, merchant, 400, { code: 'ORDERPAID', message: '该订单已支付' });
    }
    if (trade.state === 'CLOSED') {
      record('reject:ORDER_CLOSED');
      return this.send(res, merchant, 400, { code: 'ORDER_CLOSED', message: '订单已关闭' });
    }
    if (behaviour === 'answer-lost') {
      record('answer-lost');
      return this.ledger.hang(res);
    }
    record('created');
    this.send(res, merchant, 200, wechatpayCreateAnswer(request.tradeType, trade));
  }

  private query(req: IncomingMessage, res: ServerResponse, body: string, path: string): void {
    let outRefundNo: string;
    let merchant: FakeWechatpayMerchant;
    let subMchid: string | undefined;
    try {
      merchant = this.verifyAuthorization(req, body);
      outRefundNo = parseWechatpayQueryPath(path);
      const named = new URL(req.url ?? '/', this.ledger.url).searchParams.get('sub_mchid');
      subMchid = checkSubMchid(merchant, named ?? undefined);
    } catch (error) {
      return this.refuse(res, path, error);
    }
    const behaviour = this.ledger.nextQueryBehaviour(outRefundNo);
    // A provider sees the refunds of the sub-merchant it names only.
    const found = this.refunds.get(outRefundNo);
    const refund = found?.subMchid === subMchid ? found : undefined;
    const answered = behaviour !== 'answer' ? behaviour : (refund?.status ?? 'RESOURCE_NOT_EXISTS');
    const named = subMchid === undefined ? {} : { subMerchantId: subMchid };
    this.ledger.recordRefundQuery({ channel: 'WECHATPAY', refundNo: outRefundNo, ...named }, answered);
    if (behaviour === 'timeout') return this.ledger.hang(res);
    if (behaviour === 'server-error') {
      return this.send(res, merchant, 500, { code: 'SYSTEM_ERROR', message: '系统错误' });
    }
    if (typeof behaviour === 'object') {
      return this.send(res, merchant, 400, {
        code: behaviour.reject,
        message: behaviour.message ?? behaviour.reject,
      });
    }
    if (!refund) {
      return this.send(res, merchant, 404, { code: 'RESOURCE_NOT_EXISTS', message: '退款单不存在' });
    }
    this.send(res, merchant, 200, wechatpayRefundAnswer(refund));
  }

  /** GET …/out-trade-no/{no}?mchid= (query) and POST …/out-trade-no/{no}/close {"mchid"} (close). */
  private trade(
    req: IncomingMessage,
    res: ServerResponse,
    body: string,
    path: string,
    request: 'QUERY' | 'CLOSE',
  ): void {
    let outTradeNo: string;
    let merchant: FakeWechatpayMerchant;
    try {
      merchant = this.verifyAuthorization(req, body);
      outTradeNo = parseOutTradeNo(WECHATPAY_TRADE_PATH.exec(path)![1]);
      const named =
        request === 'QUERY' ? new URL(req.url ?? '/', this.ledger.url).searchParams.get('mchid') : undefined;
      const mchid = request === 'CLOSE' ? parseWechatpayClose(req, body) : named;
      if (mchid !== merchant.mchid) {
        throw new Refusal('PARAM_ERROR', `mchid "${mchid}" is not the signing merchant's ${merchant.mchid}`);
      }
    } catch (error) {
      return this.refuse(res, path, error);
    }
    const call = { channel: 'WECHATPAY' as const, request, outTradeNo, merchantId: merchant.mchid };
    this.ledger.answerTradeCall(res, call, (trade, tampering, serverError) => {
      if (serverError) {
        return this.send(res, merchant, 500, { code: 'SYSTEM_ERROR', message: '系统错误' });
      }
      const [status, payload] = request === 'QUERY' ? wechatpayTradeQueryAnswer(trade) : closeWechatpayTrade(trade);
      this.send(res, merchant, status, payload, tampering);
    });
  }

  /** The partner paths: GET …/partner/…/out-trade-no/{no}?sp_mchid=&sub_mchid= and POST …/close {sp_mchid, sub_mchid}. */
  private partnerTrade(
    req: IncomingMessage,
    res: ServerResponse,
    body: string,
    path: string,
    request: 'QUERY' | 'CLOSE',
  ): void {
    let outTradeNo: string;
    let merchant: FakeWechatpayMerchant;
    let subMchid: string;
    try {
      merchant = this.verifyAuthorization(req, body);
      outTradeNo = parseOutTradeNo(WECHATPAY_PARTNER_TRADE_PATH.exec(path)![1]);
      subMchid = partnerTradeNames(req, body, request, this.ledger.url, merchant);
    } catch (error) {
      return this.refuse(res, path, error);
    }
    const call = {
      channel: 'WECHATPAY' as const,
      request,
      outTradeNo,
      merchantId: merchant.mchid,
      subMerchantId: subMchid,
    };
    this.ledger.answerTradeCall(res, call, (trade, tampering, serverError) => {
      if (serverError) {
        return this.send(res, merchant, 500, { code: 'SYSTEM_ERROR', message: '系统错误' });
      }
      const [status, payload] =
        request === 'QUERY' ? partnerTradeQueryAnswer(trade, subMchid) : closeWechatpayTrade(trade);
      this.send(res, merchant, status, payload, tampering);
    });
  }

  /** GET /v3/bill/tradebill?bill_date=&bill_type=ALL[&tar_type=GZIP]: where to download, and the file's SHA1. */
  private tradeBill(req: IncomingMessage, res: ServerResponse, body: string): void {
    let merchant: FakeWechatpayMerchant;
    const query = new URL(req.url ?? '/', this.ledger.url).searchParams;
    const date = query.get('bill_date') ?? '';
    let subMchid: string | undefined;
    try {
      merchant = this.verifyAuthorization(req, body);
      subMchid = checkSubMchid(merchant, query.get('sub_mchid') ?? undefined);
      if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) throw new Refusal('PARAM_ERROR', `bill_date "${date}" is not YYYY-MM-DD`);
      if (query.get('bill_type') !== 'ALL') throw new Refusal('PARAM_ERROR', 'the fake serves bill_type=ALL only');
    } catch (error) {
      return this.refuse(res, WECHATPAY_TRADEBILL_PATH, error);
    }
    const named = subMchid === undefined ? {} : { subMerchantId: subMchid };
    const call = { channel: 'WECHATPAY' as const, merchantId: merchant.mchid, ...named, date };
    const bill = this.ledger.bill('WECHATPAY', partnerBillAccount(merchant.mchid, subMchid), date);
    if (bill?.channel !== 'WECHATPAY') {
      this.ledger.recordBillCall({ ...call, answered: 'NOT_READY' });
      return this.send(res, merchant, 400, { code: 'NO_STATEMENT_EXIST', message: '账单文件不存在' });
    }
    this.ledger.recordBillCall({ ...call, answered: 'READY' });
    if ('path' in bill) {
      const token = this.ledger.offerBillFile({ path: bill.path, call });
      return this.send(res, merchant, 200, {
        hash_type: 'SHA1',
        hash_value: bill.sha1,
        download_url: `${this.ledger.url}${WECHATPAY_BILL_DOWNLOAD_PATH}?token=${token}`,
      });
    }
    const plain = Buffer.from(bill.csv, 'utf8');
    const gzip = (bill.tarType ?? (query.get('tar_type') === 'GZIP' ? 'GZIP' : 'PLAIN')) === 'GZIP';
    const token = this.ledger.offerBillFile({ bytes: gzip ? gzipSync(plain) : plain, call });
    const hash = createHash('sha1').update(bill.wrongHash ? Buffer.concat([plain, Buffer.from(' ')]) : plain);
    this.send(res, merchant, 200, {
      hash_type: 'SHA1',
      hash_value: hash.digest('hex'),
      download_url: `${this.ledger.url}${WECHATPAY_BILL_DOWNLOAD_PATH}?token=${token}`,
    });
  }

  /** The file itself: the request is signed like any other, the answer is not (its integrity is the hash). */
  private billFile(req: IncomingMessage, res: ServerResponse, body: string): void {
    let merchant: FakeWechatpayMerchant;
    try {
      merchant = this.verifyAuthorization(req, body);
    } catch (error) {
      return this.refuse(res, WECHATPAY_BILL_DOWNLOAD_PATH, error);
    }
    const file = this.ledger.billFile(new URL(req.url ?? '/', this.ledger.url).searchParams.get('token') ?? '');
    if (!file || file.call.merchantId !== merchant.mchid) {
      return this.send(res, merchant, 400, { code: 'PARAM_ERROR', message: 'no such bill token' });
    }
    this.ledger.recordBillCall({ ...file.call, answered: 'DOWNLOADED' });
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    if (file.path) return void createReadStream(file.path).pipe(res);
    res.end(file.bytes);
  }

  /** The merchant named by the Authorization header, whose key must have signed the request. */
  private verifyAuthorization(req: IncomingMessage, body: string): FakeWechatpayMerchant {
    const auth = parseWechatpayAuthorization(req.headers.authorization);
    const merchant = this.merchants.find((m) => m.mchid === auth.mchid);
    if (!merchant) {
      const known = this.merchants.map((m) => m.mchid).join(', ');
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
  private refuse(res: ServerResponse, path: string, error: unknown): void {
    if (!(error instanceof Refusal)) throw error;
    this.ledger.refuse(path, error.message);
    const status = error.code === 'SIGN_ERROR' ? 401 : 400;
    this.send(res, this.merchants[0], status, { code: error.code, message: error.message });
  }

  private answerRefund(
    res: ServerResponse,
    merchant: FakeWechatpayMerchant,
    request: WechatpayRefundRequest,
    behaviour: RefundBehaviour,
  ): void {
    if (behaviour === 'timeout') return this.ledger.hang(res);
    if (behaviour === 'answer-lost') {
      this.settleRefund(request, 'SUCCESS');
      return this.ledger.hang(res);
    }
    if (behaviour === 'server-error') {
      return this.send(res, merchant, 500, { code: 'SYSTEM_ERROR', message: '系统错误' });
    }
    if (typeof behaviour === 'object') {
      return this.send(res, merchant, 400, {
        code: behaviour.reject,
        message: behaviour.message ?? behaviour.reject,
      });
    }
    if (behaviour === 'processing-lost') {
      const lost = { ...request, refundId: `5000${randomDigits(25)}`, createTime: beijingRfc3339(new Date()) };
      return this.send(res, merchant, 200, wechatpayRefundAnswer({ ...lost, status: 'PROCESSING' }));
    }
    const refund = this.settleRefund(request, behaviour === 'success' ? 'SUCCESS' : 'PROCESSING');
    this.send(res, merchant, 200, wechatpayRefundAnswer(refund));
  }

  /** Like the real API, one refund_id per out_refund_no, however often it is asked for. */
  private settleRefund(request: WechatpayRefundRequest, status: WechatpayRefund['status']): WechatpayRefund {
    const refund = this.refunds.get(request.outRefundNo) ?? {
      ...request,
      refundId: `5000${randomDigits(25)}`,
      createTime: beijingRfc3339(new Date()),
      status,
    };
    refund.status = status;
    if (status === 'SUCCESS') refund.successTime ??= beijingRfc3339(new Date());
    this.refunds.set(request.outRefundNo, refund);
    return refund;
  }

  /** Signed with the merchant's platform key (or forged, or unsigned); no payload is a 204-style empty body. */
  private send(
    res: ServerResponse,
    merchant: FakeWechatpayMerchant,
    status: number,
    payload: object | undefined,
    tampering?: Tampering,
  ): void {
    const body = payload === undefined ? '' : JSON.stringify(payload);
    const signer =
      tampering === 'bad-signature'
        ? { privateKey: this.ledger.forger, serial: merchant.platformSigner.serial }
        : merchant.platformSigner;
    const signed = signWechatpayBody(signer, body);
    const headers =
      tampering === 'unsigned'
        ? { 'content-type': 'application/json', 'request-id': randomAlphanumeric(32) }
        : { ...signed, 'request-id': randomAlphanumeric(32) };
    res.writeHead(status, headers).end(body);
  }

  /**
   * Sets the status WeChat queries report for refundNo from now on, as if WeChat finished processing it.
   * The refund must have been created (answered SUCCESS or PROCESSING); a later refund POST sets it again.
   */
  settle(refundNo: string, status: 'SUCCESS' | 'CLOSED' | 'ABNORMAL'): void {
    const refund = this.refunds.get(refundNo);
    if (!refund) throw new Error(`FakePlatform.settle: no WeChat Pay refund ${refundNo} was created`);
    refund.status = status;
    if (status === 'SUCCESS') refund.successTime ??= beijingRfc3339(new Date());
  }

  refundsOf(transactionId: string): number {
    return [...this.refunds.values()].filter((r) => r.transactionId === transactionId).length;
  }

  /** The refund_id WeChat Pay gave refundNo, once created. */
  refundId(refundNo: string): string | undefined {
    return this.refunds.get(refundNo)?.refundId;
  }
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

interface WechatpayRefundRequest {
  /** Partner mode: the sub-merchant the refund is for. */
  subMchid?: string;
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
  if (amount.currency !== 'CNY')
    throw new Refusal('PARAM_ERROR', `amount.currency "${String(amount.currency)}" is not CNY`);
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
