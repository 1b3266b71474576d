import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { ConfigurationError, requireAll, validateEnv } from '../../platform/config/env-validation';
import { readAccountsSection, refuseBesideFile } from '../accounts-file';
import { HttpUrl } from '../channel-calls.config';
import { SingleValue } from '../single-value';
import { alipayAccounts } from './alipay.accounts';
import { AlipayCertPaths, loadAlipayCertMode } from './alipay.certificates';

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

  /** Certificate mode: comma-separated, several while Alipay rotates its certificate. */
  @IsOptional()
  @IsString()
  ALIPAY_PUBLIC_CERT_PATHS?: string;

  @IsOptional()
  @SingleValue()
  ALIPAY_ROOT_CERT_PATH?: string;

  @IsOptional()
  @SingleValue()
  ALIPAY_APP_CERT_PATH?: string;

  /** Off only for Alipay's sandbox, whose certificates are not issued under the root bundle. */
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'ALIPAY_VALIDATE_CERT_CHAIN must be true or false' })
  ALIPAY_VALIDATE_CERT_CHAIN?: string;
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

/** Not per app, so it may stand beside PAYMENT_ACCOUNTS_FILE. */
class AlipaySellerCheckEnv {
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'ALIPAY_SELLER_CHECK_WAIVED must be true or false' })
  ALIPAY_SELLER_CHECK_WAIVED?: string;
}

/**
 * Alipay's guide asks merchants to check seller_id: an app without one is refused at start, unless
 * the operator explicitly waives the check (ALIPAY_SELLER_CHECK_WAIVED=true, named on the start line).
 */
export function refuseUncheckedSellers(accounts: readonly AlipayAccount[], waived: boolean): void {
  const unchecked = accounts.find((account) => !account.sellerId);
  if (unchecked === undefined || waived) return;
  throw new ConfigurationError(
    `Invalid Alipay configuration: app_id ${unchecked.appId} has no seller id, so a notification naming another seller would be taken; set ALIPAY_SELLER_ID (or sellerId in PAYMENT_ACCOUNTS_FILE), or ALIPAY_SELLER_CHECK_WAIVED=true to accept any seller`,
  );
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
  /** ALIPAY_SELLER_CHECK_WAIVED=true: apps without a seller id take notifications naming any seller. */
  sellerCheckWaived?: true;
}

/** One Alipay app (app_id) as notifications see it: public key mode or certificate mode, one of the two. */
export interface AlipayConfig {
  appId: string;
  /** Public key mode: the bare Alipay public key. */
  publicKeyPath?: string;
  /**
   * A platform key the merchant directory activated, verifying beside publicKeyPath's during its
   * overlap window (never configured: ChannelKeyFiles sets it, see withDirectoryKeys).
   */
  nextPublicKeyPath?: string;
  /** Certificate mode (公钥证书). */
  certificates?: AlipayCertPaths & { validateChain: boolean };
  sellerId?: string;
}

/** The variables of the two modes, for the message that refuses both or neither. */
const PUBLIC_KEY_MODE = 'ALIPAY_PUBLIC_KEY_PATH';
const CERT_MODE = ['ALIPAY_PUBLIC_CERT_PATHS', 'ALIPAY_ROOT_CERT_PATH'];

/** An app with, optionally, the app private key that signs refunds, queries and closes. */
export interface AlipayAccount extends AlipayConfig {
  appPrivateKeyPath?: string;
}

