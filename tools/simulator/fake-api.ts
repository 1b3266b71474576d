/**
 * What the fake platform's channel pieces share: the behaviours a test scripts, what the fake records, the trades
 * and bills it keeps, and the ledger through which a channel's API reaches them. Money is integer fen throughout.
 */
import { randomInt, KeyObject } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';

export type RefundBehaviour =
  | 'success' // refund accepted and done: WeChat status SUCCESS; Alipay code 10000 fund_change Y
  | 'processing' // WeChat only: status PROCESSING (Alipay: treat like success)
  | 'unconfirmed' // Alipay only: code 10000 with fund_change N, and the refund NOT done (its queries find no refund_status)
  | 'processing-lost' // WeChat only: status PROCESSING, and the refund NOT kept (its queries find RESOURCE_NOT_EXISTS)
  | 'timeout' // hold the request open without answering for `hangMs` then destroy the socket; the refund is NOT done
  | 'answer-lost' // the refund IS done (SUCCESS), but its answer never arrives: held for `hangMs`, then the socket destroyed
  | 'server-error' // WeChat: HTTP 500 SYSTEM_ERROR; Alipay: code 20000 sub_code aop.ACQ.SYSTEM_ERROR
  | { reject: string; message?: string }; // WeChat: HTTP 400 {code: reject}; Alipay: code 40004 sub_code=reject

/** How a refund query is answered; 'answer' tells what the fake knows (the default when nothing is scripted). */
export type QueryBehaviour =
  | 'answer' // WeChat: 200 with the current status, or 404 RESOURCE_NOT_EXISTS; Alipay: code 10000, with or without refund_status
  | 'timeout' // hold the request open without answering for `hangMs` then destroy the socket
  | 'server-error' // WeChat: HTTP 500 SYSTEM_ERROR; Alipay: code 20000 sub_code aop.ACQ.SYSTEM_ERROR
  | { reject: string; message?: string }; // WeChat: HTTP 400 {code: reject}; Alipay: code 40004 sub_code=reject

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
 * How a create call (WeChat Pay's prepay, Alipay's precreate/create) is answered; 'answer' creates the trade (or
 * finds the same one) and answers it.
 */
export type CreateBehaviour =
  | 'answer'
  | 'timeout' // hold the request open for `hangMs` then destroy the socket; no trade is created
  | 'answer-lost' // the trade IS created, but its answer never arrives: held for `hangMs`, then the socket destroyed
  | 'server-error' // WeChat: HTTP 500 SYSTEM_ERROR; Alipay: code 20000 sub_code aop.ACQ.SYSTEM_ERROR
  | { reject: string; message?: string }; // WeChat: HTTP 400 {code: reject}; Alipay: code 40004 sub_code=reject

/** A create call that passed the signature checks, with what the platform received. */
export interface RecordedCreateCall {
  channel: FakeChannel;
  outTradeNo: string;
  /** The account whose key signed: WeChat mchid (sp_mchid) / Alipay app_id. */
  merchantId: string;
  subMerchantId?: string;
  /** What the request asked for: WeChat's path (jsapi, native, h5, app) or v2 trade_type; Alipay's method. */
  tradeType: string;
  /** Fen. */
  amount: number;
  currency: string;
  notifyUrl: string;
  /** The expiry as the request wrote it (time_expire, timeout_express ...). */
  expiry: string;
  /** The request's fields as received. */
  request: Record<string, unknown>;
  /** 'created' (a new trade, or the same one for the same terms), 'timeout', 'answer-lost', 'server-error', 'reject:<code>'. */
  answered: string;
}

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
  /** WeChat partner mode only: the sub_mchid whose bill was asked for. */
  subMerchantId?: string;
  date: string;
  /** What was answered: READY, NOT_READY, or DOWNLOADED for the file itself. */
  answered: 'READY' | 'NOT_READY' | 'DOWNLOADED';
}

/** A trade at the channel, as a test sets it up. */
export interface FakeTrade {
  channel: FakeChannel;
  outTradeNo: string;
  /** The account that owns the trade: WeChat mchid / Alipay app_id. */
  merchantId: string;
  /** WeChat only: the appid of the payment. */
  appid?: string;
  /** WeChat partner mode only: the sub-merchant (sub_mchid) of the provider merchantId that the trade is for. */
  subMerchantId?: string;
  /** transaction_id / trade_no; WeChat has none until paid. */
  transactionId?: string;
  /** Fen. */
  amount: number;
  currency: string;
  state: 'PAID' | 'UNPAID' | 'CLOSED';
  paidAt?: Date;
  /** Created by a create call: its terms (a fingerprint), where its notifications go, and what was asked. */
  created?: { terms: string; notifyUrl: string; tradeType: string };
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
  /** WeChat partner mode: the sub_mchid the trade is for. */
  subMerchantId?: string;
  currency?: string;
  answersAnyAccount?: boolean;
}

