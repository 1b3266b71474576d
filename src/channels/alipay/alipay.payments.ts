import { CreatePaymentRequest, CreatePaymentResult, PaymentMethod } from '../../domain/channel-api';
import { formatYuan } from '../../domain/money';
import { AlipayClient, AlipayMethod, beijingDateTime, isFailure, METHODS } from './alipay.client';

/**
 * The ways an Alipay buyer pays, and the openapi method behind each: page and wap pay are requests the
 * buyer's browser takes to the gateway, app pay one the Alipay SDK takes (its orderStr); precreate and
 * create are calls this service makes (a QR code to scan; a trade for a mini-program's my.tradePay).
 */
const METHOD_SPECS = {
  PAGE: {
    method: 'alipay.trade.page.pay',
    productCode: 'FAST_INSTANT_TRADE_PAY',
    needs: [],
    summary:
      'PC web (alipay.trade.page.pay): the signed fields of a form the browser posts to Alipay; payer.returnUrl is where it comes back',
  },
  WAP: {
    method: 'alipay.trade.wap.pay',
    productCode: 'QUICK_WAP_WAY',
    needs: [],
    summary:
      'mobile web (alipay.trade.wap.pay): the signed fields of a form the browser posts to Alipay; payer.returnUrl and payer.quitUrl',
  },
  APP: {
    method: 'alipay.trade.app.pay',
    productCode: 'QUICK_MSECURITY_PAY',
    needs: [],
    summary: "the app (alipay.trade.app.pay): the signed orderStr the Alipay SDK's payOrder takes",
  },
  QR: {
    method: METHODS.precreate.name,
    productCode: 'FACE_TO_FACE_PAYMENT',
    needs: [],
    summary: 'a QR code the buyer scans with Alipay (alipay.trade.precreate): qr_code',
  },
  MINI_PROGRAM: {
    method: METHODS.create.name,
    productCode: 'JSAPI_PAY',
    needs: ['buyerId'],
    summary:
      "an Alipay mini-program (alipay.trade.create): tradeNO for my.tradePay; payer.buyerId is the buyer's user id (2088…) or open id",
  },
} as const satisfies Record<string, Omit<PaymentMethod, 'name'> & { method: string; productCode: string }>;
type AlipayPaymentMethod = keyof typeof METHOD_SPECS;

export const ALIPAY_PAYMENT_METHODS: readonly PaymentMethod[] = Object.entries(METHOD_SPECS).map(
  ([name, { needs, summary }]) => ({ name, needs, summary }),
);

/** A buyer's Alipay user id (buyer_id); anything else the mini-program learnt is its open id (buyer_open_id). */
const USER_ID = /^2088\d{12}$/;
const OPEN_ID = /^[0-9A-Za-z_-]{1,128}$/;
const APP_ID = /^\d{1,32}$/;
/** How long a signed page, wap or app request is offered again; afterwards it is signed afresh, same terms. */
const SIGNED_REQUEST_VALIDITY_MS = 15 * 60 * 1000;
/** Alipay's precreate qr_code is valid two hours at most. */
const QR_CODE_VALIDITY_MS = 2 * 3600 * 1000;
/** Answers that decide nothing: the same out_trade_no is sent again, with the same terms. */
const SYSTEM_ERRORS = new Set(['ACQ.SYSTEM_ERROR', 'aop.ACQ.SYSTEM_ERROR', 'isp.unknow-error', 'isp.unknown-error']);
/** code 20000: the service is unavailable. */
const UNAVAILABLE = '20000';

/** Why Alipay would not take this request as it is, before anything is signed or sent. */
export function alipayPaymentRefusal(request: CreatePaymentRequest): string | undefined {
  if (request.currency !== 'CNY') return `Alipay takes CNY only, not ${request.currency}`;
  const { buyerId } = request.payer;
  if (request.method === 'MINI_PROGRAM') {
    if (!buyerId || !OPEN_ID.test(buyerId)) {
      return "payer.buyerId must be the buyer's Alipay user id (2088…) or open id (at most 128 letters, digits, _ or -)";
    }
    if (request.appId !== undefined && !APP_ID.test(request.appId)) {
      return 'appId must be the Alipay app_id (digits) of the mini-program the buyer pays in';
    }
  } else if (request.appId !== undefined && request.appId !== request.merchantId) {
    return 'appId names another Alipay app than the account: only MINI_PROGRAM pays in another app (op_app_id)';
  }
  return undefined;
}

/**
 * Creates the payment at Alipay (precreate, create) or signs what the buyer's side takes there (page,
 * wap, app), every term the order's: out_trade_no, total_amount, time_expire (the order's expiry, to
 * the second, never later) and notify_url (this service's own endpoint).
 */
