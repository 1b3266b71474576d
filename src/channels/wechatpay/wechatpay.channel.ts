import {
  ChannelRefundResult,
  CreatePaymentRequest,
  CreatePaymentResult,
  PaymentMethod,
  RefundRequest,
  TradeCloseResult,
  TradeQueryResult,
  TradeRef,
} from '../../domain/channel-api';
import { Channel, RawDelivery, VerifiedNotification } from '../../domain/notification';
import { BillDate, BillDownload } from '../../domain/bill';
import { NotifyEndpoint, PaymentChannel, PlatformReply } from '../payment-channel';
import { maskV2Payer } from './v2/wechatpay-v2.endpoint';
import { WechatpayV2Calls } from './v2/wechatpay-v2.calls';
import { WechatpayAccount } from './wechatpay.config';
import { WechatpayClient } from './wechatpay.client';
import { WechatpayVerifier } from './wechatpay.verifier';
import { WechatpayApiCalls, WechatpayV3Calls } from './wechatpay-v3.calls';
import { maskIdentifier } from '../payer-masking';
import { WECHATPAY_PAYMENT_METHODS, wechatpayCreateRefusal } from './wechatpay.payments';

export interface WechatpayChannelOptions {
  refundNotifyUrl?: string;
}

/** out_trade_no in WeChat Pay's order APIs: 6 to 32 letters, digits, _ - | or *. */
export const WECHATPAY_OUT_TRADE_NO = /^[0-9A-Za-z_\-|*]{6,32}$/;

/**
 * WeChat Pay behind the PaymentChannel port: APIv3 notifications at /notify/wechatpay (APIv2's at
 * their own endpoint), and each account's API calls through the one API it can use (apiOf).
 */
export class WechatpayChannel implements PaymentChannel {
  readonly channel = Channel.Wechatpay;
  private readonly v3: WechatpayV3Calls;
  readonly notifyPath = 'wechatpay';
  readonly disabledHint =
    'set WECHATPAY_MCHID, WECHATPAY_APIV3_KEY and WECHATPAY_PUBLIC_KEY_ID + WECHATPAY_PUBLIC_KEY_PATH or WECHATPAY_PLATFORM_CERT_PATHS (or PAYMENT_ACCOUNTS_FILE) to enable';

  constructor(
    private readonly accounts: WechatpayAccount[],
    private readonly verifier: WechatpayVerifier,
    client: WechatpayClient,
    options: WechatpayChannelOptions = {},
    /** APIv2's XML notifications (POST /notify/wechatpay-v2), when an account has an APIv2 key. */
    readonly otherNotifyEndpoints: readonly NotifyEndpoint[] = [],
    /** The API calls of accounts with only an APIv2 key; an account with APIv3 credentials uses APIv3. */
    private readonly v2?: WechatpayV2Calls,
  ) {
    this.v3 = new WechatpayV3Calls(accounts, client, options);
  }

  get enabled(): boolean {
    return this.verifier.enabled;
  }

  verify(delivery: RawDelivery): VerifiedNotification {
    return this.verifier.verify(delivery);
  }

  successReply(): PlatformReply {
    return { status: 204, headers: {} };
  }

  failureReply(status: number, message: string): PlatformReply {
    return { status, headers: {}, body: { code: 'FAIL', message } };
  }

  /** APIv3: the payer (openid) travels encrypted in the resource. APIv2's XML carries it in the clear. */
  maskPayer(rawBody: Buffer): Buffer {
    return maskV2Payer(rawBody);
  }

  /** APIv3's resource, decrypted; APIv2's XML has nothing encrypted (undefined). */
  decryptedContent(delivery: RawDelivery, { masked }: { masked: boolean }): Record<string, unknown> | undefined {
    if (!this.hasEncryptedContent(delivery.body)) return undefined;
    const resource = this.verifier.decryptKeptResource(delivery);
    return masked ? maskResourcePayer(resource) : resource;
  }

  /** APIv3's JSON envelope carries the resource encrypted; APIv2's XML does not. */
  hasEncryptedContent(rawBody: Buffer): boolean {
    return rawBody.toString('utf8').trimStart().startsWith('{');
  }

  orderNoRefusal(orderNo: string): string | undefined {
    if (WECHATPAY_OUT_TRADE_NO.test(orderNo)) return undefined;
    return 'WeChat Pay takes an orderNo (out_trade_no) of 6 to 32 letters, digits, _ - | or *';
  }

  accountIds(): string[] {
    return this.accounts.map((a) => a.mchid);
  }

  apiAccounts(): string[] {
    return [...this.v3.mchids(), ...(this.v2?.mchids() ?? [])];
  }

  keyIds(): string[] {
    return this.verifier.keyIds();
  }

  apiUnavailableReason(merchantId: string | undefined): string | undefined {
    return this.apiOf(merchantId).unavailableReason(merchantId);
  }

  subMerchantIds(merchantId?: string): string[] {
    return this.accounts
      .filter((a) => merchantId === undefined || a.mchid === merchantId)
      .flatMap((a) => a.subMchids ?? []);
  }

  refund(request: RefundRequest): Promise<ChannelRefundResult> {
    return this.apiOf(request.merchantId).refund(request);
  }

  queryRefund(request: RefundRequest): Promise<ChannelRefundResult> {
    return this.apiOf(request.merchantId).queryRefund(request);
  }

  queryTrade(trade: TradeRef): Promise<TradeQueryResult> {
    return this.apiOf(trade.merchantId).queryTrade(trade);
  }

  closeTrade(trade: TradeRef): Promise<TradeCloseResult> {
    return this.apiOf(trade.merchantId).closeTrade(trade);
  }

  downloadBill(merchantId: string, date: BillDate, subMerchantId?: string): Promise<BillDownload> {
    return this.apiOf(merchantId).downloadBill(merchantId, date, subMerchantId);
  }

  readonly paymentMethods: readonly PaymentMethod[] = WECHATPAY_PAYMENT_METHODS.map(({ name, needs, summary }) => ({
    name,
    needs,
    summary,
  }));

  createPaymentRefusal(request: CreatePaymentRequest): string | undefined {
    return wechatpayCreateRefusal(
      this.accounts.find((a) => a.mchid === request.merchantId),
      request,
    );
  }

  createPayment(request: CreatePaymentRequest): Promise<CreatePaymentResult> {
    return this.apiOf(request.merchantId).createPayment(request);
  }

  /** The one place that chooses an account's API: APIv2's XML for an account with only an APIv2 key, else APIv3. */
  private apiOf(merchantId: string | undefined): WechatpayApiCalls {
    return this.v2?.handles(merchantId) ? this.v2 : this.v3;
  }
}

/** Who paid and where the money went back: the payer's openids, the account a refund reached, the device. */
const RESOURCE_PAYER_FIELDS = new Set(['openid', 'sp_openid', 'sub_openid', 'user_received_account', 'device_id']);

/** A decrypted resource with the payer's identifiers masked, at any depth (payer.openid, scene_info.device_id). */
function maskResourcePayer(value: Record<string, unknown>): Record<string, unknown> {
  const masked: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (typeof field === 'string' && RESOURCE_PAYER_FIELDS.has(key)) masked[key] = maskIdentifier(field);
    else if (Array.isArray(field))
      masked[key] = field.map((item: unknown) => (isObject(item) ? maskResourcePayer(item) : item));
    else masked[key] = isObject(field) ? maskResourcePayer(field) : field;
  }
  return masked;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
