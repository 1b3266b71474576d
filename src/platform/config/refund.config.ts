import { registerAs } from '@nestjs/config';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { MAX_AMOUNT } from '../../domain/money';
import { IntegerBetween, OneOf, validateEnv } from './env-validation';

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

  @IsOptional()
  @IsInt({ message: 'REFUND_APPROVAL_THRESHOLD must be an integer amount in minor units' })
  @Min(1, { message: 'REFUND_APPROVAL_THRESHOLD must be at least 1' })
  @Max(MAX_AMOUNT, { message: `REFUND_APPROVAL_THRESHOLD must be at most ${MAX_AMOUNT}` })
  REFUND_APPROVAL_THRESHOLD?: number;

  @IsOptional()
  @OneOf(['true', 'false'])
  SHOP_REFUNDS_NEED_APPROVAL?: string;
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
  /** Minor units: an emergency refund of this much or more waits for a second admin's approval. Unset: none does. */
  approvalThreshold?: number;
  /**
   * Whether the order service's refunds (POST /payment-orders/:orderNo/refunds) wait for a second
   * admin above approvalThreshold too. Off by default: they are the shop's ordinary refunds, decided
   * by its own workflow; four eyes guard the money an operator moves by hand.
   */
  shopRefundsNeedApproval: boolean;
}

export function loadRefundConfig(env: NodeJS.ProcessEnv = process.env): RefundConfig {
  const vars = validateEnv(RefundEnv, env);
  return {
    retryBaseDelayMs: vars.REFUND_RETRY_BASE_DELAY_MS ?? 5000,
    retryMaxDelayMs: vars.REFUND_RETRY_MAX_DELAY_MS ?? 600000,
    pollIntervalMs: vars.REFUND_POLL_INTERVAL_MS ?? 1000,
    processingMaxAgeSeconds: vars.REFUND_PROCESSING_MAX_AGE_SECONDS ?? 86400,
    approvalThreshold: vars.REFUND_APPROVAL_THRESHOLD,
    shopRefundsNeedApproval: vars.SHOP_REFUNDS_NEED_APPROVAL === 'true',
  };
}

export const refundConfig = registerAs('refund', () => loadRefundConfig());
