/**
 * The fake WeChat Pay's service-provider (partner) pieces: the partner trade paths
 * `GET /v3/pay/partner/transactions/out-trade-no/{no}?sp_mchid=&sub_mchid=` and `POST …/{no}/close`
 * `{"sp_mchid","sub_mchid"}`, and the `sub_mchid` a provider's refunds, refund queries and bills name. A request
 * is signed with the provider's merchant key (checked by fake-wechatpay-api.ts); here its sp_mchid must be the
 * signer's and its sub_mchid one of the provider's sub-merchants.
 */
import { IncomingMessage } from 'node:http';
import { FakeTrade, isNonEmptyString, parseJsonObject, Refusal } from '../fake-api';
import { wechatpayPartnerTransaction } from './partner-resources';

/** `/v3/pay/partner/transactions/out-trade-no/{out_trade_no}` and `…/close`. */
export const WECHATPAY_PARTNER_TRADE_PATH = /^\/v3\/pay\/partner\/transactions\/out-trade-no\/([^/]+)(\/close)?$/;

/** The provider's side of a merchant the fake knows: its sub-merchants, none for a direct merchant. */
export interface PartnerMerchant {
  mchid: string;
  /** Service-provider mode: the sub_mchids it may act for. */
  subMchids?: string[];
}

/**
 * The sub_mchid a request names, checked against the signing merchant: a provider must name one of its
 * sub-merchants, a direct merchant none. Answers it (undefined for a direct merchant).
 */
export function checkSubMchid(merchant: PartnerMerchant, subMchid: unknown): string | undefined {
  const subs = merchant.subMchids ?? [];
  if (subs.length === 0) {
    if (subMchid === undefined || subMchid === null) return undefined;
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the request's field, quoted as it came in the refusal
    throw new Refusal('PARAM_ERROR', `mchid ${merchant.mchid} is no service provider: sub_mchid "${String(subMchid)}"`);
  }
  if (!isNonEmptyString(subMchid)) throw new Refusal('PARAM_ERROR', 'sub_mchid is missing');
  if (!subs.includes(subMchid)) {
    throw new Refusal('NO_AUTH', `sub_mchid ${subMchid} is not a sub-merchant of service provider ${merchant.mchid}`);
  }
  return subMchid;
}

/** sp_mchid and sub_mchid of a partner query (query string) or close (JSON body), checked against the signer. */
export function partnerTradeNames(
  req: IncomingMessage,
  body: string,
  request: 'QUERY' | 'CLOSE',
  baseUrl: string,
  merchant: PartnerMerchant,
): string {
  let names: { sp_mchid?: unknown; sub_mchid?: unknown };
  if (request === 'QUERY') {
    const query = new URL(req.url ?? '/', baseUrl).searchParams;
    names = { sp_mchid: query.get('sp_mchid'), sub_mchid: query.get('sub_mchid') ?? undefined };
  } else {
    if (!req.headers['content-type']?.startsWith('application/json')) {
      throw new Refusal('PARAM_ERROR', `Content-Type "${req.headers['content-type']}" is not application/json`);
    }
    names = parseJsonObject(body, 'PARAM_ERROR');
  }
  if (names.sp_mchid !== merchant.mchid) {
    throw new Refusal(
      'PARAM_ERROR',
      `sp_mchid "${String(names.sp_mchid)}" is not the signing merchant's ${merchant.mchid}`,
    );
  }
  if (!(merchant.subMchids ?? []).length) {
    throw new Refusal('NO_AUTH', `mchid ${merchant.mchid} is no service provider: the partner paths are not its`);
  }
  return checkSubMchid(merchant, names.sub_mchid)!;
}

/** The account a sub-merchant's bill is served under (FakePlatform.serveBill): "sp_mchid/sub_mchid". */
export function partnerBillAccount(mchid: string, subMchid: string | undefined): string {
  return subMchid === undefined ? mchid : `${mchid}/${subMchid}`;
}

const TRADE_STATE: Record<FakeTrade['state'], string> = { PAID: 'SUCCESS', UNPAID: 'NOTPAY', CLOSED: 'CLOSED' };

/** 200 with the partner transaction, or 404 ORDER_NOT_EXIST. */
export function partnerTradeQueryAnswer(trade: FakeTrade | undefined, subMchid: string): [number, object] {
  if (!trade) return [404, { code: 'ORDER_NOT_EXIST', message: '订单不存在' }];
  return [
    200,
    wechatpayPartnerTransaction({
      spMchid: trade.merchantId,
      subMchid: trade.subMerchantId ?? subMchid,
      spAppid: trade.appid,
      outTradeNo: trade.outTradeNo,
      transactionId: trade.state === 'PAID' ? trade.transactionId : undefined,
      total: trade.amount,
      currency: trade.currency,
      tradeState: TRADE_STATE[trade.state],
      successTime: trade.paidAt,
    }),
  ];
}