export interface RecordedTradeCall {
  channel: FakeChannel;
  request: 'QUERY' | 'CLOSE';
  outTradeNo: string;
  /** The account that asked: the Authorization's mchid / the app_id. */
  merchantId: string;
  /** WeChat partner paths only: the sub_mchid asked about. */
  subMerchantId?: string;
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
  /** WeChat partner mode only: the sub_mchid the refund was asked for. */
  subMerchantId?: string;
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
  /** WeChat partner mode only: the sub_mchid the query named. */
  subMerchantId?: string;
  /**
   * What was answered. WeChat: the status reported ('SUCCESS', 'PROCESSING', 'CLOSED', 'ABNORMAL') or
   * 'RESOURCE_NOT_EXISTS'; Alipay: 'REFUND_SUCCESS' or 'NO_REFUND' (code 10000 without refund_status);
   * either: 'timeout', 'server-error' or 'reject:<code>'.
   */
  answered: string;
}

/** How an answer is tampered with: a forged signature, none at all, or neither. */
export type Tampering = 'bad-signature' | 'unsigned' | undefined;

/** A request turned away before any refund logic: bad signature or malformed. */
export class Refusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export function base64(text: string | undefined): Buffer {
  return Buffer.from(text ?? '', 'base64');
}

export function randomDigits(length: number): string {
  return Array.from({ length }, () => randomInt(10)).join('');
}

export function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

export function isPositiveInteger(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) > 0;
}

export function parseJsonObject(text: string | undefined, code: string): Record<string, unknown> {
  try {
    const json: unknown = JSON.parse(text ?? '');
    if (typeof json === 'object' && json !== null && !Array.isArray(json)) return json as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new Refusal(code, 'not a JSON object');
}

/** A bill file offered for download under a token. */
export interface BillFile {
  bytes?: Buffer;
  path?: string;
  call: Omit<RecordedBillCall, 'answered'>;
}

/** Answers a trade query or close once the scripted behaviour allows it. */
export type TradeAnswer = (trade: FakeTrade | undefined, tampering: Tampering, serverError: boolean) => void;

/** What the platform keeps for every channel: scripts, records, trades, bills, and the hanging requests. */
export interface FakeLedger {
  readonly url: string;
  /** Signs forged answers: a real RSA key that no account knows. */
  readonly forger: KeyObject;
  nextRefundBehaviour(refundNo: string): RefundBehaviour;
  nextQueryBehaviour(refundNo: string): QueryBehaviour;
  recordRefundCall(call: Omit<RecordedRefundCall, 'behaviour'>, behaviour: RefundBehaviour): void;
  recordRefundQuery(query: Omit<RecordedRefundQuery, 'answered'>, answered: string | { reject: string }): void;
  refuse(path: string, reason: string): void;
  /** Answers nothing; after hangMs the socket is destroyed, as a client sees a platform that never answers. */
  hang(res: ServerResponse): void;
  /** Answers a trade call as its script says, with the trade as the asking account sees it. */
  answerTradeCall(res: ServerResponse, call: TradeCallArrival, answer: TradeAnswer): void;
  nextCreateBehaviour(outTradeNo: string): CreateBehaviour;
  recordCreateCall(call: RecordedCreateCall): void;
  /**
   * The trade a create call asks for: created UNPAID with `terms` when new; the same trade when its terms are these
   * (a retry); undefined when the order number has a trade with other terms, which the platform refuses.
   */
  createTrade(params: TradeParams, created: NonNullable<FakeTrade['created']>): FakeTrade | undefined;
  bill(channel: FakeChannel, merchantId: string, date: string): FakeBill | undefined;
  recordBillCall(call: RecordedBillCall): void;
  /** Keeps the file for download; answers the token that names it. */
  offerBillFile(file: BillFile): string;
  billFile(token: string): BillFile | undefined;
  trade(channel: FakeChannel, outTradeNo: string): FakeTrade | undefined;
  payTrade(params: TradeParams & { transactionId: string; paidAt?: Date }): FakeTrade;
}

/** One channel's piece of the fake platform. */
export interface FakeChannelApi {
  readonly channel: FakeChannel;
  /** The account a trade belongs to when the test names none: the first configured one. */
  readonly defaultAccount: string;
  /** Answers the request and says true when the path is this channel's. */
  route(req: IncomingMessage, res: ServerResponse, body: string, path: string): boolean;
  /** The transaction id an unpaid trade has at this channel, if any. */
  unpaidTransactionId(): string | undefined;
  /** What a trade query or close answered, in the channel's words, for RecordedTradeCall.answered. */
  describeTradeAnswer(request: 'QUERY' | 'CLOSE', trade: FakeTrade): string;
  /** The refunds this channel has made of a transaction (money that left), whatever their answers became. */
  refundsOf(transactionId: string): number;
}
