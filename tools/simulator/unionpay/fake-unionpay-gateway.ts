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
  endpoint: 'backTrans' | 'queryTrans' | 'fileTransfer';
  merId: string;
  fields: Record<string, string>;
}

export const FILE_TRANSFER_PATH = '/unionpay/fileTransfer';

export class FakeUnionpayGateway {
  /** The refunds UnionPay took (money that leaves), whatever became of their answers; not the duplicates it refused. */
  readonly refunds: RecordedUnionpayRefund[] = [];
  readonly calls: RecordedUnionpayCall[] = [];
  readonly refused: Array<{ path: string; reason: string }> = [];
  /** The respCode the next refunds are answered with ('00' when none is scripted). */
  readonly refundRespCodes: string[] = [];
  /** How many of the next refunds are taken (made) while their answers are lost: the connection is dropped. */
  refundAnswersToLose = 0;
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

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', this.url).pathname;
      const fields = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      const endpoint =
        path === '/gateway/api/backTransReq.do'
          ? 'backTrans'
          : path === '/gateway/api/queryTrans.do'
            ? 'queryTrans'
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
      const answer = this[endpoint](fields);
      if (endpoint === 'backTrans' && answer.respCode === '00' && this.refundAnswersToLose > 0) {
        this.refundAnswersToLose -= 1;
        return res.destroy();
      }
      this.answer(res, answer);
    });
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