export async function createAlipayPayment(
  client: AlipayClient,
  request: CreatePaymentRequest,
  notifyPath: string,
  now: Date,
): Promise<CreatePaymentResult> {
  const method = request.method as AlipayPaymentMethod;
  const spec = METHOD_SPECS[method];
  const { returnUrl, quitUrl } = request.payer;
  const bizContent = {
    out_trade_no: request.orderNo,
    total_amount: formatYuan(request.amount),
    subject: request.description,
    product_code: spec.productCode,
    time_expire: beijingDateTime(request.expiresAt),
    ...(method === 'WAP' && quitUrl ? { quit_url: quitUrl } : {}),
    ...(method === 'MINI_PROGRAM' ? buyerOf(request) : {}),
  };
  const publicParams = {
    notify_url: `${request.notifyBaseUrl}/${notifyPath}`,
    ...((method === 'PAGE' || method === 'WAP') && returnUrl ? { return_url: returnUrl } : {}),
  };
  const until = (ms: number) => new Date(Math.min(request.expiresAt.getTime(), now.getTime() + ms));
  switch (method) {
    case 'PAGE':
    case 'WAP':
    case 'APP': {
      const signed = client.sign(request.merchantId, spec.method, bizContent, publicParams);
      if (isFailure(signed)) return { outcome: 'RETRY', detail: signed.failure };
      const buyer =
        method === 'APP'
          ? { params: { orderStr: new URLSearchParams(signed.params).toString() } }
          : { params: signed.params, form: { action: `${client.gatewayUrl}?charset=utf-8`, method: 'POST' as const } };
      return { outcome: 'CREATED', buyer, validUntil: until(SIGNED_REQUEST_VALIDITY_MS) };
    }
    case 'QR': {
      const answer = await callCreate(client, request, METHODS.precreate, bizContent, publicParams);
      if (answer.outcome !== 'ANSWERED') return answer;
      const qrCode = answer.verified.qr_code;
      if (!qrCode) return { outcome: 'RETRY', detail: 'Alipay precreate answered without qr_code' };
      return { outcome: 'CREATED', buyer: { params: { qr_code: qrCode } }, validUntil: until(QR_CODE_VALIDITY_MS) };
    }
    case 'MINI_PROGRAM': {
      const answer = await callCreate(client, request, METHODS.create, bizContent, publicParams);
      if (answer.outcome !== 'ANSWERED') return answer;
      const tradeNo = answer.verified.trade_no;
      if (!tradeNo) return { outcome: 'RETRY', detail: 'Alipay trade create answered without trade_no' };
      return {
        outcome: 'CREATED',
        buyer: { params: { tradeNO: tradeNo } },
        validUntil: request.expiresAt,
        channelTradeId: tradeNo,
      };
    }
  }
}

/** user ids go in buyer_id, open ids in buyer_open_id; op_app_id names the mini-program when it is another app. */
function buyerOf(request: CreatePaymentRequest): Record<string, string> {
  const buyerId = request.payer.buyerId!;
  const buyer: Record<string, string> = USER_ID.test(buyerId) ? { buyer_id: buyerId } : { buyer_open_id: buyerId };
  return request.appId && request.appId !== request.merchantId ? { ...buyer, op_app_id: request.appId } : buyer;
}

async function callCreate(
  client: AlipayClient,
  request: CreatePaymentRequest,
  method: AlipayMethod,
  bizContent: object,
  publicParams: Record<string, string>,
): Promise<
  | { outcome: 'ANSWERED'; verified: Record<string, string | undefined> }
  | Extract<CreatePaymentResult, { outcome: 'REFUSED' | 'RETRY' }>
> {
  const answer = await client.call(request.merchantId, method, bizContent, publicParams);
  if (isFailure(answer)) return { outcome: 'RETRY', detail: answer.failure };
  const { verified } = answer;
  if (verified.code === '10000') {
    if (verified.out_trade_no !== request.orderNo) {
      return {
        outcome: 'RETRY',
        detail: `Alipay ${method.name} answered about out_trade_no ${verified.out_trade_no?.slice(0, 64)}`,
      };
    }
    return { outcome: 'ANSWERED', verified };
  }
  const code = verified.sub_code ?? verified.code ?? '';
  const message = (verified.sub_msg ?? verified.msg ?? '').slice(0, 256);
  if (verified.code === UNAVAILABLE || SYSTEM_ERRORS.has(code)) {
    return { outcome: 'RETRY', detail: `Alipay ${method.name}: ${verified.code} ${code} ${message}`.trim() };
  }
  return { outcome: 'REFUSED', code, message };
}
