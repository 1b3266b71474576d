/**
 * A local fake of UnionPay's gateway (acp 5.1.0) on its own loopback port: backTransReq (refunds),
 * queryTrans and fileTransfer. It checks each request's signature with the certificate its certId
 * names, answers as UnionPay does (raw `k=v&...`, signed with UnionPay's signing certificate, which
 * it carries in signPubKeyCert), and builds the refund result notifications UnionPay posts to backUrl.
 */
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { X509Certificate } from 'node:crypto';
import { IssuedCertificate } from './unionpay-keys';
import { fileContentOf } from './unionpay-bill-file';
import {
  newQueryId,
  signUnionpay,
  txnTime,
  unionpayAnswer,
  unionpayConsumeFields,
  unionpayForm,
  unionpayRefundFields,
  unionpaySignatureHolds,
} from './unionpay-signer';

export interface FakeUnionpayMerchant {
  merId: string;
  /** The merchant's signing certificate (PEM): its serial in decimal is the certId its requests carry. */
  certificatePem: string;
}

export interface FakeUnionpayTrade {
  merId: string;
  orderId: string;
  queryId: string;
  /** Fen. */
  amount: number;
  /** origRespCode: 00 paid; anything else not (yet). */
  origRespCode: string;
  txnTime: string;
}

export interface RecordedUnionpayRefund {
  merId: string;
  orderId: string;
  origQryId: string;
  /** Fen. */
  txnAmt: number;
  backUrl: string;
  /** The refund's queryId, as answered. */
  queryId: string;
  respCode: string;
  /** The txnTime it was sent with: queryTrans finds it by orderId and this. */
  txnTime: string;
}

export interface RecordedUnionpayCall {
  endpoint: 'backTrans' | 'queryTrans' | 'fileTransfer' | 'appTrans' | 'frontTrans';
  merId: string;
  fields: Record<string, string>;
}

export const FILE_TRANSFER_PATH = '/unionpay/fileTransfer';
/** Where a buyer pays a consumption: POST <url>/unionpay/cashier/<tn>/pay (GET shows it). */
export const CASHIER_PATH = '/unionpay/cashier/';

/** How the next appTransReq is answered: 'answer' (a tn), 'timeout' (the connection dropped, no tn), or a respCode. */
export type ConsumeBehaviour = 'answer' | 'timeout' | { respCode: string; respMsg?: string };

/** A consumption the merchant sent (appTransReq) or the buyer's browser brought (frontTransReq), with its terms. */
export interface FakeUnionpayConsumption {
  endpoint: 'appTrans' | 'frontTrans';
  merId: string;
  orderId: string;
  txnTime: string;
  /** Fen. */
  txnAmt: number;
  channelType: string;
  backUrl: string;
  frontUrl?: string;
  /** yyyyMMddHHmmss Beijing: the buyer cannot pay after it. */
  payTimeout?: string;
  /** The tn the app pays with; the front consumption's cashier has one too. */
  tn: string;
}

/** What paying a consumption did: the signed notification posted to backUrl, and how the service answered. */
export interface UnionpayBuyerPayment {
  orderId: string;
  queryId: string;
  backUrl: string;
  /** The signed form body of the consumption notification. */
  notification: string;
  ack?: { status: number; body: string } | { failure: string };
}

