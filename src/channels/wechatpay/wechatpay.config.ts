import { registerAs } from '@nestjs/config';
import { IsOptional, IsString, Length, Matches } from 'class-validator';
import { requireAll, validateEnv } from '../../config/validate-env';

class WechatpayEnv {
  @IsOptional()
  @IsString()
  WECHATPAY_MCHID?: string;

  @IsOptional()
  @IsString()
  WECHATPAY_APPID?: string;

  @IsOptional()
  @Length(32, 32, { message: 'WECHATPAY_APIV3_KEY must be exactly 32 characters (AES-256 key)' })
  WECHATPAY_APIV3_KEY?: string;

  @IsOptional()
  @Matches(/^PUB_KEY_ID_\w+$/, { message: 'WECHATPAY_PUBLIC_KEY_ID must start with PUB_KEY_ID_' })
  WECHATPAY_PUBLIC_KEY_ID?: string;

  @IsOptional()
  @IsString()
  WECHATPAY_PUBLIC_KEY_PATH?: string;

  @IsOptional()
  @IsString()
  WECHATPAY_PLATFORM_CERT_PATHS?: string;
}

export interface WechatpayConfig {
  mchid: string;
  appid?: string;
  apiV3Key: string;
  /** Platform public key mode: the key id WeChat sends as Wechatpay-Serial. */
  publicKey?: { id: string; path: string };
  /** Platform certificate mode; several at once during rotation. */
  platformCertPaths: string[];
}

/** Undefined when no WeChat Pay variable is set: the channel is disabled. */
export function loadWechatpayConfig(env: NodeJS.ProcessEnv = process.env): WechatpayConfig | undefined {
  const vars = validateEnv(WechatpayEnv, env);
  const keyVars = [vars.WECHATPAY_PUBLIC_KEY_PATH, vars.WECHATPAY_PLATFORM_CERT_PATHS];
  const anySet = [vars.WECHATPAY_MCHID, vars.WECHATPAY_APIV3_KEY, vars.WECHATPAY_PUBLIC_KEY_ID, ...keyVars].some(
    (v) => v !== undefined,
  );
  if (!anySet) return undefined;

  requireAll('WeChat Pay', { ...vars }, ['WECHATPAY_MCHID', 'WECHATPAY_APIV3_KEY']);
  if (keyVars.every((v) => v === undefined)) {
    requireAll('WeChat Pay', { ...vars }, ['WECHATPAY_PUBLIC_KEY_PATH']);
  }
  if (vars.WECHATPAY_PUBLIC_KEY_PATH !== undefined || vars.WECHATPAY_PUBLIC_KEY_ID !== undefined) {
    requireAll('WeChat Pay public key mode', { ...vars }, ['WECHATPAY_PUBLIC_KEY_ID', 'WECHATPAY_PUBLIC_KEY_PATH']);
  }
  return {
    mchid: vars.WECHATPAY_MCHID!,
    appid: vars.WECHATPAY_APPID,
    apiV3Key: vars.WECHATPAY_APIV3_KEY!,
    publicKey: vars.WECHATPAY_PUBLIC_KEY_ID
      ? { id: vars.WECHATPAY_PUBLIC_KEY_ID, path: vars.WECHATPAY_PUBLIC_KEY_PATH! }
      : undefined,
    platformCertPaths: (vars.WECHATPAY_PLATFORM_CERT_PATHS ?? '')
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p !== ''),
  };
}

/** `settings` is undefined while the channel is disabled. */
export const wechatpayConfig = registerAs('wechatpay', () => ({ settings: loadWechatpayConfig() }));
