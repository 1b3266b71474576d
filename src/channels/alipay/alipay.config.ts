import { registerAs } from '@nestjs/config';
import { IsOptional, IsString, Matches } from 'class-validator';
import { requireAll, validateEnv } from '../../config/validate-env';

class AlipayEnv {
  @IsOptional()
  @Matches(/^\d+$/, { message: 'ALIPAY_APP_ID must be digits' })
  ALIPAY_APP_ID?: string;

  @IsOptional()
  @IsString()
  ALIPAY_PUBLIC_KEY_PATH?: string;

  @IsOptional()
  @Matches(/^\d+$/, { message: 'ALIPAY_SELLER_ID must be digits' })
  ALIPAY_SELLER_ID?: string;
}

export interface AlipayConfig {
  appId: string;
  publicKeyPath: string;
  sellerId?: string;
}

/** Undefined when no Alipay variable is set: the channel is disabled. */
export function loadAlipayConfig(env: NodeJS.ProcessEnv = process.env): AlipayConfig | undefined {
  const vars = validateEnv(AlipayEnv, env);
  if (vars.ALIPAY_APP_ID === undefined && vars.ALIPAY_PUBLIC_KEY_PATH === undefined) return undefined;
  requireAll('Alipay', { ...vars }, ['ALIPAY_APP_ID', 'ALIPAY_PUBLIC_KEY_PATH']);
  return { appId: vars.ALIPAY_APP_ID!, publicKeyPath: vars.ALIPAY_PUBLIC_KEY_PATH!, sellerId: vars.ALIPAY_SELLER_ID };
}

/** `settings` is undefined while the channel is disabled. */
export const alipayConfig = registerAs('alipay', () => ({ settings: loadAlipayConfig() }));
