/**
 * The fake Alipay's side of creating a payment: alipay.trade.precreate (a qr_code) and alipay.trade.create (a
 * mini-program's trade_no) answered to the service, and the buyer's side of page, wap and app pay (the signed
 * request the browser or the Alipay SDK brings to the gateway). Each opens a trade with the request's terms; the
 * same out_trade_no again is the same trade when its terms are the same (ACQ.CONTEXT_INCONSISTENT otherwise).
 * A buyer pays a trade at its cashier (`POST /alipay/cashier/<trade_no>/pay`, which scanning the qr_code leads
 * to): the trade is paid and a signed trade_status_sync is posted to the request's notify_url. A trade past its
 * time_expire is closed there and cannot be paid, as Alipay does.
 */
import { KeyObject } from 'node:crypto';
import { ServerResponse } from 'node:http';
import { alipayCertDelivery } from './alipay-cert-keys';
import { FakeLedger, FakeTrade, isNonEmptyString, parseJsonObject, Refusal } from '../fake-api';
import { beijingDateTime } from '../signing';
import { alipayDelivery, alipayTradeParams, yuan } from './alipay-signer';

export const ALIPAY_PRECREATE_METHOD = 'alipay.trade.precreate';
export const ALIPAY_CREATE_METHOD = 'alipay.trade.create';
/** What the buyer's browser (page, wap) or the Alipay SDK (app) brings to the gateway: no answer to the service. */
export const ALIPAY_BUYER_METHODS = new Set(['alipay.trade.page.pay', 'alipay.trade.wap.pay', 'alipay.trade.app.pay']);
export const ALIPAY_CASHIER_PATH = '/alipay/cashier/';

const PRODUCT_CODES: Record<string, string> = {
  'alipay.trade.page.pay': 'FAST_INSTANT_TRADE_PAY',
  'alipay.trade.wap.pay': 'QUICK_WAP_WAY',
  'alipay.trade.app.pay': 'QUICK_MSECURITY_PAY',
  [ALIPAY_PRECREATE_METHOD]: 'FACE_TO_FACE_PAYMENT',
  [ALIPAY_CREATE_METHOD]: 'JSAPI_PAY',
};

/** The terms of a trade opened by a create call or a buyer's request, beyond what the ledger keeps. */
interface AlipayTradeTerms {
  appId: string;
  subject: string;
  /** time_expire, when given. */
  expiresAt?: Date;
}

/** What paying a trade did: the notification sent to notify_url, and how the service answered it. */
export interface AlipayBuyerPayment {
  outTradeNo: string;
  tradeNo: string;
  notifyUrl?: string;
  /** The signed form body of the notification. */
  notification: string;
  /** The service's answer (status and body), or why there was none; undefined when not delivered. */
  ack?: { status: number; body: string } | { failure: string };
}

interface SigningApp {
  appId: string;
  alipayPrivateKey: KeyObject;
  sellerId?: string;
  certMode?: { alipayCertSn: string };
}

export class FakeAlipayPayments {
  private readonly terms = new Map<string, AlipayTradeTerms>();

  constructor(private readonly ledger: FakeLedger) {}

  /**
   * precreate and create, scripted by the ledger's scriptCreate and recorded in its createCalls: the trade opened
   * (or found again, same terms) and answered with its qr_code or trade_no through `answer`, which signs it.
   */
  answerCreate(
    res: ServerResponse,
    appId: string,
    params: Record<string, string>,
    answer: (payload: object) => void,
  ): void {
    const bizContent = parseJsonObject(params.biz_content, 'isv.invalid-parameter');
    const outTradeNo = isNonEmptyString(bizContent.out_trade_no) ? bizContent.out_trade_no : '';
    const behaviour = this.ledger.nextCreateBehaviour(outTradeNo);
    const record = (answered: string) =>
      this.ledger.recordCreateCall({
        channel: 'ALIPAY',
        outTradeNo,
        merchantId: appId,
        tradeType: params.method,
        amount: fenFromYuan(bizContent.total_amount) ?? 0,
        currency: 'CNY',
        notifyUrl: params.notify_url ?? '',
        expiry: typeof bizContent.time_expire === 'string' ? bizContent.time_expire : '',
        request: { ...params, biz_content: bizContent },
        answered,
      });
    if (behaviour === 'timeout') {
      record('timeout');
      return this.ledger.hang(res);
    }
    if (behaviour === 'server-error') {
      record('server-error');
      return answer(alipayError('20000', 'Service Currently Unavailable', 'aop.ACQ.SYSTEM_ERROR', '系统错误'));
    }
    if (typeof behaviour === 'object') {
      record(`reject:${behaviour.reject}`);
      return answer(alipayError('40004', 'Business Failed', behaviour.reject, behaviour.message ?? behaviour.reject));
    }
    let opened: { trade: FakeTrade; again: boolean };
    try {
      opened = this.open(appId, params, bizContent);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      record(`reject:${error.code}`);
      return answer(alipayError('40004', 'Business Failed', error.code, error.message));
    }
    if (behaviour === 'answer-lost') {
      record('answer-lost');
      return this.ledger.hang(res);
    }
    record(opened.again ? 'same-trade' : 'created');
    const { trade } = opened;
    const payload =
      params.method === ALIPAY_PRECREATE_METHOD
        ? { out_trade_no: trade.outTradeNo, qr_code: this.cashierUrl(trade) }
        : { out_trade_no: trade.outTradeNo, trade_no: trade.transactionId };
    answer({ code: '10000', msg: 'Success', ...payload });
  }

