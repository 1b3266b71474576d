/**
 * What the simulator asks of one channel: its key set, its signed notifications and how it reads the service's
 * answers, its options to the commands, and its side of `simulate platform`. Each channel implements it in its own
 * folder (wechatpay/, alipay/, unionpay/) and is registered by one line in channels.ts; the commands and the shared
 * files never name a channel. Nothing here imports a channel or the registry.
 */
import type { ParseArgsConfig } from 'node:util';
import { formatMinor, type HttpAnswer } from './cli';
import type { DevKeys } from './dev-keys';
import type { FakePlatform, FakePlatformOptions } from './fake-platform';

/** A channel's name as the simulator's options and the service's notify routes write it (`--channel wechatpay`). */
export type SimulatedChannel = string;

export interface Notification {
  channel: SimulatedChannel;
  /** POST /notify/<notifyPath>: the channel's own endpoint unless another dialect has its own (wechatpay-v2). */
  notifyPath?: string;
  headers: Record<string, string>;
  body: string;
  /** One line saying what it is, for the output. */
  summary: string;
}

export interface PaymentParams {
  orderNo: string;
  transactionId: string;
  /** Minor units (fen). */
  amount: number;
  /** The channel's status of the payment (its paying one by default). */
  status?: string;
  /** WeChat partner key set: the sub_mchid paid (its first by default). */
  subMchid?: string;
  /** UnionPay: the consumption's txnTime (yyyyMMddHHmmss, Beijing; now by default). */
  txnTime?: string;
}

export interface RefundNoticeParams {
  orderNo: string;
  transactionId: string;
  refundNo: string;
  /** The channel's id of the refund (WeChat's refund_id, UnionPay's queryId). */
  channelRefundId: string;
  /** Minor units: refunded, and the payment's total. */
  amount: number;
  total: number;
  /** The refund's outcome: SUCCESS, CLOSED or ABNORMAL. */
  status: string;
  /** WeChat partner key set: the sub_mchid the refund was for. */
  subMchid?: string;
}

/** How the channel reads the service's answer to a notification: acked, or refused with what it said. */
export interface AckReading {
  acked: boolean;
  said: string;
}

/** The options a channel adds to a command, parsed with every channel's (parseArgs is strict). */
export type ChannelOptions = NonNullable<ParseArgsConfig['options']>;
/** The parsed values of a command's options, the channels' included. */
export type OptionValues = Record<string, string | boolean | undefined>;

/** A channel's part of a command: its options, their usage, and what it says when they are given for another channel. */
export interface ChannelCommandPart {
  options?: ChannelOptions;
  /** The options in the command's usage line, e.g. `[--dialect v3|v2]`. */
  usage?: string;
  /**
   * Throws a UsageError when the values use this channel's options wrongly: for the command's `channel` when it
   * names one (another channel's, perhaps), else as a command for every channel (init).
   */
  check?(values: OptionValues, channel?: SimulatedChannel): void;
}

/** What `simulate pay` learns of the order before it signs the payment, for the channel to use. */
export interface PayContext {
  keys: DevKeys;
  values: OptionValues;
  /** The time the service registered the order as sent to its channel (channelOrderTime), if any. */
  orderChannelTime: () => Promise<string | undefined>;
}

/** What the channel adds to a payment before it is signed, and how, when one of its dialects signs otherwise. */
export interface PayPreparation {
  params?: Partial<PaymentParams>;
  sign?: (payment: PaymentParams) => Notification;
}

/** The channel's key set: made by `simulate init`, and the service's and the platform's view of it. */
export interface ChannelKeySet {
  /** `init`'s options of this channel. */
  init?: ChannelCommandPart;
  /** Writes the channel's keys into the key set's folder; answers its part of keys.json (kept under its name), if any. */
  create(dir: string, values: OptionValues): Promise<object | undefined>;
  /** The service's variables for this channel; its APIs on the simulator's platform server (`platformPort`). */
  serviceEnvironment(keys: DevKeys, ports: { platformPort: number; servicePort?: number }): Record<string, string>;
  /** The lines `init` prints about the channel's keys. */
  describe(keys: DevKeys): string[];
  /** The shared fake platform's accounts of this channel (FakePlatform serves WeChat Pay and Alipay). */
  fakePlatformAccounts?(keys: DevKeys): Partial<FakePlatformOptions>;
}

