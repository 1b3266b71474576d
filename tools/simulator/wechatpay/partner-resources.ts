/**
 * WeChat Pay's service-provider (partner) resources, as a provider's notifications and partner APIs carry them:
 * `sp_mchid`, `sp_appid`, `sub_mchid` and `sub_appid` where a direct merchant's carry `mchid` and `appid`. The
 * envelope, its encryption and its signature are APIv3's (platform-signers.ts), with the provider's keys.
 */
import { beijingRfc3339 } from '../signing';
import { refundResourceBody } from './wechatpay-signer';

export interface PartnerNames {
  spMchid: string;
  subMchid: string;
  spAppid?: string;
  subAppid?: string;
}

export interface PartnerTransactionParams extends PartnerNames {
  outTradeNo: string;
  transactionId?: string;
  /** Fen. */
  total: number;
  currency?: string;
  tradeState?: string;
  successTime?: Date;
}

/** A decrypted partner JSAPI payment resource (TRANSACTION.SUCCESS), or a partner trade query's answer. */
export function wechatpayPartnerTransaction(p: PartnerTransactionParams): object {
  const currency = p.currency ?? 'CNY';
  const tradeState = p.tradeState ?? 'SUCCESS';
  const paid = tradeState === 'SUCCESS';
  return {
    sp_appid: p.spAppid ?? 'wx8888888888888888',
    sp_mchid: p.spMchid,
    ...(p.subAppid ? { sub_appid: p.subAppid } : {}),
    sub_mchid: p.subMchid,
    out_trade_no: p.outTradeNo,
    ...(p.transactionId ? { transaction_id: p.transactionId } : {}),
    trade_type: 'JSAPI',
    trade_state: tradeState,
    trade_state_desc: paid ? '支付成功' : tradeState,
    bank_type: 'CMC',
    attach: '',
    ...(paid ? { success_time: beijingRfc3339(p.successTime ?? new Date()) } : {}),
    payer: { sp_openid: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o', sub_openid: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o' },
    amount: paid
      ? { total: p.total, payer_total: p.total, currency, payer_currency: currency }
      : { total: p.total, currency, payer_currency: currency },
  };
}

export interface PartnerRefundParams extends PartnerNames {
  outTradeNo: string;
  transactionId: string;
  outRefundNo: string;
  refundId: string;
  /** SUCCESS, CLOSED or ABNORMAL. */
  refundStatus?: string;
  /** Fen. */
  total: number;
  refund: number;
}

/** A decrypted partner refund resource (REFUND.SUCCESS / REFUND.ABNORMAL / REFUND.CLOSED). */
export function wechatpayPartnerRefund(p: PartnerRefundParams): object {
  return { sp_mchid: p.spMchid, sub_mchid: p.subMchid, ...refundResourceBody(p) };
}