/** Undefined when no Alipay variable is set: the env shorthand names no app. */
export function loadAlipayConfig(env: NodeJS.ProcessEnv = process.env): AlipayConfig | undefined {
  const vars = validateEnv(AlipayEnv, env);
  const certVars = [vars.ALIPAY_PUBLIC_CERT_PATHS, vars.ALIPAY_ROOT_CERT_PATH, vars.ALIPAY_APP_CERT_PATH];
  const certMode = certVars.some((v) => v !== undefined);
  if (vars.ALIPAY_APP_ID === undefined && vars.ALIPAY_PUBLIC_KEY_PATH === undefined && !certMode) return undefined;
  if (certMode && vars.ALIPAY_PUBLIC_KEY_PATH !== undefined) {
    throw new ConfigurationError(
      `Invalid Alipay configuration: ${PUBLIC_KEY_MODE} (public key mode) and ALIPAY_*_CERT_PATH(S) (certificate mode) are both set; choose one`,
    );
  }
  if (!certMode && vars.ALIPAY_VALIDATE_CERT_CHAIN !== undefined) {
    throw new ConfigurationError(
      'ALIPAY_VALIDATE_CERT_CHAIN applies to certificate mode (ALIPAY_PUBLIC_CERT_PATHS) only',
    );
  }
  requireAll('Alipay', { ...vars }, ['ALIPAY_APP_ID', ...(certMode ? CERT_MODE : [PUBLIC_KEY_MODE])]);
  const base = { appId: vars.ALIPAY_APP_ID!, sellerId: vars.ALIPAY_SELLER_ID };
  if (!certMode) return { ...base, publicKeyPath: vars.ALIPAY_PUBLIC_KEY_PATH! };
  return {
    ...base,
    certificates: {
      publicCertPaths: splitList(vars.ALIPAY_PUBLIC_CERT_PATHS),
      rootCertPath: vars.ALIPAY_ROOT_CERT_PATH!,
      appCertPath: vars.ALIPAY_APP_CERT_PATH,
      validateChain: vars.ALIPAY_VALIDATE_CERT_CHAIN !== 'false',
    },
  };
}

function splitList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
}

/** The apps: PAYMENT_ACCOUNTS_FILE's, or the one the environment variables describe (or none). */
export function loadAlipayAccounts(env: NodeJS.ProcessEnv = process.env): AlipayAccount[] {
  const fromFile = readAccountsSection(env, alipayAccounts);
  if (fromFile) {
    refuseBesideFile(env, [
      'ALIPAY_APP_ID',
      'ALIPAY_PUBLIC_KEY_PATH',
      'ALIPAY_PUBLIC_CERT_PATHS',
      'ALIPAY_ROOT_CERT_PATH',
      'ALIPAY_APP_CERT_PATH',
      'ALIPAY_VALIDATE_CERT_CHAIN',
      'ALIPAY_SELLER_ID',
      'ALIPAY_APP_PRIVATE_KEY_PATH',
    ]);
    return fromFile;
  }
  const shorthand = loadAlipayConfig(env);
  const appPrivateKeyPath = validateEnv(AlipayApiEnv, env).ALIPAY_APP_PRIVATE_KEY_PATH;
  return shorthand ? [{ ...shorthand, appPrivateKeyPath }] : [];
}

/**
 * Validates every Alipay variable and its apps; the error names each bad one. Certificates are read and
 * checked here too (expiry, chain to the root bundle), so that a refused one is reported before anything starts.
 */
export function loadAlipayOptions(env: NodeJS.ProcessEnv = process.env): AlipayOptions {
  const accounts = loadAlipayAccounts(env);
  const sellerCheckWaived = validateEnv(AlipaySellerCheckEnv, env).ALIPAY_SELLER_CHECK_WAIVED === 'true';
  refuseUncheckedSellers(accounts, sellerCheckWaived);
  const now = new Date();
  for (const { certificates } of accounts) if (certificates) loadAlipayCertMode(certificates, now);
  return {
    gatewayUrl: validateEnv(AlipayApiEnv, env).ALIPAY_GATEWAY_URL ?? 'https://openapi.alipay.com/gateway.do',
    accounts,
    notifyMaxAgeSeconds: loadAlipayNotifyMaxAgeSeconds(env),
    ...(sellerCheckWaived ? { sellerCheckWaived } : {}),
  };
}
