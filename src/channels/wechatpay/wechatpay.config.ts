import { IsOptional, IsString, Length, Matches } from 'class-validator';
import { ConfigurationError, requireAll, validateEnv } from '../../platform/config/env-validation';
import { readAccountsSection, refuseBesideFile } from '../accounts-file';
import { HttpUrl } from '../channel-calls.config';
import { SingleValue } from '../single-value';
import { wechatpayAccounts } from './wechatpay.accounts';
import { readSubAppids, readSubMchids } from './wechatpay.partner';

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

  /** The APIv3 key's file form: re-read when it changes on disk (ChannelKeyFiles). */
  @IsOptional()
  @SingleValue()
  WECHATPAY_APIV3_KEY_PATH?: string;

  @IsOptional()
  @Matches(/^PUB_KEY_ID_\w+$/, { message: 'WECHATPAY_PUBLIC_KEY_ID must start with PUB_KEY_ID_' })
  WECHATPAY_PUBLIC_KEY_ID?: string;

  @IsOptional()
  @SingleValue()
  WECHATPAY_PUBLIC_KEY_PATH?: string;

  @IsOptional()
  @IsString()
  WECHATPAY_PLATFORM_CERT_PATHS?: string;

  /** Service-provider (partner) mode: the sub-merchants; WECHATPAY_MCHID is then the sp_mchid. */
  @IsOptional()
  @IsString()
  WECHATPAY_SUB_MCHIDS?: string;

  @IsOptional()
  @Length(32, 32, { message: 'WECHATPAY_APIV2_KEY must be exactly 32 characters (the APIv2 API key)' })
  WECHATPAY_APIV2_KEY?: string;

  /** The APIv2 key's file form: re-read when it changes on disk (ChannelKeyFiles). */
  @IsOptional()
  @SingleValue()
  WECHATPAY_APIV2_KEY_PATH?: string;
}

/** The API's settings; the merchant key's two variables describe the shorthand's account. */
class WechatpayApiEnv {
  @IsOptional()
  @HttpUrl('WECHATPAY_API_BASE_URL')
  WECHATPAY_API_BASE_URL?: string;

  @IsOptional()
  @IsString()
  WECHATPAY_MERCHANT_PRIVATE_KEY_PATH?: string;

  @IsOptional()
  @Matches(/^[0-9A-Fa-f]{8,64}$/, { message: 'WECHATPAY_MERCHANT_SERIAL_NO must be the certificate serial in hex' })
  WECHATPAY_MERCHANT_SERIAL_NO?: string;

  @IsOptional()
  @HttpUrl('WECHATPAY_REFUND_NOTIFY_URL')
  WECHATPAY_REFUND_NOTIFY_URL?: string;

  @IsOptional()
  @SingleValue()
  WECHATPAY_APIV2_CERT_PATH?: string;

  @IsOptional()
  @IsString()
  WECHATPAY_APIV2_CERT_PASSWORD?: string;

  @IsOptional()
  @SingleValue()
  WECHATPAY_APIV2_CA_PATH?: string;
}

export interface WechatpayApiOptions {
  baseUrl: string;
  /** Where WeChat Pay sends refund notifications; unset: the one configured in the merchant platform. */
  refundNotifyUrl?: string;
  /** Extra CA certificates (PEM) the APIv2 server's certificate may chain to: a test platform's. */
  apiV2CaPath?: string;
}

/** Everything the WeChat Pay adapter is built from. */
export interface WechatpayOptions {
  accounts: WechatpayAccount[];
  api: WechatpayApiOptions;
}

