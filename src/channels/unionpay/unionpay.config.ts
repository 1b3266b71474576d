import { IsIn, IsOptional, IsString, Matches } from 'class-validator';
import { ConfigurationError, requireAll, validateEnv } from '../../platform/config/env-validation';
import { readAccountsSection, refuseBesideFile } from '../accounts-file';
import { HttpUrl } from '../channel-calls.config';
import { SingleValue } from '../single-value';
import { unionpayAccounts } from './unionpay.accounts';

/** The merchant's own variables: the shorthand for one merchant, refused beside PAYMENT_ACCOUNTS_FILE. */
class UnionpayMerchantEnv {
  @IsOptional()
  @Matches(/^[0-9A-Za-z]{15}$/, { message: 'UNIONPAY_MER_ID must be 15 letters or digits' })
  UNIONPAY_MER_ID?: string;

  @IsOptional()
  @SingleValue()
  UNIONPAY_SIGN_CERT_PATH?: string;

  @IsOptional()
  @IsString()
  UNIONPAY_SIGN_CERT_PASSWORD?: string;
}

/** What every UnionPay merchant shares: UnionPay's certificate chain and its gateway. */
class UnionpayEnv {
  @IsOptional()
  @SingleValue()
  UNIONPAY_ROOT_CERT_PATH?: string;

  @IsOptional()
  @SingleValue()
  UNIONPAY_MIDDLE_CERT_PATH?: string;

  @IsOptional()
  @IsIn(['true', 'false'], { message: 'UNIONPAY_VALIDATE_CN must be true or false' })
  UNIONPAY_VALIDATE_CN?: string;

  @IsOptional()
  @HttpUrl('UNIONPAY_GATEWAY_URL')
  UNIONPAY_GATEWAY_URL?: string;

  @IsOptional()
  @HttpUrl('UNIONPAY_FILE_TRANSFER_URL')
  UNIONPAY_FILE_TRANSFER_URL?: string;

  @IsOptional()
  @HttpUrl('UNIONPAY_BACK_URL')
  UNIONPAY_BACK_URL?: string;
}

/** A merchant's signing certificate: a PKCS#12 file and its password. */
export interface SignCertFile {
  path: string;
  password: string;
}

/** One UnionPay merchant (merId), with the signing certificate its API calls need. */
export interface UnionpayAccount {
  merId: string;
  signCert?: SignCertFile;
}

export interface UnionpayOptions {
  accounts: UnionpayAccount[];
  /** UnionPay's root and middle (intermediate) certificates: every signPubKeyCert must chain to them. */
  rootCertPath?: string;
  middleCertPath?: string;
  /** Off only for UnionPay's test environment, whose certificates are not issued to 中国银联股份有限公司. */
  validateCn: boolean;
  /** The gateway's base URL: /gateway/api/backTransReq.do and /gateway/api/queryTrans.do. */
  gatewayUrl: string;
  /** fileTransfer's address (a host of its own at UnionPay). */
  fileTransferUrl: string;
  /** Where UnionPay posts refund results (backUrl): this service's POST /notify/unionpay. */
  backUrl?: string;
}

const PRODUCTION_GATEWAY = 'https://gateway.95516.com';
const PRODUCTION_FILE_TRANSFER = 'https://filedownload.95516.com/';

/** The merchants: PAYMENT_ACCOUNTS_FILE's, or the one UNIONPAY_MER_ID describes (or none). */
export function loadUnionpayAccounts(env: NodeJS.ProcessEnv = process.env): UnionpayAccount[] {
  const fromFile = readAccountsSection(env, unionpayAccounts);
  if (fromFile) {
    refuseBesideFile(env, ['UNIONPAY_MER_ID', 'UNIONPAY_SIGN_CERT_PATH', 'UNIONPAY_SIGN_CERT_PASSWORD']);
    return fromFile;
  }
  const vars = validateEnv(UnionpayMerchantEnv, env);
  if (vars.UNIONPAY_MER_ID === undefined) {
    if (vars.UNIONPAY_SIGN_CERT_PATH !== undefined) {
      throw new ConfigurationError('Invalid configuration: UNIONPAY_SIGN_CERT_PATH is set without UNIONPAY_MER_ID');
    }
    return [];
  }
  const signCert =
    vars.UNIONPAY_SIGN_CERT_PATH === undefined
      ? undefined
      : { path: vars.UNIONPAY_SIGN_CERT_PATH, password: vars.UNIONPAY_SIGN_CERT_PASSWORD ?? '' };
  return [{ merId: vars.UNIONPAY_MER_ID, signCert }];
}

/** Validates every UnionPay variable and its merchants; the error names each bad one. */
export function loadUnionpayOptions(env: NodeJS.ProcessEnv = process.env): UnionpayOptions {
  const vars = validateEnv(UnionpayEnv, env);
  const accounts = loadUnionpayAccounts(env);
  if (accounts.length > 0) {
    requireAll('UnionPay', { ...vars }, ['UNIONPAY_ROOT_CERT_PATH', 'UNIONPAY_MIDDLE_CERT_PATH']);
  }
  const gatewayUrl = (vars.UNIONPAY_GATEWAY_URL ?? PRODUCTION_GATEWAY).replace(/\/+$/, '');
  if (vars.UNIONPAY_VALIDATE_CN === 'false' && isProductionGateway(gatewayUrl)) {
    throw new ConfigurationError(
      `Invalid configuration: UNIONPAY_VALIDATE_CN=false is for UnionPay's test environment only, and UNIONPAY_GATEWAY_URL is production's (${gatewayUrl})`,
    );
  }
  return {
    accounts,
    rootCertPath: vars.UNIONPAY_ROOT_CERT_PATH,
    middleCertPath: vars.UNIONPAY_MIDDLE_CERT_PATH,
    validateCn: vars.UNIONPAY_VALIDATE_CN !== 'false',
    gatewayUrl,
    fileTransferUrl: vars.UNIONPAY_FILE_TRANSFER_URL ?? PRODUCTION_FILE_TRANSFER,
    backUrl: vars.UNIONPAY_BACK_URL,
  };
}

/** UnionPay's production hosts (gateway.95516.com and its kin), as opposed to gateway.test.95516.com. */
function isProductionGateway(url: string): boolean {
  const host = new URL(url).hostname;
  return (host === '95516.com' || host.endsWith('.95516.com')) && !host.includes('.test.');
}
