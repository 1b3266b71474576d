import { registerAs } from '@nestjs/config';
import { IsOptional, IsString, Length, Matches } from 'class-validator';
import { loadRefundConfig } from '../../config/refund.config';
import { requireAll, validateEnv } from '../../config/validate-env';
import { readAccountsFile, refuseBesideFile } from '../accounts-file';
import { SingleValue } from '../single-value';

class WechatpayEnv {
  @IsOptional()
  @SingleValue()
  WECHATPAY_MCHID?: string;

  /** Deprecated spelling of WECHATPAY_APPIDS with one value. */
  @IsOptional()
  @SingleValue()
  WECHATPAY_APPID?: string;

  @IsOptional()
  @IsString()
  WECHATPAY_APPIDS?: string;

  @IsOptional()
  @Length(32, 32, { message: 'WECHATPAY_APIV3_KEY must be exactly 32 characters (AES-256 key)' })
  WECHATPAY_APIV3_KEY?: string;

  @IsOptional()
  @Matches(/^PUB_KEY_ID_\w+$/, { message: 'WECHATPAY_PUBLIC_KEY_ID must start with PUB_KEY_ID_' })
  WECHATPAY_PUBLIC_KEY_ID?: string;

  @IsOptional()
  @SingleValue()
  WECHATPAY_PUBLIC_KEY_PATH?: string;

  @IsOptional()
  @IsString()
  WECHATPAY_PLATFORM_CERT_PATHS?: string;
}

/** One WeChat Pay merchant account (mchid) as notifications see it. */
export interface WechatpayConfig {
  mchid: string;
  /** The app ids (app, mini program, official account) whose payments are ours; empty: any. */
  appids: string[];
  apiV3Key: string;
  /** Platform public key mode: the key id WeChat sends as Wechatpay-Serial. */
  publicKey?: { id: string; path: string };
  /** Platform certificate mode; several at once during rotation. */
  platformCertPaths: string[];
}

/** An account with, optionally, the merchant API key that signs refunds, queries and closes. */
export interface WechatpayAccount extends WechatpayConfig {
  merchantPrivateKeyPath?: string;
  merchantSerialNo?: string;
}

/** Undefined when no WeChat Pay variable is set: the env shorthand names no account. */
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
    appids: [...new Set([...splitList(vars.WECHATPAY_APPIDS), ...splitList(vars.WECHATPAY_APPID)])],
    apiV3Key: vars.WECHATPAY_APIV3_KEY!,
    publicKey: vars.WECHATPAY_PUBLIC_KEY_ID
      ? { id: vars.WECHATPAY_PUBLIC_KEY_ID, path: vars.WECHATPAY_PUBLIC_KEY_PATH! }
      : undefined,
    platformCertPaths: splitList(vars.WECHATPAY_PLATFORM_CERT_PATHS),
  };
}

/** The accounts: PAYMENT_ACCOUNTS_FILE's, or the one the environment variables describe (or none). */
export function loadWechatpayAccounts(env: NodeJS.ProcessEnv = process.env): WechatpayAccount[] {
  const file = readAccountsFile(env);
  if (file) {
    refuseBesideFile(env, ACCOUNT_VARIABLES);
    return file.wechatpay;
  }
  const shorthand = loadWechatpayConfig(env);
  const { merchantPrivateKeyPath, merchantSerialNo } = loadRefundConfig(env).wechatpay;
  return shorthand ? [{ ...shorthand, merchantPrivateKeyPath, merchantSerialNo }] : [];
}

/** The variables that describe the one account of the shorthand. */
const ACCOUNT_VARIABLES = [
  'WECHATPAY_MCHID',
  'WECHATPAY_APPID',
  'WECHATPAY_APPIDS',
  'WECHATPAY_APIV3_KEY',
  'WECHATPAY_PUBLIC_KEY_ID',
  'WECHATPAY_PUBLIC_KEY_PATH',
  'WECHATPAY_PLATFORM_CERT_PATHS',
  'WECHATPAY_MERCHANT_PRIVATE_KEY_PATH',
  'WECHATPAY_MERCHANT_SERIAL_NO',
];

function splitList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
}

export const wechatpayConfig = registerAs('wechatpay', () => ({ accounts: loadWechatpayAccounts() }));