/** One WeChat Pay merchant account (mchid) as notifications see it. */
export interface WechatpayConfig {
  mchid: string;
  /** The app ids (app, mini program, official account) whose payments are ours; empty: any. */
  appids: string[];
  /** Absent on an APIv2-only account (apiV2Key set). */
  apiV3Key?: string;
  /**
   * The APIv3 key's file (in place of apiV3Key): the channel's build reads it into apiV3Key, and
   * ChannelKeyFiles watches it as it does the account's other key files.
   */
  apiV3KeyPath?: string;
  /** The APIv2 API key: signs the account's XML notifications (POST /notify/wechatpay-v2) and v2 API calls. */
  apiV2Key?: string;
  /** The APIv2 key's file (in place of apiV2Key), read and watched as apiV3KeyPath is. */
  apiV2KeyPath?: string;
  /** Platform public key mode: the key id WeChat sends as Wechatpay-Serial. */
  publicKey?: { id: string; path: string };
  /**
   * A platform public key the merchant directory activated, with its own id, verifying beside
   * publicKey during its overlap window (never configured: ChannelKeyFiles sets it).
   */
  nextPublicKey?: { id: string; path: string };
  /** Platform certificate mode; several at once during rotation. */
  platformCertPaths: string[];
  /** Service-provider (partner) mode: the sub_mchids it collects for; empty or absent: a direct merchant. */
  subMchids?: string[];
  /** The sub-merchants configured with their own app (`sub_mchid:sub_appid`): sub_appid is checked. */
  subAppids?: Record<string, string>;
}

/** An account with, optionally, the merchant API key that signs refunds, queries and closes. */
export interface WechatpayAccount extends WechatpayConfig {
  merchantPrivateKeyPath?: string;
  merchantSerialNo?: string;
  /** APIv2's apiclient_cert.p12, for its refund API (mutual TLS); its password is the mchid unless set. */
  apiV2CertPath?: string;
  apiV2CertPassword?: string;
}

/** Undefined when no WeChat Pay variable is set: the env shorthand names no account. */
export function loadWechatpayConfig(env: NodeJS.ProcessEnv = process.env): WechatpayConfig | undefined {
  const vars = validateEnv(WechatpayEnv, env);
  const v3Key = onlyOneOf(vars, 'WECHATPAY_APIV3_KEY', 'WECHATPAY_APIV3_KEY_PATH');
  const v2Key = onlyOneOf(vars, 'WECHATPAY_APIV2_KEY', 'WECHATPAY_APIV2_KEY_PATH');
  const keyVars = [vars.WECHATPAY_PUBLIC_KEY_PATH, vars.WECHATPAY_PLATFORM_CERT_PATHS];
  const v3Set = [v3Key, vars.WECHATPAY_PUBLIC_KEY_ID, ...keyVars].some((v) => v !== undefined);
  if (!v3Set && vars.WECHATPAY_MCHID === undefined && v2Key === undefined && vars.WECHATPAY_SUB_MCHIDS === undefined)
    return undefined;

  // An APIv2-only account (WECHATPAY_APIV2_KEY, no APIv3 variable) is complete without the APIv3 ones.
  const v2Only = !v3Set && v2Key !== undefined;
  requireAll(
    'WeChat Pay',
    { ...vars, WECHATPAY_APIV3_KEY: v3Key },
    v2Only ? ['WECHATPAY_MCHID'] : ['WECHATPAY_MCHID', 'WECHATPAY_APIV3_KEY'],
  );
  if (!v2Only && keyVars.every((v) => v === undefined)) {
    requireAll('WeChat Pay', { ...vars }, ['WECHATPAY_PUBLIC_KEY_PATH']);
  }
  if (vars.WECHATPAY_PUBLIC_KEY_PATH !== undefined || vars.WECHATPAY_PUBLIC_KEY_ID !== undefined) {
    requireAll('WeChat Pay public key mode', { ...vars }, ['WECHATPAY_PUBLIC_KEY_ID', 'WECHATPAY_PUBLIC_KEY_PATH']);
  }
  return {
    mchid: vars.WECHATPAY_MCHID!,
    appids: [...new Set([...splitList(vars.WECHATPAY_APPIDS), ...splitList(vars.WECHATPAY_APPID)])],
    apiV3Key: vars.WECHATPAY_APIV3_KEY,
    ...(vars.WECHATPAY_APIV3_KEY_PATH !== undefined ? { apiV3KeyPath: vars.WECHATPAY_APIV3_KEY_PATH } : {}),
    apiV2Key: vars.WECHATPAY_APIV2_KEY,
    ...(vars.WECHATPAY_APIV2_KEY_PATH !== undefined ? { apiV2KeyPath: vars.WECHATPAY_APIV2_KEY_PATH } : {}),
    publicKey: vars.WECHATPAY_PUBLIC_KEY_ID
      ? { id: vars.WECHATPAY_PUBLIC_KEY_ID, path: vars.WECHATPAY_PUBLIC_KEY_PATH! }
      : undefined,
    platformCertPaths: splitList(vars.WECHATPAY_PLATFORM_CERT_PATHS),
    subMchids: readSubMchids(splitList(vars.WECHATPAY_SUB_MCHIDS), vars.WECHATPAY_MCHID!, 'WECHATPAY_SUB_MCHIDS'),
    subAppids: readSubAppids(splitList(vars.WECHATPAY_SUB_MCHIDS)),
  };
}

