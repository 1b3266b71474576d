import { registerAs } from '@nestjs/config';
import { IsOptional } from 'class-validator';
import { IntegerBetween, validateEnv } from '../platform/config/env-validation';

class RefundEnv {
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
}

export interface RefundConfig {
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  pollIntervalMs: number;
  /**
   * How long a refund may stay unconfirmed: after it, a refund the channel says it has no record of
   * is sent again, and an unsettled one counts in the refunds_unsettled metric.
   */
  processingMaxAgeSeconds: number;
}

export function loadRefundConfig(env: NodeJS.ProcessEnv = process.env): RefundConfig {
  const vars = validateEnv(RefundEnv, env);
  return {
    retryBaseDelayMs: vars.REFUND_RETRY_BASE_DELAY_MS ?? 5000,
    retryMaxDelayMs: vars.REFUND_RETRY_MAX_DELAY_MS ?? 600000,
    pollIntervalMs: vars.REFUND_POLL_INTERVAL_MS ?? 1000,
    processingMaxAgeSeconds: vars.REFUND_PROCESSING_MAX_AGE_SECONDS ?? 86400,
  };
}

export const refundConfig = registerAs('refund', () => loadRefundConfig());
