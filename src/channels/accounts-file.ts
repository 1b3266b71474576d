import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { plainToInstance, Type } from 'class-transformer';
import {
  ArrayUnique,
  IsArray,
  IsOptional,
  IsString,
  Length,
  Matches,
  ValidateNested,
  validateSync,
  ValidationError,
} from 'class-validator';
import { parse as parseYaml } from 'yaml';
import { ConfigurationError } from '../config/validate-env';
import type { AlipayAccount } from './alipay/alipay.config';
import type { WechatpayAccount } from './wechatpay/wechatpay.config';

const VARIABLE = 'PAYMENT_ACCOUNTS_FILE';
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

  @Length(32, 32, { message: '$property must be exactly 32 characters (AES-256 key)' })
  apiV3Key: string;

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
}

class AlipayAccountEntry {
  @Matches(/^\d+$/, { message: '$property must be digits' })
  appId: string;

  @IsOptional()
  @Matches(/^\d+$/, { message: '$property must be digits' })
  sellerId?: string;

  @IsString()
  alipayPublicKeyPath: string;

  @IsOptional()
  @IsString()
  appPrivateKeyPath?: string;
}

export interface PaymentAccounts {
  wechatpay: WechatpayAccount[];
  alipay: AlipayAccount[];
}

/** PAYMENT_ACCOUNTS_FILE (JSON or YAML), validated; undefined when the variable is not set. */
export function readAccountsFile(env: NodeJS.ProcessEnv): PaymentAccounts | undefined {
  const path = env[VARIABLE]?.trim();
  if (!path) return undefined;
  const document = parseDocument(path);
  const wechatpay = entries(document, 'wechatpay', WechatpayAccountEntry).map(toWechatpayAccount);
  const alipay = entries(document, 'alipay', AlipayAccountEntry).map(toAlipayAccount);
  refuseDuplicates(
    'wechatpay',
    wechatpay.map((a) => a.mchid),
    'mchid',
  );
  refuseDuplicates(
    'alipay',
    alipay.map((a) => a.appId),
    'appId',
  );
  return { wechatpay, alipay };
}

/** With the file, every account is in it: a per-account variable beside it is a mistake. */
export function refuseBesideFile(env: NodeJS.ProcessEnv, variables: string[]): void {
  const set = variables.filter((name) => env[name]?.trim());
  if (set.length > 0) {
    throw new ConfigurationError(
      `Invalid configuration: ${set.join(', ')} ${set.length > 1 ? 'are' : 'is'} set beside ${VARIABLE}; put every account in the file`,
    );
  }
}

function fail(message: string): ConfigurationError {
  return new ConfigurationError(`Invalid configuration: ${VARIABLE}: ${message}`);
}

function parseDocument(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw fail(`cannot read ${path} (${(error as Error).message})`);
  }
  let document: unknown;
  try {
    // YAML is a superset of JSON: one parser reads both.
    document = parseYaml(text);
  } catch (error) {
    throw fail(`${path} is neither JSON nor YAML (${(error as Error).message.split('\n')[0]})`);
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw fail(`${path} must hold an object with "wechatpay" and/or "alipay" lists`);
  }
  const unknown = Object.keys(document).filter((k) => k !== 'wechatpay' && k !== 'alipay');
  if (unknown.length > 0) throw fail(`unknown key ${unknown.join(', ')} (expected "wechatpay" and/or "alipay")`);
  return document as Record<string, unknown>;
}

function entries<T extends object>(document: Record<string, unknown>, channel: string, schema: new () => T): T[] {
  const list = document[channel] ?? [];
  if (!Array.isArray(list)) throw fail(`${channel} must be a list of accounts`);
  return list.map((raw: unknown, index) => {
    const where = `${channel}[${index}]`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw fail(`${where} must be an object`);
    const entry = plainToInstance(schema, raw);
    const errors = validateSync(entry, { whitelist: true, forbidNonWhitelisted: true });
    if (errors.length > 0) throw fail(describe(where, errors).join('; '));
    return entry;
  });
}

function describe(where: string, errors: ValidationError[]): string[] {
  return errors.flatMap((e) => [
    ...Object.values(e.constraints ?? {}).map((message) =>
      message.replace(e.property, `${where}.${e.property}`).replace('should not exist', 'is not a known field'),
    ),
    ...describe(`${where}.${e.property}`, e.children ?? []),
  ]);
}

function refuseDuplicates(channel: string, ids: string[], field: string): void {
  const seen = new Set<string>();
  ids.forEach((id, index) => {
    if (seen.has(id)) throw fail(`${channel}[${index}].${field} ${id} appears twice`);
    seen.add(id);
  });
}

function toWechatpayAccount(entry: WechatpayAccountEntry, index: number): WechatpayAccount {
  const where = `wechatpay[${index}]`;
  if (!entry.platformPublicKey && !entry.platformCertPaths?.length) {
    throw fail(`${where} needs platformPublicKey or platformCertPaths`);
  }
  if (!entry.merchantPrivateKeyPath !== !entry.merchantSerialNo) {
    throw fail(`${where} needs merchantPrivateKeyPath and merchantSerialNo together`);
  }
  return {
    mchid: entry.mchid,
    appids: entry.appids ?? [],
    apiV3Key: entry.apiV3Key,
    publicKey: entry.platformPublicKey && { id: entry.platformPublicKey.id, path: entry.platformPublicKey.path },
    platformCertPaths: entry.platformCertPaths ?? [],
    merchantPrivateKeyPath: entry.merchantPrivateKeyPath,
    merchantSerialNo: entry.merchantSerialNo?.toUpperCase(),
  };
}

function toAlipayAccount(entry: AlipayAccountEntry): AlipayAccount {
  return {
    appId: entry.appId,
    sellerId: entry.sellerId,
    publicKeyPath: entry.alipayPublicKeyPath,
    appPrivateKeyPath: entry.appPrivateKeyPath,
  };
}
