import { ArrayNotEmpty, ArrayUnique, IsArray, IsBoolean, IsOptional, IsString, Matches } from 'class-validator';
import { accountsFileError, AccountsSection } from '../accounts-file';
import type { AlipayAccount } from './alipay.config';

class AlipayAccountEntry {
  @Matches(/^\d+$/, { message: '$property must be digits' })
  appId: string;

  @IsOptional()
  @Matches(/^\d+$/, { message: '$property must be digits' })
  sellerId?: string;

  /** Public key mode. */
  @IsOptional()
  @IsString()
  alipayPublicKeyPath?: string;

  /** Certificate mode: one or more alipayCertPublicKey_RSA2.crt, the root bundle, the app's certificate. */
  @IsOptional()
  @IsArray()
  @ArrayNotEmpty()
  @ArrayUnique()
  @IsString({ each: true })
  alipayPublicCertPaths?: string[];

  @IsOptional()
  @IsString()
  alipayRootCertPath?: string;

  @IsOptional()
  @IsString()
  appCertPath?: string;

  /** false only for Alipay's sandbox, whose certificates are not issued under the root bundle. */
  @IsOptional()
  @IsBoolean()
  validateCertChain?: boolean;

  @IsOptional()
  @IsString()
  appPrivateKeyPath?: string;
}

/** The "alipay" list of PAYMENT_ACCOUNTS_FILE: one entry per app id. */
export const alipayAccounts: AccountsSection<AlipayAccountEntry, AlipayAccount> = {
  key: 'alipay',
  schema: AlipayAccountEntry,
  idField: 'appId',
  toAccount(entry, where) {
    const certMode = [entry.alipayPublicCertPaths, entry.alipayRootCertPath, entry.appCertPath].some(
      (v) => v !== undefined,
    );
    if (certMode && entry.alipayPublicKeyPath !== undefined) {
      throw accountsFileError(
        `${where} has alipayPublicKeyPath (public key mode) and certificate paths (certificate mode); choose one`,
      );
    }
    if (!certMode && entry.alipayPublicKeyPath === undefined) {
      throw accountsFileError(
        `${where}.alipayPublicKeyPath is missing (public key mode), or alipayPublicCertPaths and alipayRootCertPath (certificate mode)`,
      );
    }
    if (certMode && (!entry.alipayPublicCertPaths || !entry.alipayRootCertPath)) {
      throw accountsFileError(`${where} needs alipayPublicCertPaths and alipayRootCertPath together`);
    }
    const base = { appId: entry.appId, sellerId: entry.sellerId, appPrivateKeyPath: entry.appPrivateKeyPath };
    if (!certMode) return { ...base, publicKeyPath: entry.alipayPublicKeyPath };
    return {
      ...base,
      certificates: {
        publicCertPaths: entry.alipayPublicCertPaths!,
        rootCertPath: entry.alipayRootCertPath!,
        appCertPath: entry.appCertPath,
        validateChain: entry.validateCertChain !== false,
      },
    };
  },
};
