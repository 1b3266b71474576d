import { CreatePaymentRequest, CreatePaymentResult, PaymentMethod } from '../../domain/channel-api';
import { isFailure, UnionpayClient } from './unionpay.client';
import { formatTxnTime } from './unionpay.message';
import { SUCCESS_RESP_CODES, TxnType } from './unionpay.verifier';

/**
 * The ways a UnionPay buyer pays: a consumption form (frontTransReq) the buyer's browser posts to
 * UnionPay's gateway, from a PC (channelType 07) or a phone (08), built and signed here; or, for the
 * app, the tn of an appTransReq this service sends, which the UnionPay SDK's startPay takes.
 */
const METHOD_SPECS = {
  PAGE: {
    channelType: '07',
    needs: ['returnUrl'],
    summary:
      'PC web (frontTransReq, channelType 07): the signed fields of a form the browser posts to UnionPay; payer.returnUrl is its frontUrl',
  },
  WAP: {
    channelType: '08',
    needs: ['returnUrl'],
    summary:
      'mobile web (frontTransReq, channelType 08): the signed fields of a form the browser posts to UnionPay; payer.returnUrl is its frontUrl',
  },
  APP: {
    channelType: '08',
    needs: [],
    summary: "the app (appTransReq): the tn UnionPay's SDK startPay takes",
  },
} as const satisfies Record<string, Omit<PaymentMethod, 'name'> & { channelType: string }>;
type UnionpayPaymentMethod = keyof typeof METHOD_SPECS;

export const UNIONPAY_PAYMENT_METHODS: readonly PaymentMethod[] = Object.entries(METHOD_SPECS).map(
  ([name, { needs, summary }]) => ({ name, needs, summary }),
);

/** ISO 4217 numeric codes of the currencies UnionPay takes here. */
const CURRENCY_CODES: Record<string, string> = { CNY: '156' };
/** "Unknown, ask again": the gateway cannot tell yet how the request ended. */
const PENDING_RESP_CODES = new Set(['03', '04', '05']);
/** The buyer's IP, as customerIp takes it. */
const IP_ADDRESS = /^[0-9A-Fa-f.:]{2,39}$/;

/** Why UnionPay would not take this request as it is, before anything is signed or sent. */
export function unionpayPaymentRefusal(request: CreatePaymentRequest): string | undefined {
  if (!CURRENCY_CODES[request.currency]) return `UnionPay takes CNY only, not ${request.currency}`;
  if (request.payer.returnUrl !== undefined && !/^https?:\/\/\S+$/.test(request.payer.returnUrl)) {
    return 'payer.returnUrl (UnionPay frontUrl) must be an http(s) URL';
  }
  if (request.payer.clientIp !== undefined && !IP_ADDRESS.test(request.payer.clientIp)) {
    return 'payer.clientIp must be an IP address';
  }
  return undefined;
}

/**
 * A consumption (txnType 01) with the order's terms: orderId, txnAmt, its txnTime (the order's
 * channelOrderTime, fixed once per order, so that a second send is the same consumption at UnionPay),
 * payTimeout (the order's expiry) and backUrl (this service's own endpoint).
 */
export async function createUnionpayPayment(
  client: UnionpayClient,
  request: CreatePaymentRequest,
  notifyPath: string,
): Promise<CreatePaymentResult> {
  const method = request.method as UnionpayPaymentMethod;
  if (!request.channelOrderTime) {
    return { outcome: 'RETRY', detail: `order ${request.orderNo} has no channelOrderTime to send as txnTime` };
  }
  const fields: Record<string, string> = {
    txnType: TxnType.Consume,
    txnSubType: '01',
    bizType: '000201',
    channelType: METHOD_SPECS[method].channelType,
    orderId: request.orderNo,
    txnTime: request.channelOrderTime,
    txnAmt: String(request.amount),
    currencyCode: CURRENCY_CODES[request.currency],
    backUrl: `${request.notifyBaseUrl}/${notifyPath}`,
    payTimeout: formatTxnTime(request.expiresAt),
    ...(request.payer.clientIp ? { customerIp: request.payer.clientIp } : {}),
    ...(method !== 'APP' ? { frontUrl: request.payer.returnUrl! } : {}),
  };
  if (method !== 'APP') {
    const signed = client.sign(request.merchantId, fields);
    if (isFailure(signed)) return { outcome: 'RETRY', detail: signed.failure };
    return {
      outcome: 'CREATED',
      buyer: {
        params: Object.fromEntries(signed.fields),
        form: { action: client.urlOf('frontTrans'), method: 'POST' },
      },
      validUntil: request.expiresAt,
    };
  }
  const answer = await client.call(request.merchantId, 'appTrans', fields);
  if (isFailure(answer)) return { outcome: 'RETRY', detail: answer.failure };
  const respCode = answer.fields.get('respCode') ?? '';
  const respMsg = (answer.fields.get('respMsg') ?? '').slice(0, 256);
  if (PENDING_RESP_CODES.has(respCode)) {
    return { outcome: 'RETRY', detail: `UnionPay appTransReq: respCode ${respCode} ${respMsg}`.trim() };
  }
  if (!SUCCESS_RESP_CODES.has(respCode)) return { outcome: 'REFUSED', code: respCode, message: respMsg };
  const tn = answer.fields.get('tn');
  if (answer.fields.get('orderId') !== request.orderNo || !tn) {
    return { outcome: 'RETRY', detail: 'UnionPay appTransReq answered without tn, or about another orderId' };
  }
  return { outcome: 'CREATED', buyer: { params: { tn } }, validUntil: request.expiresAt };
}
