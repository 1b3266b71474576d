/**
 * A local fake of WeChat Pay's APIv2 (XML over HTTPS) for one merchant: unifiedorder, orderquery, closeorder,
 * secapi/pay/refund (only with the merchant's client certificate), refundquery and downloadbill.
 * Every request's sign is checked with the merchant's APIv2 key, every answer is signed with it.
 */
import { randomBytes } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, Server } from 'node:https';
import { AddressInfo } from 'node:net';
import { TLSSocket } from 'node:tls';
import { readSignType, signV2, v2SignatureHolds } from '../../../../src/channels/wechatpay/v2/wechatpay-v2.sign';
import { readV2Xml, writeV2Xml } from '../../../../src/channels/wechatpay/v2/wechatpay-v2.xml';
import { beijingCompact } from './v2-notifications';
import { V2TlsMaterial } from './v2-tls';

export interface FakeV2Merchant {
  mchid: string;
  appid: string;
  apiV2Key: string;
}

export interface FakeV2Trade {
  transactionId: string;
  totalFee: number;
  state: 'SUCCESS' | 'NOTPAY' | 'CLOSED' | 'REFUND';
  paidAt?: Date;
  /** Created by unifiedorder: its terms (the request without nonce and sign); the same terms again are the same trade. */
  terms?: string;
}

export interface FakeV2Refund {
  refundId: string;
  transactionId: string;
  refundFee: number;
  totalFee: number;
  status: 'PROCESSING' | 'SUCCESS' | 'REFUNDCLOSE' | 'CHANGE';
}

export interface FakeV2Call {
  path: string;
  fields: Record<string, string>;
  /** The client certificate the request came with was the merchant's. */
  merchantCertificate: boolean;
}

export class FakeWechatpayV2Api {
  /** Requests whose sign (and, for secapi/, client certificate) held, in order. */
  readonly calls: FakeV2Call[] = [];
  readonly refused: Array<{ path: string; reason: string }> = [];
  readonly trades = new Map<string, FakeV2Trade>();
  readonly refunds = new Map<string, FakeV2Refund>();
  /** Bills by yyyyMMdd: the text downloadbill answers. */
  readonly bills = new Map<string, string>();
  /** Answers signed with another key, to see them refused. */
  forgeAnswers = false;
  /** How many of the next refunds are made (SUCCESS) while their answers are lost: the connection is dropped. */
  refundAnswersToLose = 0;

