import { registerAs } from '@nestjs/config';
import { IsInt, IsOptional, IsUrl, Matches, Max, Min } from 'class-validator';
import { validateEnv } from '../platform/config/env-validation';

class OrderEnv {
  @IsOptional()
  @Matches(/^\s*[A-Z]{3}\s*(,\s*[A-Z]{3}\s*)*$/, {
    message: 'CURRENCIES must be comma-separated ISO 4217 codes such as CNY,USD',
  })
  CURRENCIES?: string;

  @IsOptional()
  @IsUrl(
    { protocols: ['http', 'https'], require_protocol: true, require_tld: false },
    { message: 'PUBLIC_BASE_URL must be the URL the channels reach this service at, e.g. https://pay.example.com' },
  )
  PUBLIC_BASE_URL?: string;

  @IsOptional()
  @IsInt()
  @Min(60)
  @Max(7 * 86400)
  PAYMENT_EXPIRY_SECONDS?: number;
}

export interface OrderConfig {
  /** The currencies an order may be registered in. */
  currencies: string[];
  /**
   * Where the channels reach this service (no trailing slash): the notify URL of every payment
   * created here is `<publicBaseUrl>/notify/<channel's path>`. Undefined: no payment is created here.
   */
  publicBaseUrl?: string;
  /** How long an order whose payment is created here stays payable when the shop names no expiresAt. */
  paymentExpirySeconds: number;
}

export function loadOrderConfig(env: NodeJS.ProcessEnv = process.env): OrderConfig {
  const vars = validateEnv(OrderEnv, env);
  const currencies = (vars.CURRENCIES ?? 'CNY').split(',').map((code) => code.trim());
  return {
    currencies: [...new Set(currencies)],
    ...(vars.PUBLIC_BASE_URL ? { publicBaseUrl: vars.PUBLIC_BASE_URL.replace(/\/+$/, '') } : {}),
    paymentExpirySeconds: vars.PAYMENT_EXPIRY_SECONDS ?? 1800,
  };
}

export const orderConfig = registerAs('order', () => loadOrderConfig());
