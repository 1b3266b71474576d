import { registerAs } from '@nestjs/config';
import { IsOptional, Matches } from 'class-validator';
import { validateEnv } from '../platform/config/env-validation';

class OrderEnv {
  @IsOptional()
  @Matches(/^\s*[A-Z]{3}\s*(,\s*[A-Z]{3}\s*)*$/, {
    message: 'CURRENCIES must be comma-separated ISO 4217 codes such as CNY,USD',
  })
  CURRENCIES?: string;
}

export interface OrderConfig {
  /** The currencies an order may be registered in. */
  currencies: string[];
}

export function loadOrderConfig(env: NodeJS.ProcessEnv = process.env): OrderConfig {
  const vars = validateEnv(OrderEnv, env);
  const currencies = (vars.CURRENCIES ?? 'CNY').split(',').map((code) => code.trim());
  return { currencies: [...new Set(currencies)] };
}

export const orderConfig = registerAs('order', () => loadOrderConfig());