export class FakeUnionpayGateway {
  /** The refunds UnionPay took (money that leaves), whatever became of their answers; not the duplicates it refused. */
  readonly refunds: RecordedUnionpayRefund[] = [];
  readonly calls: RecordedUnionpayCall[] = [];
  readonly refused: Array<{ path: string; reason: string }> = [];
  /** The respCode the next refunds are answered with ('00' when none is scripted). */
  readonly refundRespCodes: string[] = [];
  /** How many of the next refunds are taken (made) while their answers are lost: the connection is dropped. */
  refundAnswersToLose = 0;
  /** The consumptions opened, by merId and orderId. */
  readonly consumptions = new Map<string, FakeUnionpayConsumption>();
  /** How the next appTransReq calls are answered, in order; afterwards 'answer'. */
  readonly consumeBehaviours: ConsumeBehaviour[] = [];
  private readonly trades = new Map<string, FakeUnionpayTrade>();
  private readonly bills = new Map<string, Buffer>();
  private readonly certificates = new Map<string, X509Certificate>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
    merchants: FakeUnionpayMerchant[],
    private readonly signer: Pick<IssuedCertificate, 'pem' | 'privateKey'>,
  ) {
    for (const m of merchants) {
      const cert = new X509Certificate(m.certificatePem);
      this.certificates.set(`${m.merId} ${BigInt(`0x${cert.serialNumber}`).toString(10)}`, cert);
    }
  }

  static async start(options: {
    merchants: FakeUnionpayMerchant[];
    signer: Pick<IssuedCertificate, 'pem' | 'privateKey'>;
    port?: number;
  }): Promise<FakeUnionpayGateway> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', resolve);
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const fake = new FakeUnionpayGateway(server, url, options.merchants, options.signer);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => fake.handle(req, res));
    return fake;
  }

  /** The service's variables that point its UnionPay calls here. */
  get apiEnv(): { UNIONPAY_GATEWAY_URL: string; UNIONPAY_FILE_TRANSFER_URL: string } {
    return { UNIONPAY_GATEWAY_URL: this.url, UNIONPAY_FILE_TRANSFER_URL: `${this.url}${FILE_TRANSFER_PATH}` };
  }

  /**
   * The consumption exists at UnionPay (paid when origRespCode is 00, the default), sent at txnTime
   * (now when not given): queryTrans finds it only under that txnTime.
   */
  putTrade(trade: Omit<FakeUnionpayTrade, 'origRespCode' | 'txnTime'> & Partial<FakeUnionpayTrade>): void {
    this.trades.set(`${trade.merId} ${trade.orderId}`, { origRespCode: '00', txnTime: txnTime(), ...trade });
  }

  /** The consumption paid by `queryId`, if the fake knows it. */
  tradeOf(merId: string, queryId: string): FakeUnionpayTrade | undefined {
    return [...this.trades.values()].find((t) => t.merId === merId && t.queryId === queryId);
  }

  /** Serves `zip` as the merchant's files of settleDate `date` (YYYY-MM-DD). */
  serveBill(merId: string, date: string, zip: Buffer): void {
    this.bills.set(`${merId} ${date.slice(5, 7)}${date.slice(8, 10)}`, zip);
  }

  /** The signed form of the result notification UnionPay posts to a refund's backUrl. */
  refundNotification(refundNo: string, respCode = '00'): { backUrl: string; body: string } {
    const refund = this.refunds.find((r) => r.orderId === refundNo);
    if (!refund) throw new Error(`FakeUnionpayGateway: no refund ${refundNo} was requested`);
    const fields = unionpayRefundFields({ ...refund, txnAmt: refund.txnAmt, respCode });
    return { backUrl: refund.backUrl, body: unionpayForm(signUnionpay(fields, this.signer)) };
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  /** The calls of an endpoint about one orderId that passed the signature checks. */
  callsFor(endpoint: RecordedUnionpayCall['endpoint'], orderId: string): RecordedUnionpayCall[] {
    return this.calls.filter((c) => c.endpoint === endpoint && c.fields.orderId === orderId);
  }

  /**
   * Pays the consumption as its buyer: paid at UnionPay (queryTrans answers it) and, unless `deliver` is false,
   * its signed notification posted to backUrl. Refused once payTimeout has passed, or when paid already.
   */
  async pay(merId: string, orderId: string, deliver = true): Promise<UnionpayBuyerPayment> {
    const consumption = this.consumptions.get(`${merId} ${orderId}`);
    if (!consumption) throw new Error(`no consumption ${orderId} was sent to the fake UnionPay`);
    const trade = this.trades.get(`${merId} ${orderId}`);
    if (trade?.origRespCode === '00') throw new Error(`consumption ${orderId} is paid already`);
    if (consumption.payTimeout && consumption.payTimeout < txnTime()) {
      throw new Error(`consumption ${orderId} expired at its payTimeout ${consumption.payTimeout}`);
    }
    const queryId = newQueryId();
    this.putTrade({ merId, orderId, queryId, amount: consumption.txnAmt, txnTime: consumption.txnTime });
    const fields = unionpayConsumeFields({
      merId,
      orderId,
      queryId,
      txnAmt: consumption.txnAmt,
      txnTime: consumption.txnTime,
    });
    const notification = unionpayForm(signUnionpay({ ...fields, channelType: consumption.channelType }, this.signer));
    const payment = { orderId, queryId, backUrl: consumption.backUrl, notification };
    if (!deliver) return payment;
    return { ...payment, ack: await post(consumption.backUrl, notification) };
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', this.url).pathname;
      if (path.startsWith(CASHIER_PATH)) return this.cashier(req.method, path, res);
      const fields = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      const endpoint =
        path === '/gateway/api/backTransReq.do'
          ? 'backTrans'
          : path === '/gateway/api/queryTrans.do'
            ? 'queryTrans'
            : path === '/gateway/api/appTransReq.do'
              ? 'appTrans'
              : path === '/gateway/api/frontTransReq.do'
                ? 'frontTrans'
                : path === FILE_TRANSFER_PATH
                  ? 'fileTransfer'
                  : undefined;
      if (!endpoint) return this.refuse(res, path, 404, 'no such endpoint');
      const cert = this.certificates.get(`${fields.merId} ${fields.certId}`);
      if (!cert) return this.refuse(res, path, 200, `certId ${fields.certId} is not merId ${fields.merId}'s`, fields);
      if (fields.signMethod !== '01' || !unionpaySignatureHolds(fields, cert.publicKey)) {
        return this.refuse(res, path, 200, 'signature does not verify', fields);
      }
      this.calls.push({ endpoint, merId: fields.merId, fields });
      if (endpoint === 'frontTrans') return this.frontTrans(res, fields);
      if (endpoint === 'appTrans' && this.consumeBehaviours[0] === 'timeout') {
        this.consumeBehaviours.shift();
        return res.destroy();
      }
      const answer = this[endpoint](fields);
      if (endpoint === 'backTrans' && answer.respCode === '00' && this.refundAnswersToLose > 0) {
        this.refundAnswersToLose -= 1;
        return res.destroy();
      }
      this.answer(res, answer);
    });
  }

  /** appTransReq: the consumption opened (its terms checked), answered with the tn the app pays with. */
  private appTrans(request: Record<string, string>): Record<string, string> {
    const behaviour = this.consumeBehaviours.shift() ?? 'answer';
    if (typeof behaviour === 'object') {
      return { ...echo(request), respCode: behaviour.respCode, respMsg: behaviour.respMsg ?? 'refused' };
    }
    const opened = this.openConsumption('appTrans', request);
    if ('respCode' in opened) return { ...echo(request), ...opened };
    return { ...echo(request), tn: opened.tn, respCode: '00', respMsg: 'success' };
  }

  /**
   * frontTransReq: the buyer's browser posts the signed form; the consumption is opened and the cashier page
   * answered (its address also in the x-fake-cashier header); a refused form is answered with its respCode.
   */
  private frontTrans(res: ServerResponse, request: Record<string, string>): void {
    const opened = this.openConsumption('frontTrans', request);
    if ('respCode' in opened) {
      this.refused.push({ path: '/gateway/api/frontTransReq.do', reason: `${opened.respCode} ${opened.respMsg}` });
      return void res.writeHead(400, { 'content-type': 'text/plain;charset=UTF-8' }).end(unionpayAnswer(opened));
    }
    const cashier = `${this.url}${CASHIER_PATH}${opened.tn}`;
    res
      .writeHead(200, { 'content-type': 'text/html;charset=UTF-8', 'x-fake-cashier': cashier })
      .end(`<html><body><form method="post" action="${cashier}/pay"><button>Pay</button></form></body></html>`);
  }

  /** The consumption of these terms: opened now; the same orderId again is a duplicate (12), as UnionPay answers. */
  private openConsumption(
    endpoint: FakeUnionpayConsumption['endpoint'],
    request: Record<string, string>,
  ): FakeUnionpayConsumption | { respCode: string; respMsg: string } {
    const refusal = consumptionRefusal(endpoint, request);
    if (refusal) return { respCode: '30', respMsg: refusal };
    const key = `${request.merId} ${request.orderId}`;
    const known = this.consumptions.get(key);
    if (known) {
      // The browser may post the same signed form again (a reload): the same consumption, the same cashier.
      const sameForm =
        endpoint === 'frontTrans' && known.txnTime === request.txnTime && known.txnAmt === Number(request.txnAmt);
      return sameForm ? known : { respCode: '12', respMsg: 'duplicate transaction' };
    }
    const consumption: FakeUnionpayConsumption = {
      endpoint,
      merId: request.merId,
      orderId: request.orderId,
      txnTime: request.txnTime,
      txnAmt: Number(request.txnAmt),
      channelType: request.channelType,
      backUrl: request.backUrl,
      frontUrl: request.frontUrl,
      payTimeout: request.payTimeout,
      tn: newQueryId(),
    };
    this.consumptions.set(key, consumption);
    return consumption;
  }

  /** GET /unionpay/cashier/<tn> shows the consumption; POST …/pay pays it and posts its notification to backUrl. */
  private cashier(method: string | undefined, path: string, res: ServerResponse): void {
    const match = /^\/unionpay\/cashier\/(\d+)(\/pay)?$/.exec(path);
    const consumption = [...this.consumptions.values()].find((c) => c.tn === match?.[1]);
    if (!match || !consumption) return void res.writeHead(404).end('no such consumption');
    if (method === 'GET' && !match[2]) {
      const { orderId, txnAmt, txnTime, payTimeout } = consumption;
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ orderId, txnAmt, txnTime, payTimeout, payUrl: `${this.url}${path}/pay` }));
    }
    if (method !== 'POST' || !match[2]) return void res.writeHead(405).end();
    this.pay(consumption.merId, consumption.orderId).then(
      (payment) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(payment)),
      (error: Error) => res.writeHead(409, { 'content-type': 'text/plain' }).end(error.message),
    );
  }

  private backTrans(request: Record<string, string>): Record<string, string> {
    if (request.txnType !== '04') return { respCode: '12', respMsg: 'only refunds (txnType 04) are faked' };
    // An orderId may not repeat within a day: UnionPay refuses the second request as a duplicate, whatever its txnTime.
    if (this.refunds.some((r) => r.merId === request.merId && r.orderId === request.orderId)) {
      return { ...echo(request), respCode: '12', respMsg: 'duplicate transaction' };
    }
    const respCode = this.refundRespCodes.shift() ?? '00';
    const queryId = newQueryId();
    this.refunds.push({
      merId: request.merId,
      orderId: request.orderId,
      origQryId: request.origQryId,
      txnAmt: Number(request.txnAmt),
      backUrl: request.backUrl,
      queryId,
      respCode,
      txnTime: request.txnTime,
    });
    return { ...echo(request), origQryId: request.origQryId, txnAmt: request.txnAmt, queryId, respCode, respMsg: 'ok' };
  }

  private queryTrans(request: Record<string, string>): Record<string, string> {
    const refund = this.refunds.find(
      (r) => r.merId === request.merId && r.orderId === request.orderId && r.txnTime === request.txnTime,
    );
    if (refund) return this.refundAsQueried(request, refund);
    // UnionPay knows a consumption by orderId AND the txnTime it was sent with: another txnTime is another (unknown) order.
    const trade = this.trades.get(`${request.merId} ${request.orderId}`);
    if (!trade || trade.txnTime !== request.txnTime) {
      return { ...echo(request), respCode: '34', respMsg: 'no such transaction' };
    }
    return {
      ...echo(request),
      txnTime: trade.txnTime,
      queryId: trade.queryId,
      txnAmt: String(trade.amount),
      currencyCode: '156',
      origRespCode: trade.origRespCode,
      origRespMsg: trade.origRespCode === '00' ? 'success' : 'pending',
      respCode: '00',
      respMsg: 'success',
    };
  }

  /** A refund as queryTrans tells it: origRespCode says how the refund ended. */
  private refundAsQueried(request: Record<string, string>, refund: RecordedUnionpayRefund): Record<string, string> {
    return {
      ...echo(request),
      txnType: '04',
      txnTime: refund.txnTime,
      queryId: refund.queryId,
      origQryId: refund.origQryId,
      txnAmt: String(refund.txnAmt),
      currencyCode: '156',
      origRespCode: refund.respCode,
      origRespMsg: refund.respCode === '00' ? 'success' : 'failed',
      respCode: '00',
      respMsg: 'success',
    };
  }

  private fileTransfer(request: Record<string, string>): Record<string, string> {
    const zip = this.bills.get(`${request.merId} ${request.settleDate}`);
    if (!zip) return { ...echo(request), respCode: '98', respMsg: 'file does not exist' };
    return {
      ...echo(request),
      fileName: `${request.merId}_${request.settleDate}.zip`,
      fileContent: fileContentOf(zip),
      respCode: '00',
      respMsg: 'success',
    };
  }

  private answer(res: ServerResponse, fields: Record<string, string>): void {
    res.writeHead(200, { 'content-type': 'text/plain;charset=UTF-8' });
    res.end(unionpayAnswer(signUnionpay(fields, this.signer)));
  }

  private refuse(
    res: ServerResponse,
    path: string,
    status: number,
    reason: string,
    request?: Record<string, string>,
  ): void {
    this.refused.push({ path, reason });
    // UnionPay answers a request it cannot trust with an unsigned error.
    res.writeHead(status, { 'content-type': 'text/plain;charset=UTF-8' });
    res.end(unionpayAnswer({ ...(request ? echo(request) : {}), respCode: '11', respMsg: reason }));
  }
}

