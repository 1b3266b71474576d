import { Type } from 'class-transformer';
import { ArrayUnique, IsArray, IsOptional, IsString, Length, Matches, ValidateNested } from 'class-validator';
import { accountsFileError, AccountsSection } from '../accounts-file';
import type { WechatpayAccount } from './wechatpay.config';
import { readSubAppids, readSubMchids } from './wechatpay.partner';

const SERIAL = /^[0-9A-Fa-f]{8,64}$/;

class PlatformPublicKeyEntry {
  @Matches(/^PUB_KEY_ID_\w+$/, { message: '$property must start with PUB_KEY_ID_' })
  id: string;

  @IsString()
  path: string;
}

class WechatpayAccountEntry {
  @Matches(/^\d{1,32}$/, { message: '$property must be the digits of a mchid' })
  mchid: string;

  @IsOptional()
  @IsArray()
  @ArrayUnique()
  @Matches(/^\w{1,32}$/, { each: true, message: '$property must be app ids (letters and digits)' })
  appids?: string[];

  @IsOptional()
  @Length(32, 32, { message: '$property must be exactly 32 characters (AES-256 key)' })
  apiV3Key?: string;

  @IsOptional()
  @Length(32, 32, { message: '$property must be exactly 32 characters (the APIv2 API key)' })
  apiV2Key?: string;

  /** The APIv3 key's file, in place of apiV3Key: re-read when it changes on disk. */
  @IsOptional()
  @IsString()
  apiV3KeyPath?: string;

  /** The APIv2 key's file, in place of apiV2Key. */
  @IsOptional()
  @IsString()
  apiV2KeyPath?: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => PlatformPublicKeyEntry)
  platformPublicKey?: PlatformPublicKeyEntry;

  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  platformCertPaths?: string[];

  @IsOptional()
  @IsString()
  merchantPrivateKeyPath?: string;

  @IsOptional()
  @Matches(SERIAL, { message: '$property must be the certificate serial in hex' })
  merchantSerialNo?: string;

  /** Service-provider (partner) mode: the sub-merchants; mchid is then the sp_mchid. */
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  subMchids?: string[];

  @IsOptional()
  @IsString()
  apiV2CertPath?: string;

  @IsOptional()
  @IsString()
  apiV2CertPassword?: string;
}

/** The "wechatpay" list of PAYMENT_ACCOUNTS_FILE: one entry per mchid. */
export const wechatpayAccounts: AccountsSection<WechatpayAccountEntry, WechatpayAccount> = {
  key: 'wechatpay',
  schema: WechatpayAccountEntry,
  idField: 'mchid',
  toAccount(entry, where) {
    for (const [key, path] of [
      ['apiV3Key', 'apiV3KeyPath'],
      ['apiV2Key', 'apiV2KeyPath'],
    ] as const) {
      if (entry[key] !== undefined && entry[path] !== undefined) {
        throw accountsFileError(`${where} has ${key} and ${path} (set one of them)`);
      }
    }
    const v3Key = entry.apiV3Key ?? entry.apiV3KeyPath;
    const v2Key = entry.apiV2Key ?? entry.apiV2KeyPath;
    const v3Set = v3Key !== undefined || entry.platformPublicKey || entry.platformCertPaths?.length;
    // An APIv2-only entry (apiV2Key, nothing of APIv3) is complete without them.
    if (v3Set || v2Key === undefined) {
      if (v3Key === undefined) throw accountsFileError(`${where} needs apiV3Key (or only apiV2Key)`);
      if (!entry.platformPublicKey && !entry.platformCertPaths?.length) {
        throw accountsFileError(`${where} needs platformPublicKey or platformCertPaths`);
      }
    }
    if (!entry.merchantPrivateKeyPath !== !entry.merchantSerialNo) {
      throw accountsFileError(`${where} needs merchantPrivateKeyPath and merchantSerialNo together`);
    }
    return {
      mchid: entry.mchid,
      appids: entry.appids ?? [],
      apiV3Key: entry.apiV3Key,
      apiV2Key: entry.apiV2Key,
      ...(entry.apiV3KeyPath !== undefined ? { apiV3KeyPath: entry.apiV3KeyPath } : {}),
      ...(entry.apiV2KeyPath !== undefined ? { apiV2KeyPath: entry.apiV2KeyPath } : {}),
      publicKey: entry.platformPublicKey && { id: entry.platformPublicKey.id, path: entry.platformPublicKey.path },
      platformCertPaths: entry.platformCertPaths ?? [],
      merchantPrivateKeyPath: entry.merchantPrivateKeyPath,
      merchantSerialNo: entry.merchantSerialNo?.toUpperCase(),
      subMchids: readSubMchidsOf(entry, where),
      subAppids: readSubAppids(entry.subMchids ?? []),
      apiV2CertPath: entry.apiV2CertPath,
      apiV2CertPassword: entry.apiV2CertPassword,
    };
  },
};

function readSubMchidsOf(entry: WechatpayAccountEntry, where: string): string[] {
  try {
    return readSubMchids(entry.subMchids ?? [], entry.mchid, `${where}.subMchids`);
  } catch (error) {
    throw accountsFileError((error as Error).message.replace(/^Invalid configuration:\s*/, ''));
  }
}
