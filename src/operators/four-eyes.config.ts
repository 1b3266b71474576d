import { registerAs } from '@nestjs/config';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { MAX_AMOUNT } from '../domain/money';
import { OneOf, validateEnv } from '../platform/config/env-validation';

class FourEyesEnv {
  @IsOptional()
  @IsInt({ message: 'REFUND_APPROVAL_THRESHOLD must be an integer amount in minor units' })
  @Min(1, { message: 'REFUND_APPROVAL_THRESHOLD must be at least 1' })
  @Max(MAX_AMOUNT, { message: `REFUND_APPROVAL_THRESHOLD must be at most ${MAX_AMOUNT}` })
  REFUND_APPROVAL_THRESHOLD?: number;

  @IsOptional()
  @OneOf(['true', 'false'])
  SHOP_REFUNDS_NEED_APPROVAL?: string;
}

/** When money an operator moves needs a second admin: refunds, and anomalies closed without one. */
export interface FourEyesConfig {
  /** Minor units: an emergency refund of this much or more waits for a second admin's approval. Unset: none does. */
  approvalThreshold?: number;
  /**
   * Whether the order service's refunds (POST /payment-orders/:orderNo/refunds) wait for a second
   * admin above approvalThreshold too. Off by default: they are the shop's ordinary refunds, decided
   * by its own workflow; four eyes guard the money an operator moves by hand.
   */
  shopRefundsNeedApproval: boolean;
}

export function loadFourEyesConfig(env: NodeJS.ProcessEnv = process.env): FourEyesConfig {
  const vars = validateEnv(FourEyesEnv, env);
  return {
    approvalThreshold: vars.REFUND_APPROVAL_THRESHOLD,
    shopRefundsNeedApproval: vars.SHOP_REFUNDS_NEED_APPROVAL === 'true',
  };
}

export const fourEyesConfig = registerAs('fourEyes', () => loadFourEyesConfig());