/** The accounts: PAYMENT_ACCOUNTS_FILE's, or the one the environment variables describe (or none). */
export function loadWechatpayAccounts(env: NodeJS.ProcessEnv = process.env): WechatpayAccount[] {
  const fromFile = readAccountsSection(env, wechatpayAccounts);
  if (fromFile) {
    refuseBesideFile(env, ACCOUNT_VARIABLES);
    return fromFile;
  }
  const shorthand = loadWechatpayConfig(env);
  const vars = validateEnv(WechatpayApiEnv, env);
  const merchantKey = {
    merchantPrivateKeyPath: vars.WECHATPAY_MERCHANT_PRIVATE_KEY_PATH,
    merchantSerialNo: vars.WECHATPAY_MERCHANT_SERIAL_NO?.toUpperCase(),
    apiV2CertPath: vars.WECHATPAY_APIV2_CERT_PATH,
    apiV2CertPassword: vars.WECHATPAY_APIV2_CERT_PASSWORD,
  };
  return shorthand ? [{ ...shorthand, ...merchantKey }] : [];
}

export function loadWechatpayApiOptions(env: NodeJS.ProcessEnv = process.env): WechatpayApiOptions {
  const vars = validateEnv(WechatpayApiEnv, env);
  return {
    baseUrl: (vars.WECHATPAY_API_BASE_URL ?? 'https://api.mch.weixin.qq.com').replace(/\/+$/, ''),
    refundNotifyUrl: vars.WECHATPAY_REFUND_NOTIFY_URL,
    apiV2CaPath: vars.WECHATPAY_APIV2_CA_PATH,
  };
}

/** Validates every WeChat Pay variable and its accounts; the error names each bad one. */
export function loadWechatpayOptions(env: NodeJS.ProcessEnv = process.env): WechatpayOptions {
  return { api: loadWechatpayApiOptions(env), accounts: loadWechatpayAccounts(env) };
}

/** The variables that describe the one account of the shorthand. */
const ACCOUNT_VARIABLES = [
  'WECHATPAY_MCHID',
  'WECHATPAY_APPID',
  'WECHATPAY_APPIDS',
  'WECHATPAY_APIV3_KEY',
  'WECHATPAY_APIV3_KEY_PATH',
  'WECHATPAY_PUBLIC_KEY_ID',
  'WECHATPAY_PUBLIC_KEY_PATH',
  'WECHATPAY_PLATFORM_CERT_PATHS',
  'WECHATPAY_APIV2_KEY',
  'WECHATPAY_APIV2_KEY_PATH',
  'WECHATPAY_MERCHANT_PRIVATE_KEY_PATH',
  'WECHATPAY_MERCHANT_SERIAL_NO',
  'WECHATPAY_SUB_MCHIDS',
  'WECHATPAY_APIV2_CERT_PATH',
  'WECHATPAY_APIV2_CERT_PASSWORD',
];

/** The key or its file, whichever is set; both set is a start error naming the two. */
function onlyOneOf(vars: WechatpayEnv, key: keyof WechatpayEnv, path: keyof WechatpayEnv): string | undefined {
  if (vars[key] !== undefined && vars[path] !== undefined) {
    throw new ConfigurationError(`Invalid configuration: ${key} and ${path} are both set (set one of them)`);
  }
  return vars[key] ?? vars[path];
}

function splitList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
}