/** Why a consumption request (txnType 01) is not well formed: a field missing or not as acp 5.1.0 writes it. */
function consumptionRefusal(
  endpoint: FakeUnionpayConsumption['endpoint'],
  r: Record<string, string>,
): string | undefined {
  if (r.txnType !== '01' || r.txnSubType !== '01' || r.bizType !== '000201') return 'not a consumption (01/01/000201)';
  if (!/^[0-9A-Za-z]{8,40}$/.test(r.orderId ?? '')) return 'orderId is not 8 to 40 letters or digits';
  if (!/^[1-9]\d{0,11}$/.test(r.txnAmt ?? '')) return 'txnAmt is not an amount in fen';
  if (r.currencyCode !== '156') return 'currencyCode is not 156';
  if (!/^\d{14}$/.test(r.txnTime ?? '')) return 'txnTime is not yyyyMMddHHmmss';
  if (r.payTimeout !== undefined && !/^\d{14}$/.test(r.payTimeout)) return 'payTimeout is not yyyyMMddHHmmss';
  if (!/^https?:\/\//.test(r.backUrl ?? '')) return 'backUrl is missing';
  if (endpoint === 'frontTrans' && !/^https?:\/\//.test(r.frontUrl ?? '')) return 'frontUrl is missing';
  if (!['07', '08'].includes(r.channelType)) return 'channelType is neither 07 nor 08';
  return undefined;
}

async function post(url: string, body: string): Promise<{ status: number; body: string } | { failure: string }> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' },
      body,
      signal: AbortSignal.timeout(10_000),
    });
    return { status: response.status, body: await response.text() };
  } catch (error) {
    return { failure: (error as Error).message };
  }
}

/** The request fields every answer repeats. */
function echo(request: Record<string, string>): Record<string, string> {
  const fields: Record<string, string> = {
    version: '5.1.0',
    encoding: request.encoding ?? 'UTF-8',
    signMethod: '01',
    accessType: request.accessType ?? '0',
  };
  for (const key of ['bizType', 'txnType', 'txnSubType', 'merId', 'orderId', 'txnTime']) {
    if (request[key] !== undefined) fields[key] = request[key];
  }
  return fields;
}