  /**
   * The buyer brings a signed page, wap or app request (its signature already verified): the trade opened (or
   * found again), answered with a cashier page whose address is also in the x-fake-cashier header.
   */
  openCashier(res: ServerResponse, appId: string, params: Record<string, string>): void {
    let trade: FakeTrade;
    try {
      ({ trade } = this.open(appId, params, parseJsonObject(params.biz_content, 'isv.invalid-parameter')));
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      this.ledger.refuse('/gateway.do', `${error.code}: ${error.message}`);
      res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' }).end(`${error.code}: ${error.message}`);
      return;
    }
    const cashier = this.cashierUrl(trade);
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'x-fake-cashier': cashier })
      .end(
        `<html><body><p>${this.terms.get(trade.outTradeNo)?.subject} ${yuan(trade.amount)} CNY</p>` +
          `<form method="post" action="${cashier}/pay"><button>Pay</button></form></body></html>`,
      );
  }

  /**
   * GET /alipay/cashier/<trade_no> shows the trade (JSON); POST …/pay pays it as the buyer and posts the
   * notification to notify_url. True when the path was the cashier's.
   */
  routeCashier(method: string | undefined, path: string, res: ServerResponse, apps: SigningApp[]): boolean {
    const match = /^\/alipay\/cashier\/([^/]+)(\/pay)?$/.exec(path);
    if (!match) return false;
    const outTradeNo = [...this.terms.keys()].find((no) => this.tradeNoOf(no) === match[1]);
    const trade = outTradeNo === undefined ? undefined : this.ledger.trade('ALIPAY', outTradeNo);
    if (!trade) return (res.writeHead(404).end('no such trade'), true);
    if (method === 'GET' && !match[2]) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(this.describe(trade)));
      return true;
    }
    if (method !== 'POST' || !match[2]) return (res.writeHead(405).end(), true);
    const app = apps.find((a) => a.appId === trade.merchantId)!;
    this.pay(trade.outTradeNo, app).then(
      (payment) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(payment)),
      (error: Error) => res.writeHead(409, { 'content-type': 'text/plain' }).end(error.message),
    );
    return true;
  }

  /**
   * Pays the created trade as its buyer: paid at the channel, and (unless `deliver` is false) its signed
   * notification posted to notify_url. Refused when the trade is not waiting for the buyer, or past time_expire
   * (the trade is closed then, as Alipay closes it).
   */
  async pay(outTradeNo: string, app: SigningApp, deliver = true): Promise<AlipayBuyerPayment> {
    const terms = this.terms.get(outTradeNo);
    const trade = this.ledger.trade('ALIPAY', outTradeNo);
    if (!terms || !trade?.created) throw new Error(`no trade ${outTradeNo} was created at the fake Alipay`);
    this.closeIfExpired(trade);
    if (trade.state !== 'UNPAID') throw new Error(`trade ${outTradeNo} is ${trade.state}, not waiting for the buyer`);
    const paidAt = new Date();
    const tradeNo = trade.transactionId!;
    this.ledger.payTrade({
      channel: 'ALIPAY',
      outTradeNo,
      merchantId: trade.merchantId,
      amount: trade.amount,
      transactionId: tradeNo,
      paidAt,
    });
    const params = alipayTradeParams({
      appId: app.appId,
      sellerId: app.sellerId,
      outTradeNo,
      tradeNo,
      totalAmount: yuan(trade.amount),
      paidAt,
    });
    const notification = app.certMode
      ? alipayCertDelivery(app.alipayPrivateKey, app.certMode.alipayCertSn, params)
      : alipayDelivery(app.alipayPrivateKey, params);
    const notifyUrl = trade.created.notifyUrl || undefined;
    const payment = { outTradeNo, tradeNo, notifyUrl, notification };
    if (!deliver || !notifyUrl) return payment;
    return { ...payment, ack: await post(notifyUrl, notification) };
  }

  /** The trade_no of a trade opened here. */
  tradeNoOf(outTradeNo: string): string | undefined {
    return this.terms.has(outTradeNo) ? this.ledger.trade('ALIPAY', outTradeNo)?.transactionId : undefined;
  }

  /** Past time_expire, an unpaid trade is closed at Alipay. */
  private closeIfExpired(trade: FakeTrade): void {
    const expiresAt = this.terms.get(trade.outTradeNo)?.expiresAt;
    if (trade.state === 'UNPAID' && expiresAt && expiresAt.getTime() < Date.now()) trade.state = 'CLOSED';
  }

  private describe(trade: FakeTrade): object {
    return {
      outTradeNo: trade.outTradeNo,
      tradeNo: trade.transactionId,
      amount: trade.amount,
      subject: this.terms.get(trade.outTradeNo)?.subject,
      state: trade.state,
      payUrl: `${this.cashierUrl(trade)}/pay`,
    };
  }

  private cashierUrl(trade: FakeTrade): string {
    return `${this.ledger.url}${ALIPAY_CASHIER_PATH}${trade.transactionId}`;
  }

  /**
   * The trade of these terms: opened now (UNPAID, with its trade_no), or the one already open for the same
   * out_trade_no and terms (`again`); a paid or closed trade, or other terms, are refused as Alipay refuses them.
   */
  private open(
    appId: string,
    params: Record<string, string>,
    biz: Record<string, unknown>,
  ): { trade: FakeTrade; again: boolean } {
    const outTradeNo = biz.out_trade_no;
    if (!isNonEmptyString(outTradeNo) || !/^[0-9A-Za-z_]{1,64}$/.test(outTradeNo)) {
      throw new Refusal('ACQ.INVALID_PARAMETER', 'out_trade_no is missing or not 1 to 64 letters, digits or _');
    }
    const amount = fenFromYuan(biz.total_amount);
    if (amount === undefined) throw new Refusal('ACQ.INVALID_PARAMETER', 'total_amount is not yuan');
    if (!isNonEmptyString(biz.subject)) throw new Refusal('ACQ.INVALID_PARAMETER', 'subject is missing');
    if (biz.product_code !== PRODUCT_CODES[params.method]) {
      throw new Refusal('ACQ.INVALID_PARAMETER', `product_code ${String(biz.product_code)} is not ${params.method}'s`);
    }
    const expiresAt = biz.time_expire === undefined ? undefined : parseBeijing(biz.time_expire);
    if (expiresAt === null) throw new Refusal('ACQ.INVALID_PARAMETER', 'time_expire is not yyyy-MM-dd HH:mm:ss');
    if (params.method === ALIPAY_CREATE_METHOD && !isNonEmptyString(biz.buyer_id ?? biz.buyer_open_id)) {
      throw new Refusal('ACQ.INVALID_PARAMETER', 'alipay.trade.create needs buyer_id or buyer_open_id');
    }
    const known = this.ledger.trade('ALIPAY', outTradeNo);
    if (known) this.closeIfExpired(known);
    if (known?.state === 'PAID') throw new Refusal('ACQ.TRADE_HAS_SUCCESS', '交易已被支付');
    if (known?.state === 'CLOSED') throw new Refusal('ACQ.TRADE_HAS_CLOSE', '交易已经关闭');
    if (!known && expiresAt && expiresAt.getTime() < Date.now()) {
      throw new Refusal('ACQ.INVALID_PARAMETER', `time_expire ${String(biz.time_expire)} has passed`);
    }
    const terms = JSON.stringify([appId, amount, biz.subject, biz.time_expire, params.notify_url]);
    const created = { terms, notifyUrl: params.notify_url ?? '', tradeType: params.method };
    const trade = this.ledger.createTrade({ channel: 'ALIPAY', outTradeNo, amount, merchantId: appId }, created);
    if (!trade) throw new Refusal('ACQ.CONTEXT_INCONSISTENT', '交易信息被篡改');
    this.terms.set(outTradeNo, { appId, subject: biz.subject, expiresAt });
    return { trade, again: trade !== undefined && known !== undefined };
  }
}

function alipayError(code: string, msg: string, subCode: string, subMsg: string): object {
  return { code, msg, sub_code: subCode, sub_msg: subMsg };
}

/** "12.34" → 1234, in integers only; undefined unless a positive yuan string with at most two decimals. */
function fenFromYuan(value: unknown): number | undefined {
  const match = typeof value === 'string' ? /^(\d{1,12})(?:\.(\d{1,2}))?$/.exec(value) : null;
  if (!match) return undefined;
  const fen = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  return fen > 0 ? fen : undefined;
}

/** 'yyyy-MM-dd HH:mm:ss' in Beijing time; null when it is not that. */
function parseBeijing(value: unknown): Date | null {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(value)) return null;
  const at = new Date(`${value.replace(' ', 'T')}+08:00`);
  return Number.isNaN(at.getTime()) || beijingDateTime(at) !== value ? null : at;
}

async function post(url: string, body: string): Promise<{ status: number; body: string } | { failure: string }> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
      body,
      signal: AbortSignal.timeout(10_000),
    });
    return { status: response.status, body: await response.text() };
  } catch (error) {
    return { failure: (error as Error).message };
  }
}