  private constructor(
    private readonly merchant: FakeV2Merchant,
    private readonly tls: V2TlsMaterial,
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(merchant: FakeV2Merchant, tls: V2TlsMaterial): Promise<FakeWechatpayV2Api> {
    // The client certificate is asked for on every connection and checked on secapi/ paths only, as WeChat does.
    const server = createServer({
      key: tls.serverKeyPem,
      cert: tls.serverCertPem,
      requestCert: true,
      rejectUnauthorized: false,
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const fake = new FakeWechatpayV2Api(
      merchant,
      tls,
      server,
      `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    );
    server.on('request', (req: IncomingMessage, res: ServerResponse) => void fake.handle(req, res));
    return fake;
  }

  callsTo(path: string): FakeV2Call[] {
    return this.calls.filter((c) => c.path === path);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = (req.url ?? '').split('?')[0];
    const refuse = (reason: string) => {
      this.refused.push({ path, reason });
      this.reply(res, { return_code: 'FAIL', return_msg: reason }, false);
    };
    let fields: Record<string, string>;
    try {
      fields = readV2Xml(Buffer.concat(chunks), 'xml', 'request');
    } catch {
      return refuse('XML_FORMAT_ERROR');
    }
    const signType = readSignType(fields.sign_type);
    if (!signType || !v2SignatureHolds(fields, this.merchant.apiV2Key, signType)) return refuse('SIGNERROR');
    if (fields.mch_id !== this.merchant.mchid || fields.appid !== this.merchant.appid)
      return refuse('MCHID_APPID_MISMATCH');
    const peer = (req.socket as TLSSocket).getPeerCertificate();
    const merchantCertificate = peer?.fingerprint256 === this.tls.clientFingerprint256;
    if (path.startsWith('/secapi/') && !merchantCertificate)
      return refuse('CERT_REQUIRED: no merchant client certificate');
    this.calls.push({ path, fields, merchantCertificate });
    const answer = this.answer(path, fields);
    if (path === '/secapi/pay/refund' && this.refundAnswersToLose > 0) return this.loseRefundAnswer(res, fields);
    if (typeof answer === 'string') {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(answer);
      return;
    }
    this.reply(res, answer, true);
  }

  private answer(path: string, f: Record<string, string>): Record<string, string> | string {
    switch (path) {
      case '/pay/unifiedorder':
        return this.unifiedOrder(f);
      case '/pay/orderquery':
        return this.orderQuery(f.out_trade_no);
      case '/pay/closeorder':
        return this.closeOrder(f.out_trade_no);
      case '/secapi/pay/refund':
        return this.refund(f);
      case '/pay/refundquery':
        return this.refundQuery(f.out_refund_no);
      case '/pay/downloadbill':
        return this.bills.get(f.bill_date) ?? { return_code: 'FAIL', return_msg: 'No Bill Exist', error_code: '20002' };
      default:
        return { return_code: 'FAIL', return_msg: `no API at ${path}` };
    }
  }

  /** A trade created NOTPAY (the same one for the same terms; another order's terms are OUT_TRADE_NO_USED). */
  private unifiedOrder(f: Record<string, string>): Record<string, string> {
    const required = ['body', 'out_trade_no', 'total_fee', 'spbill_create_ip', 'notify_url', 'trade_type'];
    const missing = required.filter((name) => !f[name]);
    if (f.trade_type === 'JSAPI' && !f.openid && !f.sub_openid) missing.push('openid');
    if (missing.length > 0) {
      return this.result({
        result_code: 'FAIL',
        err_code: 'PARAM_ERROR',
        err_code_des: `missing ${missing.join(', ')}`,
      });
    }
    const { nonce_str: _nonce, sign: _sign, ...terms } = f;
    const fingerprint = JSON.stringify(Object.entries(terms).sort(([a], [b]) => a.localeCompare(b)));
    const known = this.trades.get(f.out_trade_no);
    if (known && known.terms !== fingerprint) {
      return this.result({ result_code: 'FAIL', err_code: 'OUT_TRADE_NO_USED', err_code_des: '商户订单号重复' });
    }
    if (known && known.state !== 'NOTPAY') {
      return this.result({ result_code: 'FAIL', err_code: known.state === 'CLOSED' ? 'ORDERCLOSED' : 'ORDERPAID' });
    }
    if (!known) {
      this.trades.set(f.out_trade_no, {
        transactionId: '',
        totalFee: Number(f.total_fee),
        state: 'NOTPAY',
        terms: fingerprint,
      });
    }
    const prepayId = `wx${randomBytes(14).toString('hex')}`;
    return this.result({
      result_code: 'SUCCESS',
      trade_type: f.trade_type,
      prepay_id: prepayId,
      ...(f.trade_type === 'NATIVE'
        ? { code_url: `weixin://wxpay/bizpayurl?pr=${randomBytes(4).toString('hex')}` }
        : {}),
      ...(f.trade_type === 'MWEB'
        ? { mweb_url: `https://wx.tenpay.com/cgi-bin/mmpayweb-bin/checkmweb?prepay_id=${prepayId}` }
        : {}),
    });
  }

  private orderQuery(orderNo: string): Record<string, string> {
    const trade = this.trades.get(orderNo);
    if (!trade)
      return this.result({ result_code: 'FAIL', err_code: 'ORDERNOTEXIST', err_code_des: 'order does not exist' });
    const paid = trade.state === 'SUCCESS' || trade.state === 'REFUND';
    return this.result({
      result_code: 'SUCCESS',
      out_trade_no: orderNo,
      trade_state: trade.state,
      ...(paid
        ? {
            transaction_id: trade.transactionId,
            total_fee: String(trade.totalFee),
            fee_type: 'CNY',
            time_end: beijingCompact(trade.paidAt ?? new Date()),
            openid: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o',
            trade_type: 'JSAPI',
          }
        : {}),
    });
  }

  private closeOrder(orderNo: string): Record<string, string> {
    const trade = this.trades.get(orderNo);
    if (!trade) return this.result({ result_code: 'FAIL', err_code: 'ORDERNOTEXIST' });
    if (trade.state === 'SUCCESS' || trade.state === 'REFUND')
      return this.result({ result_code: 'FAIL', err_code: 'ORDERPAID' });
    if (trade.state === 'CLOSED') return this.result({ result_code: 'FAIL', err_code: 'ORDERCLOSED' });
    trade.state = 'CLOSED';
    return this.result({ result_code: 'SUCCESS' });
  }

  private refund(f: Record<string, string>): Record<string, string> {
    const known = this.refunds.get(f.out_refund_no);
    const refund = known ?? {
      refundId: `50000${randomBytes(12).toString('hex').replace(/\D/g, '').padEnd(24, '0').slice(0, 24)}`,
      transactionId: f.transaction_id,
      refundFee: Number(f.refund_fee),
      totalFee: Number(f.total_fee),
      status: 'PROCESSING' as const,
    };
    this.refunds.set(f.out_refund_no, refund);
    return this.result({
      result_code: 'SUCCESS',
      transaction_id: refund.transactionId,
      out_refund_no: f.out_refund_no,
      refund_id: refund.refundId,
      refund_fee: String(refund.refundFee),
      total_fee: String(refund.totalFee),
    });
  }

  private loseRefundAnswer(res: ServerResponse, fields: Record<string, string>): void {
    this.refundAnswersToLose -= 1;
    this.refunds.get(fields.out_refund_no)!.status = 'SUCCESS';
    res.destroy();
  }

  /** The refunds made of a transaction: money that left, whatever the service heard. */
  refundsOf(transactionId: string): number {
    return [...this.refunds.values()].filter((r) => r.transactionId === transactionId).length;
  }

  private refundQuery(refundNo: string): Record<string, string> {
    const refund = this.refunds.get(refundNo);
    if (!refund) return this.result({ result_code: 'FAIL', err_code: 'REFUNDNOTEXIST' });
    return this.result({
      result_code: 'SUCCESS',
      transaction_id: refund.transactionId,
      refund_count: '1',
      out_refund_no_0: refundNo,
      refund_id_0: refund.refundId,
      refund_fee_0: String(refund.refundFee),
      refund_status_0: refund.status,
    });
  }

  /** A business answer: return_code SUCCESS, the merchant's ids, a nonce; signed when sent. */
  private result(fields: Record<string, string>): Record<string, string> {
    return {
      return_code: 'SUCCESS',
      return_msg: 'OK',
      appid: this.merchant.appid,
      mch_id: this.merchant.mchid,
      nonce_str: randomBytes(8).toString('hex'),
      ...fields,
    };
  }

  private reply(res: ServerResponse, fields: Record<string, string>, sign: boolean): void {
    const key = this.forgeAnswers ? 'F'.repeat(32) : this.merchant.apiV2Key;
    const body = sign && fields.return_code === 'SUCCESS' ? { ...fields, sign: signV2(fields, key, 'MD5') } : fields;
    res.writeHead(200, { 'content-type': 'text/xml; charset=utf-8' }).end(writeV2Xml(body));
  }
}
