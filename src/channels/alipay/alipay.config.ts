import { IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { requireAll, validateEnv } from '../../domain/env-validation';
import { readAccountsSection, refuseBesideFile } from '../accounts-file';
import { HttpUrl } from '../channel-calls.config';
import { SingleValue } from '../single-value';
import { alipayAccounts } from './alipay.accounts';

class AlipayEnv {
  @IsOptional()
  @Matches(/^\d+$/, { message: 'ALIPAY_APP_ID must be digits' })
  ALIPAY_APP_ID?: string;

  @IsOptional()
  @SingleValue()
  ALIPAY_PUBLIC_KEY_PATH?: string;

  @IsOptional()
  @Matches(/^\d+$/, { message: 'ALIPAY_SELLER_ID must be digits' })
  ALIPAY_SELLER_ID?: string;
}

/** Alipay retries a notification for about 25 hours (4 m, 10 m, 10 m, 1 h, 2 h, 6 h, 15 h); one hour of margin. */
export const DEFAULT_NOTIFY_MAX_AGE_SECONDS = 26 * 3600;

class AlipayNotifyEnv {
  @IsOptional()
  @IsInt()
  @Min(3600)
  @Max(7 * 24 * 3600)
  ALIPAY_NOTIFY_MAX_AGE_SECONDS?: number;
}

/** How old a notification's notify_time may be; not per app, so it may stand beside PAYMENT_ACCOUNTS_FILE. */
export function loadAlipayNotifyMaxAgeSeconds(env: NodeJS.ProcessEnv = process.env): number {
  return validateEnv(AlipayNotifyEnv, env).ALIPAY_NOTIFY_MAX_AGE_SECONDS ?? DEFAULT_NOTIFY_MAX_AGE_SECONDS;
}

/** The gateway; the app key's variable describes the shorthand's app. */
class AlipayApiEnv {
  @IsOptional()
  @HttpUrl('ALIPAY_GATEWAY_URL')
  ALIPAY_GATEWAY_URL?: string;

  @IsOptional()
  @IsString()
  ALIPAY_APP_PRIVATE_KEY_PATH?: string;
}

/** Everything the Alipay adapter is built from. */
export interface AlipayOptions {
  accounts: AlipayAccount[];
  gatewayUrl: string;
  notifyMaxAgeSeconds: number;
}

/** One Alipay app (app_id) as notifications see it. */
export interface AlipayConfig {
  appId: string;
  publicKeyPath: string;
  sellerId?: string;
}

/** An app with, optionally, the app private key that signs refunds, queries and closes. */
export interface AlipayAccount extends AlipayConfig {
  appPrivateKeyPath?: string;
}

/** Undefined when no Alipay variable is set: the env shorthand names no app. */
export function loadAlipayConfig(env: NodeJS.ProcessEnv = process.env): AlipayConfig | undefined {
  const vars = validateEnv(AlipayEnv, env);
  if (vars.ALIPAY_APP_ID === undefined && vars.ALIPAY_PUBLIC_KEY_PATH === undefined) return undefined;
  requireAll('Alipay', { ...vars }, ['ALIPAY_APP_ID', 'ALIPAY_PUBLIC_KEY_PATH']);
  return { appId: vars.ALIPAY_APP_ID!, publicKeyPath: vars.ALIPAY_PUBLIC_KEY_PATH!, sellerId: vars.ALIPAY_SELLER_ID };
}

/** The apps: PAYMENT_ACCOUNTS_FILE's, or the one the environment variables describe (or none). */
export function loadAlipayAccounts(env: NodeJS.ProcessEnv = process.env): AlipayAccount[] {
  const fromFile = readAccountsSection(env, alipayAccounts);
  if (fromFile) {
    refuseBesideFile(env, [
      'ALIPAY_APP_ID',
      'ALIPAY_PUBLIC_KEY_PATH',
      'ALIPAY_SELLER_ID',
      'ALIPAY_APP_PRIVATE_KEY_PATH',
    ]);
    return fromFile;
  }
  const shorthand = loadAlipayConfig(env);
  const appPrivateKeyPath = validateEnv(AlipayApiEnv, env).ALIPAY_APP_PRIVATE_KEY_PATH;
  return shorthand ? [{ ...shorthand, appPrivateKeyPath }] : [];
}

/** Validates every Alipay variable and its apps; the error names each bad one. */
export function loadAlipayOptions(env: NodeJS.ProcessEnv = process.env): AlipayOptions {
  return {
    gatewayUrl: validateEnv(AlipayApiEnv, env).ALIPAY_GATEWAY_URL ?? 'https://openapi.alipay.com/gateway.do',
    accounts: loadAlipayAccounts(env),
    notifyMaxAgeSeconds: loadAlipayNotifyMaxAgeSeconds(env),
  };
}
