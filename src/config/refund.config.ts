import { registerAs } from '@nestjs/config';
import { IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min } from 'class-validator';
import { MAX_AMOUNT } from '../domain/money';
import { IntegerBetween, validateEnv } from './validate-env';

const URL_OPTIONS = { require_tld: false, protocols: ['http', 'https'], require_protocol: true };

class RefundEnv {
  @IsOptional()
  @IsUrl(URL_OPTIONS, { message: 'WECHATPAY_API_BASE_URL must be an http(s) URL' })
  WECHATPAY_API_BASE_URL?: string;

  @IsOptional()
  @IsString()
  WECHATPAY_MERCHANT_PRIVATE_KEY_PATH?: string;

  @IsOptional()
  @Matches(/^[0-9A-Fa-f]{8,64}$/, { message: 'WECHATPAY_MERCHANT_SERIAL_NO must be the certificate serial in hex' })
  WECHATPAY_MERCHANT_SERIAL_NO?: string;

  @IsOptional()
  @IsUrl(URL_OPTIONS, { message: 'WECHATPAY_REFUND_NOTIFY_URL must be an http(s) URL' })
  WECHATPAY_REFUND_NOTIFY_URL?: string;

  @IsOptional()
  @IsUrl(URL_OPTIONS, { message: 'ALIPAY_GATEWAY_URL must be an http(s) URL' })
  ALIPAY_GATEWAY_URL?: string;

  @IsOptional()
  @IsString()
  ALIPAY_APP_PRIVATE_KEY_PATH?: string;

  @IsOptional()
  @IntegerBetween(100, 120000)
  REFUND_REQUEST_TIMEOUT_MS?: number;

  @IsOptional()
  @IntegerBetween(1000, 3600000)
  BILL_DOWNLOAD_TIMEOUT_MS?: number;

  @IsOptional()
  @IntegerBetween(1, 3600000)
  REFUND_RETRY_BASE_DELAY_MS?: number;

  @IsOptional()
  @IntegerBetween(1, 86400000)
  REFUND_RETRY_MAX_DELAY_MS?: number;

  @IsOptional()
  @IntegerBetween(10, 600000)
  REFUND_POLL_INTERVAL_MS?: number;

  @IsOptional()
  @IntegerBetween(1, 30 * 86400)
  REFUND_PROCESSING_MAX_AGE_SECONDS?: number;

  @IsOptional()
  @IsInt({ message: 'REFUND_APPROVAL_THRESHOLD must be an integer amount in minor units' })
  @Min(1, { message: 'REFUND_APPROVAL_THRESHOLD must be at least 1' })
  @Max(MAX_AMOUNT, { message: `REFUND_APPROVAL_THRESHOLD must be at most ${MAX_AMOUNT}` })
  REFUND_APPROVAL_THRESHOLD?: number;
}

export interface RefundConfig {
  wechatpay: {
    apiBaseUrl: string;
    /** Both set, or the WeChat Pay refund client is unavailable. */
    merchantPrivateKeyPath?: string;
    merchantSerialNo?: string;
    notifyUrl?: string;
  };
  alipay: { gatewayUrl: string; appPrivateKeyPath?: string };
  requestTimeoutMs: number;
  /** A bill file download (not the call asking for its URL) taking longer fails. */
  billDownloadTimeoutMs: number;
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  pollIntervalMs: number;
  /**
   * How long a refund may stay unconfirmed: after it, a refund the channel says it has no record of
   * is sent again, and an unsettled one counts in the refunds_unsettled metric.
   */
  processingMaxAgeSeconds: number;
  /** Minor units: an emergency refund of this much or more waits for a second admin's approval. Unset: none does. */
  approvalThreshold?: number;
}

export function loadRefundConfig(env: NodeJS.ProcessEnv = process.env): RefundConfig {
  const vars = validateEnv(RefundEnv, env);
  return {
    wechatpay: {
      apiBaseUrl: (vars.WECHATPAY_API_BASE_URL ?? 'https://api.mch.weixin.qq.com').replace(/\/+$/, ''),
      merchantPrivateKeyPath: vars.WECHATPAY_MERCHANT_PRIVATE_KEY_PATH,
      merchantSerialNo: vars.WECHATPAY_MERCHANT_SERIAL_NO?.toUpperCase(),
      notifyUrl: vars.WECHATPAY_REFUND_NOTIFY_URL,
    },
    alipay: {
      gatewayUrl: vars.ALIPAY_GATEWAY_URL ?? 'https://openapi.alipay.com/gateway.do',
      appPrivateKeyPath: vars.ALIPAY_APP_PRIVATE_KEY_PATH,
    },
    requestTimeoutMs: vars.REFUND_REQUEST_TIMEOUT_MS ?? 10000,
    billDownloadTimeoutMs: vars.BILL_DOWNLOAD_TIMEOUT_MS ?? 600000,
    retryBaseDelayMs: vars.REFUND_RETRY_BASE_DELAY_MS ?? 5000,
    retryMaxDelayMs: vars.REFUND_RETRY_MAX_DELAY_MS ?? 600000,
    pollIntervalMs: vars.REFUND_POLL_INTERVAL_MS ?? 1000,
    processingMaxAgeSeconds: vars.REFUND_PROCESSING_MAX_AGE_SECONDS ?? 86400,
    approvalThreshold: vars.REFUND_APPROVAL_THRESHOLD,
  };
}

export const refundConfig = registerAs('refund', () => loadRefundConfig());