/** A trade `simulate pay` tells the platform server about (POST /simulator/trades). */
export interface ToldTrade {
  orderNo?: unknown;
  transactionId?: unknown;
  amount?: unknown;
  subMchid?: unknown;
  txnTime?: unknown;
}

/** The channel's part of `simulate platform`: its fake API, and what the /simulator/ endpoints ask of it. */
export interface ChannelPlatform {
  /** Where it listens, for the start line, e.g. `WeChat Pay API http://127.0.0.1:3100`. */
  readonly description: string;
  /** A payment `simulate pay` made: the channel's queries then answer it paid. False when the trade is malformed. */
  recordTrade(trade: ToldTrade): boolean;
  /** The trade the service created here for the order (its create call), to pay; undefined when none. */
  describeCreated(orderNo: string): object | undefined;
  /** What `simulate refund-notice` needs of a refund the service asked for here; undefined when none. */
  describeRefund(refundNo: string): object | undefined;
  /** The platform finished the refund with `status`: its queries report it from now on. */
  settle?(refundNo: string, status: 'SUCCESS' | 'CLOSED' | 'ABNORMAL'): void;
  /** Lines for the calls it received since it was last asked (the shared fake platform's are printed for it). */
  newLogLines?(): string[];
  close?(): Promise<void>;
}

export interface ChannelSimulator {
  /** `--channel <name>`, its notify route /notify/<name>, and its part of keys.json. */
  readonly name: SimulatedChannel;
  /** As a person reads it: `WeChat Pay`. */
  readonly title: string;
  readonly keySet: ChannelKeySet;
  /** The status a simulated payment has unless --status says otherwise, and the statuses that pay. */
  readonly payingStatus: string;
  readonly payingStatuses: readonly string[];
  /** What the buyer does with what the service gave it, per trade type the platform was asked for. */
  readonly buyerActions: Readonly<Record<string, string>>;
  /** A transaction id shaped like the channel's. */
  newTransactionId(): string;
  paymentNotification(keys: DevKeys, p: PaymentParams): Notification;
  refundNotification(keys: DevKeys, p: RefundNoticeParams, values: OptionValues): Notification;
  readAck(answer: HttpAnswer): AckReading;
  /** `pay`'s options of this channel, and what they add to the payment. */
  pay?: ChannelCommandPart & { prepare?(context: PayContext): Promise<PayPreparation> };
  /** `refund-notice`'s options of this channel. */
  refundNotice?: ChannelCommandPart;
  /** Why the channel never notifies a refund with this outcome, if it does not. */
  refundStatusRefusal?(status: string): string | undefined;
  /** The channelOrderTime an order for this channel is registered with when none is given. */
  defaultChannelOrderTime?(): string;
  /**
   * The non-form buyer parameters (an SDK's order string) the buyer takes to the platform itself, as a request to
   * the platform server; undefined when the channel has none.
   */
  buyerRequest?(keys: DevKeys, params: Record<string, string>): { url: string; body: string } | undefined;
  /** The channel's side of `simulate platform`, on the shared fake platform or a server of its own. */
  startPlatform(context: { keys: DevKeys; port: number; fake: FakePlatform }): Promise<ChannelPlatform | undefined>;
}

/** The refusal every channel but WeChat Pay answers with: X-Fail-Reason, else the body. */
export function failReason(answer: HttpAnswer): string {
  return answer.headers.get('x-fail-reason') ?? answer.body;
}

/** A form post's headers, as Alipay and UnionPay send their notifications. */
export function formDelivery(body: string): { headers: Record<string, string>; body: string } {
  return { headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' }, body };
}

/** `N CNY` of a payment, as every channel's summary line says it. */
export function paymentSummary(p: Pick<PaymentParams, 'orderNo' | 'transactionId' | 'amount'>): string {
  return `${p.orderNo}  transaction ${p.transactionId}  ${formatMinor(p.amount)} CNY`;
}

export function refundSummary(p: RefundNoticeParams): string {
  return `refund ${p.refundNo}  ${formatMinor(p.amount)} CNY of ${p.orderNo} (transaction ${p.transactionId})`;
}
